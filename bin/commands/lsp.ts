import type { Command } from "commander";

export function register(program: Command): void {
  program.command("lsp")
    .description("Run the tcod language server over stdio (for editors; see editors/vscode).")
    .option("--stdio", "talk over stdin/stdout (the default and only transport)")
    .action(async () => {
      const { startServer } = await import("../../lsp/server.js");
      startServer();
    });
}
