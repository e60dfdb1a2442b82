// Prompts: the folder as a tree (namespaces, prompts with their variants, partials), each file's
// `check` diagnostics under it at file:line. The tree comes first; the diagnostics follow when the
// check has run (it compiles every file, the tree needs none).
import { get } from "./api.js";
import { clear, el, encodeRoute } from "./dom.js";

export async function showPrompts(view) {
  const tree = el("div", { id: "tree" });
  const summary = el("p", { class: "muted", id: "check-summary" }, "checking…");
  view.append(el("h1", {}, "Prompts"), summary, tree);
  const refresh = async () => {
    const data = await get("/api/prompts");
    drawTree(tree, data);
    const { diagnostics } = await get("/api/check");
    placeDiagnostics(tree, diagnostics, summary);
  };
  await refresh();
  return refresh;
}

function drawTree(tree, data) {
  clear(tree);
  const byFolder = new Map();
  const folderOf = (name) => (name.includes("/") ? name.slice(0, name.lastIndexOf("/")) : "");
  for (const p of data.prompts) {
    const folder = folderOf(p.name);
    if (!byFolder.has(folder)) byFolder.set(folder, { prompts: new Map(), partials: [] });
    const prompts = byFolder.get(folder).prompts;
    if (!prompts.has(p.name)) prompts.set(p.name, []);
    prompts.get(p.name).push(p);
  }
  for (const partial of data.partials) {
    const folder = folderOf(partial.name);
    if (!byFolder.has(folder)) byFolder.set(folder, { prompts: new Map(), partials: [] });
    byFolder.get(folder).partials.push(partial);
  }
  const fragment = document.createDocumentFragment();
  for (const folder of [...byFolder.keys()].sort()) {
    const { prompts, partials } = byFolder.get(folder);
    const list = el("ul", { class: "prompts" });
    for (const [name, files] of prompts) {
      const base = files.find((f) => !f.variant);
      const item = el("li", { class: "prompt", "data-name": name },
        el("a", { href: encodeRoute("prompt", ...name.split("/")) + (base ? "" : `?variant=${encodeURIComponent(files[0].variant)}`) },
          name.slice(folder ? folder.length + 1 : 0)),
        el("ul", { class: "diagnostics", "data-field": base ? base.path : "" }));
      const variants = files.filter((f) => f.variant);
      if (variants.length) {
        const vlist = el("ul", { class: "variants" });
        for (const v of variants) {
          vlist.append(el("li", {}, el("a", { href: encodeRoute("prompt", ...name.split("/")) + `?variant=${encodeURIComponent(v.variant)}` },
            `.${v.variant}`), el("span", { class: "muted" }, " variant"), el("ul", { class: "diagnostics", "data-field": v.path })));
        }
        item.append(vlist);
      }
      list.append(item);
    }
    for (const partial of partials) {
      list.append(el("li", { class: "partial" }, el("span", { class: "tag" }, "partial"), " ",
        partial.name.slice(folder ? folder.length + 1 : 0),
        el("ul", { class: "diagnostics", "data-field": partial.path || "" })));
    }
    fragment.append(el("div", { class: "folder" }, el("h3", {}, folder ? `${folder}/` : `${data.folder}/`), list));
  }
  tree.append(fragment);
  tree.append(el("p", { class: "muted" }, `${data.prompts.length} prompt files, ${data.partials.length} partials, engine ${data.engine}`));
}

function placeDiagnostics(tree, diagnostics, summary) {
  const lists = new Map();
  for (const list of tree.querySelectorAll("ul.diagnostics")) lists.set(list.getAttribute("data-field"), list);
  const other = el("ul", { class: "diagnostics" });
  for (const list of lists.values()) clear(list);
  let errors = 0;
  for (const d of diagnostics) {
    if (d.level === "error") errors += 1;
    const where = `${d.path}${d.line ? `:${d.line}` : ""}${d.column ? `:${d.column}` : ""}`;
    const item = el("li", { class: `diagnostic ${d.level}` }, el("code", {}, where), ` ${d.level}: `, d.message);
    (lists.get(d.path) || other).append(item);
  }
  if (other.childElementCount) tree.append(el("h3", {}, "Other files"), other);
  summary.textContent = `check: ${errors} error(s), ${diagnostics.length - errors} warning(s)`;
}
