// The page: a hash router over four views, and hot reload when the prompt folder changes.
import { getSession } from "./api.js";
import { clear, el, errorBox } from "./dom.js";
import { showPrompts } from "./prompts.js";
import { showPrompt } from "./prompt.js";
import { showRuns, showRun } from "./runs.js";
import { showEvals, showReport } from "./evals.js";

const view = document.getElementById("view");
let current = null; // the shown view's refresh(), called when the folder changes

function parse(hash) {
  const [path, query] = (hash.replace(/^#/, "") || "/").split("?");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { parts, params: new URLSearchParams(query || "") };
}

async function show() {
  const { parts, params } = parse(location.hash);
  const [page, ...rest] = parts;
  for (const id of ["nav-prompts", "nav-runs", "nav-evals"]) document.getElementById(id).classList.remove("active");
  document.getElementById(`nav-${page === "runs" ? "runs" : page === "evals" ? "evals" : "prompts"}`).classList.add("active");
  clear(view);
  try {
    if (page === "prompt") current = await showPrompt(view, rest.join("/"), params.get("variant"));
    else if (page === "runs" && rest.length) current = await showRun(view, rest[0]);
    else if (page === "runs") current = await showRuns(view, params);
    else if (page === "evals" && params.get("path")) current = await showReport(view, params.get("path"));
    else if (page === "evals") current = await showEvals(view);
    else current = await showPrompts(view);
  } catch (error) {
    clear(view).append(errorBox(error));
    current = null;
  }
  view.setAttribute("data-testid", "ready");
}

function watch() {
  const changes = new EventSource("/api/changes");
  changes.addEventListener("changed", async () => {
    document.getElementById("reload-note").textContent = "files changed: reloaded " + new Date().toLocaleTimeString();
    if (current) {
      try { await current(); } catch (error) { view.prepend(errorBox(error)); }
    }
  });
}

async function start() {
  getSession().then((session) => {
    document.getElementById("folder").textContent = `${session.folder} · dotprompt ${session.version}`;
  });
  window.addEventListener("hashchange", () => { view.removeAttribute("data-testid"); show(); });
  await show();
  watch();
}

start().catch((error) => clear(view).append(el("div", {}, errorBox(error))));
