// Grounding: where each value of an output is in the input. The input texts the spans point into are
// shown with each value's spans marked (hover: the value's path and status), then every value with its
// status; an ungrounded value is marked as not in the input. Offsets are Python's (code points), so
// texts are cut by code point, never by UTF-16 unit. Everything is written as text (dom.js).
import { el } from "./dom.js";

const MAX_SPANS = 5000; // marks drawn per view: a bound on the work for a huge output

export function groundingView(grounding, sources, id) {
  const fields = Object.entries((grounding && grounding.fields) || {});
  const missing = fields.filter(([, f]) => f.status === "ungrounded");
  const summary = el("p", { class: missing.length ? "grounding-summary bad" : "grounding-summary ok" },
    missing.length ? `${missing.length} of ${fields.length} value(s) not found in the input` : `no value of ${fields.length} missing from the input`);
  const texts = Object.entries(sources || {}).map(([variable, text]) =>
    el("div", { class: "grounding-source" }, el("div", { class: "role" }, variable),
      el("pre", { class: "text grounded-text", "data-name": variable }, highlighted(text, spansIn(fields, variable)))));
  return el("div", { class: "grounding-spans", id },
    summary, ...texts, grounding && grounding.skipped ? el("p", { class: "muted" }, grounding.skipped) : null, valueTable(fields));
}

export function groundingRows(arms) {
  const rows = arms.flatMap((arm) => (arm.rows || []).filter((row) => row.grounding).map((row) => [arm, row]));
  if (!rows.length) return null;
  return el("div", { class: "grounding-rows" }, el("h3", {}, "Grounding per row"),
    rows.map(([arm, row]) => {
      const fields = Object.values(row.grounding.fields || {});
      const missing = fields.filter((f) => f.status === "ungrounded").length;
      return el("details", { class: missing ? "grounding-row bad" : "grounding-row", "data-name": `${arm.arm}/${row.id}` },
        el("summary", {}, `row ${row.id} (${arm.arm}): `, missing ? `${missing} of ${fields.length} value(s) not found in the input` : `every value found or not looked for (${fields.length})`),
        groundingView(row.grounding, row.grounding_sources, null));
    }));
}

function spansIn(fields, variable) {
  const out = [];
  for (const [path, field] of fields) {
    for (const span of field.spans || []) {
      if (span.variable === variable && out.length < MAX_SPANS) out.push({ start: span.start, end: span.end, path, status: field.status });
    }
  }
  return out;
}

const RANK = { exact: 0, normalised: 1, fuzzy: 2 }; // a piece several values cover shows its weakest status

function highlighted(text, spans) {
  const chars = Array.from(String(text));
  const cuts = new Set([0, chars.length]);
  const valid = spans.filter((s) => Number.isInteger(s.start) && Number.isInteger(s.end) && s.start >= 0 && s.end <= chars.length && s.start < s.end);
  valid.forEach((s) => { cuts.add(s.start); cuts.add(s.end); });
  const points = [...cuts].sort((a, b) => a - b);
  const out = [];
  for (let i = 0; i + 1 < points.length; i += 1) {
    const [a, b] = [points[i], points[i + 1]];
    const piece = chars.slice(a, b).join("");
    const covering = valid.filter((s) => s.start <= a && s.end >= b);
    if (!covering.length) {
      out.push(piece);
      continue;
    }
    const status = covering.map((s) => s.status).sort((x, y) => (RANK[y] ?? 3) - (RANK[x] ?? 3))[0];
    const paths = [...new Set(covering.map((s) => s.path))];
    out.push(el("mark", { class: `span ${status}`, "data-field": paths.join(" "), title: `${paths.join(", ")}: ${status}` }, piece));
  }
  return out;
}

function valueTable(fields) {
  const body = el("tbody");
  for (const [path, field] of fields) {
    const where = (field.spans || []).map((s) => `${s.variable}[${s.start}:${s.end}] ${JSON.stringify(s.text)}`).join(", ");
    const detail = where || field.reason || (field.status === "ungrounded" ? "✗ not in the input" : "");
    body.append(el("tr", { class: `grounding-value ${field.status}`, "data-field": path },
      el("td", {}, el("code", {}, path)), el("td", {}, JSON.stringify(field.value)),
      el("td", { class: "status" }, String(field.status || "").replace("_", " ") + (field.score !== undefined && field.score !== null ? ` (${field.score})` : "")),
      el("td", {}, detail)));
  }
  return el("table", { class: "grounding-values" },
    el("thead", {}, el("tr", {}, ["value", "as written", "status", "where"].map((h) => el("th", {}, h)))), body);
}
