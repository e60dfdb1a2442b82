// A run as it happens: the server-sent events of one live run drawn turn by turn. Text grows in
// place (appended to a text node, never the whole string again); the partial output is redrawn at
// most once a frame; a streamed tool call is one block whose arguments grow as its pieces come; a run
// can be cancelled while it runs; the interrupts of a turn are answered together and resume the run
// in the same view.
import { post } from "./api.js";
import { append, el, errorBox, jsonBlock, text } from "./dom.js";
import { groundingPanel } from "./grounding.js";

export function followRun(area, id) {
  const turns = new Map(); // message index -> { text node, output pre, tools list }
  const status = el("p", { class: "muted", id: "run-status" }, "running…");
  const cancel = el("button", { type: "button", id: "cancel" }, "Cancel");
  cancel.addEventListener("click", () => {
    cancel.disabled = true;
    post(`/api/live/${encodeURIComponent(id)}/cancel`, {}).catch((error) => area.append(errorBox(error)));
  });
  area.append(status, cancel);
  let pending = null;
  const source = new EventSource(`/api/live/${encodeURIComponent(id)}/events`);
  const turn = (index, role) => {
    const key = `${index}:${role}`;
    if (!turns.has(key)) {
      const textNode = document.createTextNode("");
      const output = el("pre", { class: "json partial", "data-role": "partial-output" });
      output.hidden = true;
      const tools = el("ul", { class: "tools" });
      const textBlock = el("pre", { class: "text", "data-role": "text" }, textNode);
      textBlock.hidden = true; // until text comes: a turn may be tool calls only
      const box = el("div", { class: `turn ${role}`, "data-name": key }, el("div", { class: "role" }, `${role} (message ${index})`),
        textBlock, output, tools);
      area.insertBefore(box, status);
      turns.set(key, { textNode, textBlock, output, tools, latest: undefined, calls: new Map(), unnamed: null });
    }
    return turns.get(key);
  };
  const drawOutputs = () => {
    pending = null;
    for (const t of turns.values()) {
      if (t.latest !== undefined) {
        t.output.hidden = false;
        t.output.textContent = JSON.stringify(t.latest, null, 2);
        t.latest = undefined;
      }
    }
  };
  source.addEventListener("start", (e) => {
    const data = JSON.parse(e.data);
    status.textContent = `${data.resumed ? "resumed" : "running"} on ${data.model || "the default model"}…`;
  });
  source.addEventListener("chunk", (e) => {
    const data = JSON.parse(e.data);
    const t = turn(data.index, data.role);
    if (data.text) {
      t.textNode.appendData(data.text);
      t.textBlock.hidden = false;
    }
    for (const request of data.toolRequests || []) drawCall(t, request);
    if (data.output !== undefined) {
      t.latest = data.output;
      if (!pending) pending = requestAnimationFrame(drawOutputs);
    }
  });
  source.addEventListener("tool", (e) => {
    const data = JSON.parse(e.data);
    const t = turn(data.index, "tool");
    for (const part of data.parts || []) {
      const response = part.toolResponse || {};
      t.tools.append(el("li", { class: "tool-response" }, "← result of ", el("code", {}, response.name || "?"), " ", jsonBlock(response.output)));
    }
  });
  source.addEventListener("done", (e) => {
    drawOutputs();
    cancel.remove();
    drawDone(area, status, JSON.parse(e.data), id);
  });
  source.addEventListener("cancelled", (e) => {
    drawOutputs();
    cancel.remove();
    status.textContent = `cancelled: ${JSON.parse(e.data).reason}`;
  });
  source.addEventListener("error", (e) => {
    if (!e.data) return; // the connection's own error event: EventSource reconnects by itself
    const data = JSON.parse(e.data);
    cancel.remove();
    status.textContent = "failed";
    area.append(errorBox(data.error));
    if (data.error.text) area.append(el("details", { open: true }, el("summary", {}, "What the model said"), jsonBlock(data.error.text)));
  });
  source.addEventListener("end", () => source.close());
}

