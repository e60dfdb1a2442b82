// Makes docs/editors/vscode-highlighting.png: a .prompt file coloured by this extension's grammar
// (syntaxes/dotprompt.tmLanguage.json, with the YAML grammar for the frontmatter) in VS Code's
// Dark+ theme, through shiki (the same TextMate engine and theme files VS Code uses), photographed
// by headless chromium. Run from editors/vscode: `node scripts/screenshot.mjs [FILE.prompt]`.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createHighlighter } from "shiki";

const here = resolve(fileURLToPath(import.meta.url), "..", "..");
const source = readFileSync(process.argv[2] ?? join(here, "tests", "snap", "story.prompt"), "utf8");
const grammar = JSON.parse(readFileSync(join(here, "syntaxes", "dotprompt.tmLanguage.json"), "utf8"));
const highlighter = await createHighlighter({
  themes: ["dark-plus"],
  langs: ["yaml", { ...grammar, name: "dotprompt", embeddedLangs: ["yaml"] }],
});
const code = highlighter.codeToHtml(source.trimEnd(), { lang: "dotprompt", theme: "dark-plus" });
const page = `<!doctype html><meta charset=utf-8><style>
  body { margin: 0; background: #1e1e1e; }
  pre { margin: 0; padding: 14px 18px; font: 15px/1.45 "DejaVu Sans Mono", monospace; }
</style>${code}`;
const dir = mkdtempSync(join(tmpdir(), "dotprompt-shot-"));
writeFileSync(join(dir, "page.html"), page);
const out = resolve(here, "..", "..", "docs", "editors", "vscode-highlighting.png");
const lines = source.trimEnd().split("\n").length;
execFileSync("chromium", ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
  `--window-size=820,${Math.ceil(lines * 15 * 1.45) + 30}`, `--screenshot=${out}`, `file://${join(dir, "page.html")}`],
  { stdio: "ignore" });
console.log(`wrote ${out}`);
