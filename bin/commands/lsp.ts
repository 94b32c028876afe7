import { Option, type Command } from "commander";
import { UsageError } from "../../plan/errors.js";

export function register(program: Command): void {
  program.command("lsp")
    .description("Run the tcod language server over stdio (for editors; see editors/vscode).")
    .option("--stdio", "talk over stdin/stdout (the default and only transport)")
    // Language clients (vscode-languageclient among them) pass the editor's process id, so that the
    // server exits with the editor; vscode-languageserver reads it from the command line itself.
    .addOption(new Option("--clientProcessId <pid>", "the editor's process id").hideHelp())
    .action(async (o: { clientProcessId?: string }) => {
      if (o.clientProcessId !== undefined && !/^\d+$/.test(o.clientProcessId)) {
        throw new UsageError(`--clientProcessId ${o.clientProcessId}: expected a process id`, { hint: "Language clients pass it for you; start the server with `tcod lsp --stdio`." });
      }
      const [{ startServer }, lib] = await Promise.all([import("../../lsp/server.js"), import("vscode-languageserver/node")]);
      // A CommonJS package: bundled, its exports are the namespace's default.
      const { createConnection, ProposedFeatures } = (lib as unknown as { default?: typeof lib }).default ?? lib;
      // stdio whether or not --stdio was given (it is the default): the library alone would refuse to
      // start without a transport flag.
      startServer(createConnection(ProposedFeatures.all, process.stdin, process.stdout));
    });
}
