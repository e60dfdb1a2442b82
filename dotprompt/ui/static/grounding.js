// Where each value of a run's output was found: a row per value (its status and the spans found).
// A span in a PDF input names its page: a click shows that page as an image with the boxes of every
// value found on it outlined (GET /api/live/{id}/pdf, drawn by the server from the run's own input).
import { el } from "./dom.js";

export function groundingPanel(grounding, runId) {
  const viewer = el("div", { class: "pdf-page", id: "pdf-page" });
  const table = el("table", { class: "grounding-table" },
    el("tr", {}, el("th", {}, "value"), el("th", {}, "status"), el("th", {}, "found in the input")));
  for (const [path, found] of Object.entries(grounding.fields || {})) {
    const spans = (found.spans || []).map((span) => spanCell(span, runId, viewer));
    table.append(el("tr", {}, el("td", {}, el("code", {}, path)), el("td", {}, found.status), el("td", {}, spans)));
  }
  const scans = Object.entries(grounding.pages_without_text || {}).map(([name, pages]) =>
    el("p", { class: "muted" }, `${name}: page(s) ${pages.join(", ")} have no text layer (scanned?); nothing on them can be found`));
  return el("div", { class: "grounding", id: "grounding" }, el("h3", {}, "Grounding"), table, scans, viewer);
}

function spanCell(span, runId, viewer) {
  const label = `${span.variable}[${span.start}:${span.end}] ${JSON.stringify(span.text)}`;
  if (span.page === undefined || span.page === null) return el("div", {}, el("code", {}, label));
  const show = () => showPage(viewer, runId, span.variable, span.page);
  return el("div", {}, el("code", {}, label), " ",
    el("button", { type: "button", class: "page-link", "data-testid": "pdf-page-link", onclick: show }, `page ${span.page}`));
}

function showPage(viewer, runId, variable, page) {
  const image = document.createElement("img"); // src set as a property: a fixed API path, escaped parameters
  image.alt = `${variable}, page ${page}, with the values found there outlined`;
  image.src = `/api/live/${encodeURIComponent(runId)}/pdf?${new URLSearchParams({ variable, page: String(page) })}`;
  viewer.replaceChildren(el("p", { class: "muted" }, `${variable}, page ${page}`), image);
}
