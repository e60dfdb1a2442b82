// The dotprompt extension: starts `dotprompt lsp` from the project's environment and connects
// VS Code's language client to it. Highlighting is declarative (syntaxes/, package.json).
import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from "vscode-languageclient/node";
import { serverCommand } from "./server-command";

let client: LanguageClient | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  context.subscriptions.push(
    vscode.commands.registerCommand("dotprompt.restartServer", async () => {
      await stop();
      await start(context);
    }),
  );
  await start(context);
}

export async function deactivate(): Promise<void> {
  await stop();
}

async function start(context: vscode.ExtensionContext): Promise<void> {
  const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
  const configured = vscode.workspace.getConfiguration("dotprompt").get<string[]>("serverCommand", []);
  const [command, ...args] = serverCommand(folder, configured);
  const serverOptions: ServerOptions = {
    command,
    args,
    transport: TransportKind.stdio,
    options: folder ? { cwd: folder } : undefined,
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [
      { scheme: "file", language: "dotprompt" },
      { scheme: "file", language: "yaml", pattern: "**/*.test.yaml" },
    ],
    synchronize: {
      // A partial, a tool module, a schema or the project's settings changed on disk: the server
      // re-checks the files that use them.
      fileEvents: vscode.workspace.createFileSystemWatcher("**/{*.prompt,*.test.yaml,*.py,*.json,pyproject.toml}"),
    },
    outputChannelName: "dotprompt",
  };
  client = new LanguageClient("dotprompt", "dotprompt", serverOptions, clientOptions);
  try {
    await client.start();
  } catch (error) {
    const shown = [command, ...args].join(" ");
    void vscode.window.showErrorMessage(
      `dotprompt: could not start the language server (${shown}): ${String(error)}. ` +
        "Install it with `pip install 'dotprompt-toolkit[lsp]'` in the project's .venv, or set dotprompt.serverCommand.",
    );
  }
  context.subscriptions.push({ dispose: () => void stop() });
}

async function stop(): Promise<void> {
  const running = client;
  client = undefined;
  if (running) {
    await running.stop();
  }
}
