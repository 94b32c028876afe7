/**
 * The tcod extension: the TextMate grammar and language configuration are declared in package.json;
 * this starts the language client, which runs `tcod lsp` (found in the workspace, or on the PATH).
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { workspace, window, type ExtensionContext } from "vscode";
import { LanguageClient, TransportKind, type Executable, type LanguageClientOptions, type ServerOptions } from "vscode-languageclient/node";

let client: LanguageClient | undefined;

/**
 * The V8 flags of the server's process, as bin/tcod passes them to `tcod lsp` (tcod's
 * lsp/node-flags.ts says why; a test keeps the two lists alike).
 */
const NODE_FLAGS = ["--min-semi-space-size=16", "--initial-old-space-size=64", "--heap-growing-percent=50"];

/** The command that runs `tcod lsp` for a workspace folder. */
export function serverCommand(folder: string | undefined, configured: string[]): Executable {
  if (configured.length > 0) return { command: configured[0]!, args: configured.slice(1), transport: TransportKind.stdio };
  for (let dir = folder; dir; dir = dirname(dir)) {
    // The package's Node.js launcher, run by Node.js with the server's flags (npm's bin shims pass
    // none, and on Windows Node.js will not start npm's .cmd shim without a shell).
    const installed = join(dir, "node_modules", "tcod", "bin", "tcod.mjs");
    if (existsSync(installed)) return { command: "node", args: [...NODE_FLAGS, installed, "lsp", "--stdio"], transport: TransportKind.stdio, options: { cwd: folder } };
    // A checkout of tcod itself (its examples/ opened in the editor).
    const own = join(dir, "bin", "tcod.mjs");
    if (existsSync(own) && isTcodPackage(join(dir, "package.json"))) return { command: "node", args: [...NODE_FLAGS, own, "lsp", "--stdio"], transport: TransportKind.stdio, options: { cwd: folder } };
    if (dirname(dir) === dir) break;
  }
  // (On Windows the command on the PATH is npm's tcod.cmd, which only a shell starts.)
  if (process.platform === "win32") return { command: "tcod.cmd", args: ["lsp", "--stdio"], transport: TransportKind.stdio, options: { shell: true } };
  return { command: "tcod", args: ["lsp", "--stdio"], transport: TransportKind.stdio };
}

function isTcodPackage(pkg: string): boolean {
  try {
    return (JSON.parse(readFileSync(pkg, "utf8")) as { name?: string }).name === "tcod";
  } catch {
    return false;
  }
}

export async function activate(context: ExtensionContext): Promise<void> {
  const folder = workspace.workspaceFolders?.[0]?.uri.fsPath;
  const configured = workspace.getConfiguration("tcod").get<string[]>("server.command", []);
  const run = serverCommand(folder, configured);
  const serverOptions: ServerOptions = { run, debug: run };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file", language: "tcod" }],
    // What imports resolve to: .tcod modules, TypeScript extensions, package manifests (npm curricula).
    synchronize: { fileEvents: workspace.createFileSystemWatcher("**/{*.tcod,*.ts,*.mts,package.json}") },
  };
  client = new LanguageClient("tcod", "tcod", serverOptions, clientOptions);
  try {
    await client.start();
  } catch (e) {
    void window.showErrorMessage(`tcod: could not start the language server (${run.command} ${(run.args ?? []).join(" ")}): ${(e as Error).message}. Set "tcod.server.command".`);
  }
  context.subscriptions.push({ dispose: () => void client?.stop() });
}

export async function deactivate(): Promise<void> {
  await client?.stop();
}
