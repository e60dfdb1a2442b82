// Which `dotprompt lsp` to start: the project's own environment first, so the server sees the
// project's providers, tools and schemas with the same versions `dotprompt check` uses.
import * as fs from "fs";
import * as path from "path";

/** The workspace's virtualenv executable, for POSIX and Windows layouts. */
export function venvExecutable(folder: string): string | undefined {
  const candidates = [
    path.join(folder, ".venv", "bin", "dotprompt"),
    path.join(folder, ".venv", "Scripts", "dotprompt.exe"),
  ];
  return candidates.find((candidate) => fs.existsSync(candidate));
}

/** The command line: `.venv/bin/dotprompt lsp`, else the `dotprompt.serverCommand` setting, else `dotprompt lsp`. */
export function serverCommand(folder: string | undefined, configured: readonly string[]): string[] {
  const local = folder ? venvExecutable(folder) : undefined;
  if (local) {
    return [local, "lsp"];
  }
  if (configured.length > 0) {
    return [...configured];
  }
  return ["dotprompt", "lsp"];
}
