// An input form generated from a prompt's input schema (JSON Schema), defaults filled in, and a
// JSON editor for anything a form cannot express. The JSON editor is the source of truth when it
// is the open tab; otherwise the form is.
import { el } from "./dom.js";

export function inputForm(schema, defaults) {
  const props = schema && schema.type === "object" && schema.properties ? schema.properties : null;
  const required = new Set((schema && schema.required) || []);
  const start = { ...(defaults || {}) };
  const fields = [];
  const form = el("div", { class: "form", id: "input-form" });
  if (props) {
    for (const [name, spec] of Object.entries(props)) {
      const field = makeField(name, spec || {}, start[name] !== undefined ? start[name] : (spec || {}).default, required.has(name));
      fields.push(field);
      form.append(field.row);
    }
  } else {
    form.append(el("p", { class: "muted" }, schema ? "This input schema is not an object of fields: use the JSON editor." : "No input schema: use the JSON editor."));
  }
  const editor = el("textarea", { id: "input-json", rows: 10, spellcheck: false, "aria-label": "input as JSON" });
  editor.value = JSON.stringify(start, null, 2);
  const problem = el("p", { class: "error-text", id: "input-problem" });
  let mode = props ? "form" : "json";
  const formTab = el("button", { type: "button", class: "tab", id: "tab-form" }, "Form");
  const jsonTab = el("button", { type: "button", class: "tab", id: "tab-json" }, "JSON");
  const setMode = (next) => {
    if (next === "json" && mode === "form") editor.value = JSON.stringify(fromForm(), null, 2);
    if (next === "form" && mode === "json") toForm(readJson());
    mode = next;
    form.hidden = mode !== "form";
    editor.hidden = mode !== "json";
    formTab.classList.toggle("active", mode === "form");
    jsonTab.classList.toggle("active", mode === "json");
  };
  formTab.addEventListener("click", () => setMode("form"));
  jsonTab.addEventListener("click", () => setMode("json"));
  const fromForm = () => {
    const out = mode === "json" ? readJson() : {};
    for (const f of fields) {
      const value = f.read();
      if (value !== undefined) out[f.name] = value;
    }
    return out;
  };
  const readJson = () => {
    try {
      problem.textContent = "";
      return JSON.parse(editor.value || "{}");
    } catch (error) {
      problem.textContent = `input JSON: ${error.message}`;
      throw error;
    }
  };
  const toForm = (value) => {
    for (const f of fields) f.write(value && typeof value === "object" ? value[f.name] : undefined);
  };
  const root = el("div", { class: "input" }, el("div", { class: "tabs" }, formTab, jsonTab), form, editor, problem);
  setMode(mode);
  return {
    root,
    value: () => (mode === "json" ? readJson() : fromForm()),
    fill: (value) => { editor.value = JSON.stringify(value, null, 2); toForm(value); },
  };
}

function makeField(name, spec, initial, required) {
  const id = `field-${name}`;
  const type = Array.isArray(spec.type) ? spec.type.find((t) => t !== "null") : spec.type;
  let input;
  let read;
  let write;
  if (Array.isArray(spec.enum)) {
    input = el("select", { id, name });
    if (!required) input.append(el("option", { value: "" }, "—"));
    spec.enum.forEach((option, i) => input.append(el("option", { value: String(i) }, JSON.stringify(option))));
    read = () => (input.value === "" ? undefined : spec.enum[Number(input.value)]);
    write = (v) => { const i = spec.enum.findIndex((o) => JSON.stringify(o) === JSON.stringify(v)); input.value = i < 0 ? "" : String(i); };
  } else if (type === "boolean") {
    input = el("input", { id, name, type: "checkbox" });
    read = () => input.checked;
    write = (v) => { input.checked = Boolean(v); };
  } else if (type === "number" || type === "integer") {
    input = el("input", { id, name, type: "number", step: type === "integer" ? "1" : "any" });
    read = () => (input.value === "" ? undefined : Number(input.value));
    write = (v) => { input.value = v === undefined || v === null ? "" : String(v); };
  } else if (type === "string") {
    input = el("textarea", { id, name, rows: 2 });
    read = () => (input.value === "" && !required ? undefined : input.value);
    write = (v) => { input.value = v === undefined || v === null ? "" : String(v); };
  } else {
    input = el("textarea", { id, name, rows: 3, class: "json-field", placeholder: "JSON" });
    read = () => {
      if (input.value.trim() === "") return undefined;
      try { return JSON.parse(input.value); } catch (error) { throw new Error(`${name}: ${error.message}`); }
    };
    write = (v) => { input.value = v === undefined ? "" : JSON.stringify(v, null, 2); };
  }
  write(initial);
  const label = el("label", { for: id }, name, required ? " *" : "", type ? el("span", { class: "muted" }, ` ${type}`) : null);
  const row = el("div", { class: "field" }, label, input, spec.description ? el("small", { class: "muted" }, spec.description) : null);
  return { name, row, read, write };
}
