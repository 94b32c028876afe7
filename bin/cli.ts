/**
 * The tcod CLI: the only place that knows both the compiler and the runtime.
 * Each command lives in bin/commands/<name>.ts and registers itself on the program.
 */
import { Command } from "commander";
import { registerCommands } from "./commands/index.js";
import { formatUserError, UserError } from "../plan/errors.js";
import { EXIT_INTERNAL, EXIT_USER } from "./exit.js";
import { TCOD_VERSION } from "./version.js";
import { finishJson, jsonError, startJson } from "./json-output.js";

const program = new Command("tcod")
  .description("Curricula for on-policy distillation of multi-turn LLM agents.")
  .version(TCOD_VERSION)
  .showHelpAfterError();

startJson(process.argv.slice(2));
try {
  await registerCommands(program, process.argv.slice(2));
  await program.parseAsync(process.argv);
  finishJson(typeof process.exitCode === "number" ? process.exitCode : 0);
} catch (e) {
  // A user error a command did not report itself: printed with its code and hint, exit 1.
  if (e instanceof UserError) {
    if (!jsonError(e)) console.error(formatUserError(e, "tcod"));
    finishJson(EXIT_USER);
    process.exit(EXIT_USER);
  }
  // Anything else reaching here is a bug.
  console.error(`tcod: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(EXIT_INTERNAL);
}
