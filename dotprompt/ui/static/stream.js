// A run as it happens: the server-sent events of one live run drawn turn by turn. Text grows in
// place (appended to a text node, never the whole string again); the partial output is redrawn at
// most once a frame; an interrupt offers its answer and resumes in the same view.
import { post } from "./api.js";
import { el, errorBox, jsonBlock } from "./dom.js";
import { groundingPanel } from "./grounding.js";

export function followRun(area, id) {
  const turns = new Map(); // message index -> { text node, output pre, tools list }
  const status = el("p", { class: "muted", id: "run-status" }, "running…");
  area.append(status);
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
      turns.set(key, { textNode, textBlock, output, tools, latest: undefined });
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
    for (const request of data.toolRequests || []) {
      t.tools.append(el("li", { class: "tool-request" }, "→ tool call ", el("code", {}, request.name), " ", jsonBlock(request.input)));
    }
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
    drawDone(area, status, JSON.parse(e.data), id);
  });
  source.addEventListener("error", (e) => {
    if (!e.data) return; // the connection's own error event: EventSource reconnects by itself
    const data = JSON.parse(e.data);
    status.textContent = "failed";
    area.append(errorBox(data.error));
    if (data.error.text) area.append(el("details", { open: true }, el("summary", {}, "What the model said"), jsonBlock(data.error.text)));
  });
  source.addEventListener("end", () => source.close());
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

function interruptPanel(area, interrupts, id) {
  const panel = el("div", { class: "interrupts", id: "interrupts" });
  for (const part of interrupts) {
    const request = part.toolRequest;
    const answer = el("textarea", { rows: 2, class: "answer", "aria-label": `answer for ${request.name}` });
    answer.value = "true";
    const send = async (kind) => {
      let body;
      try {
        body = kind === "restart" ? { restart: [{ name: request.name, ref: request.ref }] }
          : { respond: [{ name: request.name, ref: request.ref, output: JSON.parse(answer.value) }] };
      } catch (error) {
        panel.append(errorBox({ type: "answer", message: `not JSON: ${error.message}` }));
        return;
      }
      panel.remove();
      try {
        const next = await post(`/api/live/${encodeURIComponent(id)}/resume`, body);
        followRun(area, next.id);
      } catch (error) {
        area.append(errorBox(error));
      }
    };
    panel.append(el("div", { class: "interrupt", "data-name": request.name },
      el("p", {}, "The tool ", el("code", {}, request.name), " stopped for a human with input:"), jsonBlock(request.input),
      part.metadata && part.metadata.interrupt !== true ? jsonBlock(part.metadata.interrupt) : null,
      el("label", {}, "Answer (JSON) ", answer),
      el("button", { type: "button", class: "primary approve", onclick: () => send("respond") }, "Answer and resume"), " ",
      el("button", { type: "button", class: "restart", onclick: () => send("restart") }, "Run the tool again")));
  }
  return panel;
}