// A tool call streams as the same request again and again, its arguments (text) growing: one block
// per call (by its ref; a call without one grows while it is partial), redrawn in place.
function drawCall(t, request) {
  let key = request.ref ? `ref:${request.ref}` : null;
  if (!key) key = t.unnamed && t.unnamed.partial && t.unnamed.name === request.name ? t.unnamed.key : `call:${t.calls.size}`;
  let call = t.calls.get(key);
  if (!call) {
    call = { name: el("code", {}), input: el("pre", { class: "json" }) };
    t.tools.append(el("li", { class: "tool-request" }, "→ tool call ", call.name, " ", call.input));
    t.calls.set(key, call);
  }
  if (!request.ref) t.unnamed = { key, name: request.name, partial: request.partial };
  call.name.textContent = request.name;
  call.input.textContent = callInput(request);
}

function callInput(request) {
  if (typeof request.input !== "string" || !request.partial) return text(request.input);
  try {
    return text(JSON.parse(request.input)); // the arguments are whole: shown as the JSON they are
  } catch {
    return request.input; // still coming
  }
}

function drawDone(area, status, data, id) {
  status.textContent = data.finishReason === "interrupted" ? "interrupted: waiting for your answer" : `finished (${data.finishReason || "no reason given"})`;
  const usage = data.usage || {};
  const cost = data.cost && data.cost.usd !== null && data.cost.usd !== undefined ? `$${data.cost.usd}` : `unknown${data.cost && data.cost.reason ? ` (${data.cost.reason})` : ""}`;
  area.append(el("p", { class: "usage", id: "usage" },
    `usage: ${usage.inputTokens ?? "?"} in, ${usage.outputTokens ?? "?"} out · cost: ${cost}`));
  if (data.finishReason === "interrupted") {
    area.append(interruptPanel(area, data.interrupts || [], id));
    return;
  }
  area.append(el("div", { class: "final" },
    el("h3", {}, "Output ", data.validated ? el("span", { class: "ok", id: "validated" }, "✓ validated against the output schema") : null),
    jsonBlock(data.output, { id: "final-output" })));
  for (const repair of data.repairs || []) area.append(el("p", { class: "muted" }, `repaired: ${repair}`));
  if (data.grounding) area.append(groundingPanel(data.grounding, id));
}

// Every interrupt of the turn is answered (its JSON) or restarted before the run resumes: the loop
// cannot go on with one of them unresolved. Each button records its choice; the last one resumes.
function interruptPanel(area, interrupts, id) {
  const panel = el("div", { class: "interrupts", id: "interrupts" });
  const several = interrupts.length > 1;
  const note = el("p", { class: "muted", id: "interrupts-note" },
    several ? `The run stopped on ${interrupts.length} tool requests: answer or restart each; it resumes after the last.` : null);
  panel.append(note);
  const decided = new Map(); // interrupt number -> { kind: "respond" | "restart", entry }
  const resume = async () => {
    const body = { respond: [], restart: [] };
    for (const { kind, entry } of decided.values()) body[kind].push(entry);
    panel.remove();
    try {
      const next = await post(`/api/live/${encodeURIComponent(id)}/resume`, body);
      followRun(area, next.id);
    } catch (error) {
      area.append(errorBox(error));
    }
  };
  interrupts.forEach((part, number) => {
    const request = part.toolRequest;
    const answer = el("textarea", { rows: 2, class: "answer", "aria-label": `answer for ${request.name}` });
    answer.value = "true";
    const chosen = el("p", { class: "muted chosen" });
    const box = el("div", { class: "interrupt", "data-name": request.name });
    const decide = (kind) => {
      let entry = { name: request.name, ref: request.ref };
      if (kind === "respond") {
        try {
          entry = { ...entry, output: JSON.parse(answer.value) };
        } catch (error) {
          box.append(errorBox({ type: "answer", message: `not JSON: ${error.message}` }));
          return;
        }
      }
      decided.set(number, { kind, entry });
      chosen.textContent = kind === "respond" ? "✓ answered" : "✓ to run again";
      if (decided.size === interrupts.length) resume();
      else note.textContent = `${decided.size} of ${interrupts.length} answered: answer or restart the others to resume.`;
    };
    append(box, [el("p", {}, "The tool ", el("code", {}, request.name), " stopped for a human with input:"), jsonBlock(request.input),
      part.metadata && part.metadata.interrupt !== true ? jsonBlock(part.metadata.interrupt) : null,
      el("label", {}, "Answer (JSON) ", answer),
      el("button", { type: "button", class: "primary approve", onclick: () => decide("respond") }, several ? "Answer" : "Answer and resume"), " ",
      el("button", { type: "button", class: "restart", onclick: () => decide("restart") }, "Run the tool again"), chosen]);
    panel.append(box);
  });
  return panel;
}
