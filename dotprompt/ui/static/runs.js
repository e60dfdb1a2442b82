// Runs: the run log, filtered and searched; one run as its turns, with the request and the reply
// bodies as the log keeps them (redacted), and a way back into its prompt with the same input.
import { get } from "./api.js";
import { append, clear, el, encodeRoute, errorBox, jsonBlock, section, when } from "./dom.js";
import { groundingView } from "./grounding_spans.js";

export async function showRuns(view, params) {
  const q = el("input", { id: "search", type: "search", placeholder: "search every word", value: params.get("q") || "" });
  const prompt = el("input", { id: "filter-prompt", placeholder: "prompt", value: params.get("prompt") || "" });
  const model = el("input", { id: "filter-model", placeholder: "model", value: params.get("model") || "" });
  const status = el("select", { id: "filter-status" }, el("option", { value: "" }, "any status"),
    el("option", { value: "ok" }, "ok"), el("option", { value: "error" }, "error"), el("option", { value: "interrupted" }, "interrupted"));
  status.value = params.get("status") || "";
  const table = el("div", { id: "runs" });
  const go = el("button", { type: "button", id: "filter" }, "Filter");
  const load = async () => {
    clear(table);
    const data = await get("/api/runs", { q: q.value, prompt: prompt.value, model: model.value, status: status.value });
    drawRuns(table, data);
  };
  go.addEventListener("click", () => load().catch((error) => table.append(errorBox(error))));
  q.addEventListener("keydown", (e) => { if (e.key === "Enter") go.click(); });
  view.append(el("h1", {}, "Runs"), el("div", { class: "filters" }, q, prompt, model, status, go), table);
  await load();
  return load;
}

function drawRuns(table, data) {
  if (!data.log) {
    table.append(el("p", { class: "muted" }, "No run log."));
    return;
  }
  const body = el("tbody");
  for (const run of data.runs) {
    body.append(el("tr", { class: run.status },
      el("td", {}, el("a", { href: encodeRoute("runs", String(run.id)) }, `#${run.id}`)),
      el("td", {}, when(run.started)), el("td", {}, run.source), el("td", {}, run.variant ? `${run.prompt}.${run.variant}` : run.prompt || ""),
      el("td", {}, run.model || ""), el("td", {}, run.status), el("td", {}, `${run.input_tokens ?? ""}/${run.output_tokens ?? ""}`),
      el("td", {}, run.cost !== null && run.cost !== undefined ? `$${run.cost}` : ""),
      el("td", {}, run.latency_ms !== null && run.latency_ms !== undefined ? `${Math.round(run.latency_ms)} ms` : ""),
      el("td", { class: "preview" }, run.error || run.preview || "")));
  }
  table.append(el("p", { class: "muted" }, `${data.runs.length} run(s) in ${data.log}${data.indexed ? "" : " (search without FTS5)"}`),
    el("table", { class: "runs" }, el("thead", {}, el("tr", {}, ["run", "started", "source", "prompt", "model", "status", "tokens in/out", "cost", "latency", "output or error"].map((h) => el("th", {}, h)))), body));
}

export async function showRun(view, id) {
  const run = await get(`/api/runs/${encodeURIComponent(id)}`);
  const label = run.variant ? `${run.prompt}.${run.variant}` : run.prompt;
  const replay = el("button", { type: "button", id: "replay" }, "Open in its prompt with this input");
  replay.addEventListener("click", () => {
    sessionStorage.setItem("dotprompt-replay", JSON.stringify(run.input ?? {}));
    location.hash = encodeRoute("prompt", ...String(run.prompt).split("/")) + (run.variant ? `?variant=${encodeURIComponent(run.variant)}` : "");
  });
  const facts = el("dl", { class: "facts" });
  for (const key of ["started", "source", "model", "status", "finish_reason", "input_tokens", "output_tokens", "cost", "latency_ms", "prompt_hash"]) {
    if (run[key] === null || run[key] === undefined) continue;
    facts.append(el("dt", {}, key), el("dd", {}, key === "started" ? when(run.started) : String(run[key])));
  }
  // The conversation sent (a resumed run sends the one it continues), then what the run added.
  const turns = el("div", { class: "messages", id: "run-turns" });
  const sent = (run.request && Array.isArray(run.request.messages)) ? run.request.messages : [];
  sent.forEach((message) => turns.append(messageBox(message, "sent")));
  const added = ((run.response && run.response.messages) || []);
  added.forEach((message, i) => turns.append(messageBox(message, `turn ${i + 1}`)));
  // dom.js's append skips the absent parts (null); the DOM's own would write them as the text "null".
  append(view, [el("h1", {}, `Run #${run.id}: ${label || "(no prompt)"}`),
    run.prompt ? replay : null, facts,
    run.error ? errorBox({ type: run.status === "interrupted" ? "Interrupted (tool requests pending)" : run.error_type, message: run.error }) : null,
    section("Input", jsonBlock(run.input, { id: "run-input" })),
    section("Turns", turns.childElementCount ? turns : el("p", { class: "muted" }, "no messages logged")),
    section("Output", jsonBlock(run.output, { id: "run-output" })),
    run.response && run.response.grounding ? section("Grounding", groundingView(run.response.grounding, run.grounding_sources, "run-grounding")) : null,
    el("details", {}, el("summary", {}, "Request (as the log keeps it)"), jsonBlock(run.request, { id: "run-request" })),
    el("details", {}, el("summary", {}, "Reply (as the log keeps it)"), jsonBlock(run.response, { id: "run-response" })),
    run.context ? el("details", {}, el("summary", {}, "Context"), jsonBlock(run.context)) : null]);
  return null;
}

function messageBox(message, label) {
  const box = el("div", { class: `message ${message.role}` }, el("div", { class: "role" }, `${message.role} · ${label}`));
  for (const part of message.content || []) {
    if (part.text !== undefined) box.append(el("pre", { class: "text" }, part.text));
    else if (part.toolRequest) box.append(el("div", { class: "tool-request" }, "→ tool call ", el("code", {}, part.toolRequest.name), jsonBlock(part.toolRequest.input)));
    else if (part.toolResponse) box.append(el("div", { class: "tool-response" }, "← result of ", el("code", {}, part.toolResponse.name), jsonBlock(part.toolResponse.output)));
    else box.append(jsonBlock(part));
  }
  return box;
}
