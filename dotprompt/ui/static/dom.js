// Building the page. Every value is written as text (text nodes, textContent, setAttribute on a fixed
// set of attributes); nothing here parses markup, so a prompt, input, reply or log field that holds
// `<script>` or a quote shows as those characters. Links are built from '#/' routes only.

const ATTRIBUTES = new Set(["class", "id", "type", "value", "placeholder", "title", "name", "rows", "cols",
  "for", "min", "max", "step", "list", "accept", "disabled", "checked", "selected", "open", "spellcheck",
  "role", "aria-label", "data-name", "data-field", "data-role", "data-testid", "colspan"]);

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "href") {
      node.setAttribute("href", route(value));
    } else if (key.startsWith("on") && typeof value === "function") {
      node.addEventListener(key.slice(2), value);
    } else if (ATTRIBUTES.has(key)) {
      node.setAttribute(key, value === true ? "" : String(value));
    } else {
      throw new Error(`attribute ${key} is not allowed`);
    }
  }
  append(node, children);
  return node;
}

function route(value) {
  const text = String(value);
  if (!text.startsWith("#/")) throw new Error("links go to the page's own routes only");
  return text;
}

export function append(node, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function clear(node) {
  while (node.firstChild) node.firstChild.remove();
  return node;
}

export function text(value) {
  if (value === null || value === undefined) return "";
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

// A JSON value as indented text in a <pre>.
export function jsonBlock(value, attrs = {}) {
  const pre = el("pre", { class: "json", ...attrs });
  pre.textContent = text(value);
  return pre;
}

export function section(title, ...children) {
  return el("section", {}, el("h2", {}, title), ...children);
}

export function errorBox(error) {
  const message = error && error.message ? error.message : String(error);
  return el("div", { class: "error", role: "alert" }, el("strong", {}, (error && error.type) || "Error"), " ", message);
}

export function encodeRoute(...parts) {
  return "#/" + parts.map((p) => encodeURIComponent(p)).join("/");
}

export function when(seconds) {
  if (!seconds) return "";
  return new Date(seconds * 1000).toLocaleString();
}
