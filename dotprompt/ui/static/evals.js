// Evals: a `dotprompt eval --json` report, from the prompt folder or a file picked on this machine
// (read by the browser; it never reaches the server). One table per eval: a row per field, a column
// per arm (F1, wrong/missing/extra, change against the baseline); then every value that was not
// correct, the expected and the predicted side by side, per row and arm.
import { get } from "./api.js";
import { clear, el, encodeRoute, errorBox, section, text } from "./dom.js";
import { groundingRows } from "./grounding_spans.js";

export async function showEvals(view) {
  const { reports } = await get("/api/evals");
  const list = el("ul", { id: "reports" }, reports.map((r) => el("li", {}, el("a", { href: `${encodeRoute("evals")}?path=${encodeURIComponent(r.path)}` }, r.path))));
  const picker = el("input", { type: "file", id: "report-file", accept: ".json,application/json" });
  const shown = el("div", { id: "report" });
  picker.addEventListener("change", async () => {
    clear(shown);
    try {
      drawReport(shown, JSON.parse(await picker.files[0].text()));
    } catch (error) {
      shown.append(errorBox({ type: "report", message: error.message }));
    }
  });
  view.append(el("h1", {}, "Evals"),
    section("Reports in the prompt folder", reports.length ? list : el("p", { class: "muted" }, "none (write one with `dotprompt eval --json FILE`)")),
    section("Open a report", picker), shown);
  return null;
}

export async function showReport(view, path) {
  const report = await get("/api/evals/report", { path });
  view.append(el("h1", {}, "Eval report ", el("code", {}, path)));
  const shown = el("div", { id: "report" });
  drawReport(shown, report);
  view.append(shown);
  return async () => { clear(shown); drawReport(shown, await get("/api/evals/report", { path })); };
}

function drawReport(area, report) {
  if (!report || !Array.isArray(report.evals)) throw new Error("not a `dotprompt eval --json` report (no `evals` list)");
  const groups = new Map();
  for (const verdict of report.evals) {
    if (!groups.has(verdict.eval)) groups.set(verdict.eval, []);
    groups.get(verdict.eval).push(verdict);
  }
  for (const [name, arms] of groups) {
    area.append(el("h2", {}, `${name}: `, arms.every((a) => a.passed) ? el("span", { class: "ok" }, "passed") : el("span", { class: "bad" }, "failed")),
      fieldTable(arms), failures(arms), differences(arms), groundingRows(arms));
  }
}

function fieldTable(arms) {
  const fields = [...new Set(arms.flatMap((a) => Object.keys((a.scores && a.scores.fields) || {})))].sort();
  const head = el("tr", {}, el("th", {}, "field"), el("th", {}, "support"), arms.map((a) => el("th", {}, a.arm)));
  const body = el("tbody");
  const first = arms[0].scores || {};
  body.append(el("tr", { class: "overall" }, el("td", {}, "(overall F1)"), el("td", {}, String((first.overall || {}).support ?? "")),
    arms.map((a) => el("td", {}, cell((a.scores || {}).overall, a, "(overall)", "f1")))));
  body.append(el("tr", { class: "overall" }, el("td", {}, "(exact match)"), el("td", {}, String(first.rows ?? "")),
    arms.map((a) => el("td", {}, number((a.scores || {}).exact_match) + change(a, "(overall)", "exact_match")))));
  for (const field of fields) {
    const support = ((first.fields || {})[field] || {}).support;
    body.append(el("tr", { "data-field": field }, el("td", {}, field), el("td", {}, String(support ?? 0)),
      arms.map((a) => el("td", {}, cell(((a.scores || {}).fields || {})[field], a, field, "f1")))));
  }
  return el("table", { class: "fields" }, el("thead", {}, head), body);
}

function cell(counts, arm, field, metric) {
  if (!counts) return "-";
  let out = number(counts.f1);
  if (field !== "(overall)" && (counts.wrong || counts.missing || counts.extra)) out += ` (${counts.wrong}w ${counts.missing}m ${counts.extra}x)`;
  return out + change(arm, field, metric);
}

function number(value) {
  return typeof value === "number" ? value.toFixed(3) : "-";
}

function change(arm, field, metric) {
  const delta = (arm.deltas || []).find((d) => d.field === field && d.metric === metric);
  if (!delta || typeof delta.now !== "number" || typeof delta.baseline !== "number") return "";
  const diff = delta.now - delta.baseline;
  return Math.abs(diff) < 0.0005 ? " ±0" : ` ${diff > 0 ? "+" : ""}${diff.toFixed(3)}`;
}

function failures(arms) {
  const items = arms.flatMap((a) => (a.failures || []).map((f) => el("li", {}, `${a.arm}: ${f}`)));
  return items.length ? el("ul", { class: "failures" }, items) : el("p", { class: "muted" }, "every gate passed");
}

function differences(arms) {
  const body = el("tbody");
  for (const arm of arms) {
    for (const row of arm.rows || []) {
      for (const field of row.fields || []) {
        body.append(el("tr", { class: field.outcome, "data-field": field.field },
          el("td", {}, String(row.id)), el("td", {}, arm.arm), el("td", {}, field.where || field.field), el("td", {}, field.outcome),
          el("td", {}, el("pre", { class: "value expected" }, text(field.expected))),
          el("td", {}, el("pre", { class: "value predicted" }, text(field.predicted)))));
      }
      for (const problem of row.problems || []) {
        body.append(el("tr", { class: "problem" }, el("td", {}, String(row.id)), el("td", {}, arm.arm), el("td", { colspan: 4 }, problem)));
      }
    }
  }
  if (!body.childElementCount) return el("p", { class: "muted" }, "every value was correct");
  return el("div", {}, el("h3", {}, "Values that were not correct"),
    el("table", { class: "diff", id: "diff" }, el("thead", {}, el("tr", {}, ["row", "arm", "field", "outcome", "expected", "predicted"].map((h) => el("th", {}, h)))), body));
}
