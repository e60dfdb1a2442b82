// One prompt: its file (frontmatter, template, engine), an input form, Render (the messages as
// `dotprompt render --json` gives them, and the body each provider would POST) and Run (streamed).
import { get, getSession, post } from "./api.js";
import { clear, el, encodeRoute, errorBox, jsonBlock, section } from "./dom.js";
import { inputForm } from "./form.js";
import { followRun } from "./stream.js";

export async function showPrompt(view, name, variant) {
  const data = await get("/api/prompt", { name, variant });
  const session = await getSession();
  const title = variant ? `${name}.${variant}` : name;
  const fileArea = el("div", { id: "file" });
  const drawFile = (d) => {
    clear(fileArea);
    if (d.error) fileArea.append(errorBox(d.error));
    fileArea.append(
      el("p", {}, el("code", {}, d.path), d.engine ? [" · engine ", el("strong", { id: "engine" }, d.engine)] : null,
        d.model ? [" · model ", el("code", {}, d.model)] : null),
      el("details", { open: true }, el("summary", {}, "Frontmatter"), jsonBlock(d.frontmatter || {}, { id: "frontmatter" })),
      el("details", { open: true }, el("summary", {}, `Template (${d.engine || "?"}, from line ${d.body_line || "?"})`),
        jsonBlock(d.template !== undefined ? d.template : d.source, { id: "template", class: "source" })),
      el("details", {}, el("summary", {}, "The file as written"), jsonBlock(d.source, { class: "source" })));
  };
  drawFile(data);
  const form = inputForm(data.input_schema, data.default);
  const replay = sessionStorage.getItem("dotprompt-replay");
  if (replay) {
    sessionStorage.removeItem("dotprompt-replay");
    try { form.fill(JSON.parse(replay)); } catch (error) { /* a replay that is not JSON is ignored */ }
  }
  const output = el("div", { id: "render-output" });
  const runArea = el("div", { id: "run-output" });
  const model = el("input", { id: "model", list: "models", value: data.model || "", placeholder: "model, e.g. openai/gpt-4o-mini" });
  const models = el("datalist", { id: "models" }, (session.models || []).map((m) => el("option", { value: m })));
  const context = el("textarea", { id: "context", rows: 2, placeholder: "context as JSON (auth, state…), optional" });
  const readContext = () => (context.value.trim() ? JSON.parse(context.value) : null);
  const renderButton = el("button", { type: "button", id: "render" }, "Render");
  const runButton = el("button", { type: "button", id: "run", class: "primary" }, "Run");
  renderButton.addEventListener("click", async () => {
    clear(output);
    try {
      const result = await post("/api/render", { name, variant, input: form.value(), context: readContext() });
      drawRender(output, result);
    } catch (error) {
      output.append(errorBox(error));
    }
  });
  runButton.addEventListener("click", async () => {
    clear(runArea);
    try {
      const { id } = await post("/api/live", { name, variant, input: form.value(), context: readContext(), model: model.value });
      followRun(runArea, id);
    } catch (error) {
      runArea.append(errorBox(error));
    }
  });
  view.append(
    el("h1", {}, title, el("a", { href: encodeRoute(""), class: "back" }, " ← all prompts")),
    el("div", { class: "columns" },
      el("div", { class: "column" }, section("File", fileArea)),
      el("div", { class: "column" }, section("Input", form.root, el("details", {}, el("summary", {}, "Context"), context),
        el("div", { class: "actions" }, renderButton, " ", model, models, " ", runButton)))),
    section("Render", output),
    section("Run", runArea));
  return async () => drawFile(await get("/api/prompt", { name, variant }));
}

function drawRender(output, result) {
  const rendered = result.rendered;
  const messages = el("div", { class: "messages", id: "messages" });
  for (const message of rendered.messages || []) {
    const box = el("div", { class: `message ${message.role}` }, el("div", { class: "role" }, message.role));
    for (const part of message.content || []) {
      box.append(part.text !== undefined ? el("pre", { class: "text" }, part.text) : jsonBlock(part));
    }
    messages.append(box);
  }
  const wire = el("div", { class: "wire", id: "wire" });
  for (const entry of result.wire || []) {
    wire.append(el("details", { "data-name": entry.model }, el("summary", {}, entry.model),
      entry.error ? errorBox({ type: "no wire body", message: entry.error }) : jsonBlock(entry.body)));
  }
  output.append(messages,
    el("details", {}, el("summary", {}, "As `dotprompt render --json` prints it"), jsonBlock(rendered, { id: "render-json" })),
    el("h3", {}, "Wire body per provider"), wire);
}
