/**
 * The tcod CLI: the only place that knows both the compiler and the runtime.
 * Each command lives in bin/commands/<name>.ts and registers itself on the program.
 */
import { Command } from "commander";
import { registerCommands } from "./commands/index.js";
import { asCliErrors, printCliErrors } from "./errors.js";
import { EXIT_INTERNAL, EXIT_USER } from "./exit.js";

const program = new Command("tcod")
  .description("Curricula for on-policy distillation of multi-turn LLM agents.")
  .version("0.1.0")
  .showHelpAfterError();

try {
  await registerCommands(program, process.argv.slice(2));
  await program.parseAsync(process.argv);
} catch (e) {
  // A user error is a coded message and exit 1; anything else reaching here is a bug.
  const coded = asCliErrors(e);
  if (coded) {
    printCliErrors(process.argv.slice(2).find((a) => !a.startsWith("-")) ?? "", coded);
    process.exit(EXIT_USER);
  }
  console.error(`tcod: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(EXIT_INTERNAL);
}
