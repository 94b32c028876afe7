/**
 * The tcod CLI: the only place that knows both the compiler and the runtime.
 * Each command lives in bin/commands/<name>.ts and registers itself on the program.
 * Started by bin/cli-main.ts (the bundle dist/tcod.js), or, for `tcod check`, from the start-up
 * snapshot of bin/snapshot-main.ts (see bin/tcod).
 */
import type * as Commander from "commander";
import { registerCommands, type Commands } from "./commands/index.js";
import { formatUserError, UsageError, UserError } from "../plan/errors.js";
import { EXIT_INTERNAL, EXIT_USER } from "./exit.js";
import { TCOD_VERSION } from "./version.js";
import { finishJson, jsonError, jsonMode, startJson } from "./json-output.js";
import { enforceFlagRules } from "./flag-rules.js";

/**
 * Runs the command line `argv` with `commands` (bin/commands/index.ts's COMMANDS, or only `check` in
 * the start-up snapshot). Not a default here: the snapshot's CommonJS bundle includes every module a
 * dynamic import() names, so a reference to COMMANDS would put every command (the runtime, the
 * language server, zod, yaml) in the snapshot's heap, about 1.7 MB more to load at each start.
 */
export async function main(argv: string[], commands: Commands): Promise<void> {
  startJson(argv.slice(2));
  const name = argv.slice(2).find((a) => !a.startsWith("-"));
  const who = name !== undefined && name in commands ? `tcod ${name}` : "tcod";
  // A reader that closes the pipe early (`tcod metrics --csv RUN | head`) has what it wanted: the rest
  // of the output is dropped quietly, as cat and git do, instead of an unhandled EPIPE's stack trace;
  // a run goes on to its end (its run folder is its output). Not for `tcod check`, whose cold start
  // never creates the stdout/stderr streams (bin/commands/check.ts, writeErr).
  if (name !== "check") for (const stream of [process.stdout, process.stderr]) stream.on("error", dropClosedPipe);
  try {
    // `tcod check FILE…` (bin/commands/check.ts `direct`): the action without commander, whose code a
    // start from the snapshot would otherwise compile and run first (bench/results/cold-check.md).
    const direct = name !== undefined && argv[2] === name && name in commands ? (await commands[name]!()).direct?.(argv.slice(3)) : undefined;
    if (direct) direct();
    else await parse(argv, commands, who);
    finishJson(typeof process.exitCode === "number" ? process.exitCode : 0);
  } catch (e) {
    if (commander && e instanceof commander.CommanderError) {
      // --help and --version end this way too, with exit 0; an error was printed by outputError above.
      if (e.exitCode !== 0 && e.code !== "commander.help" && e.code !== "commander.helpDisplayed") {
        jsonError(new UsageError(e.message.replace(/^error: /, ""), { hint: `\`${who} --help\` shows the usage.` }));
      }
      finishJson(e.exitCode);
      process.exit(e.exitCode);
    }
    // A user error a command did not report itself: printed with its code and hint, exit 1.
    if (e instanceof UserError) {
      if (!jsonError(e)) console.error(formatUserError(e, who));
      finishJson(EXIT_USER);
      process.exit(EXIT_USER);
    }
    // Anything else reaching here is a bug.
    console.error(`tcod: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(EXIT_INTERNAL);
  }
}

/**
 * Commander, loaded by the first command line that needs it: a plain `tcod check FILE…` does not, and
 * the start-up snapshot's heap holds neither it nor node:child_process, which it requires.
 */
let commander: typeof Commander | undefined;

/**
 * The command line through commander. One it refuses (a missing argument, an unknown option or
 * command) is a user error like any other: TC7009 with a hint, exit 1, and the result line in --json mode.
 */
async function parse(argv: string[], commands: Commands, who: string): Promise<void> {
  commander ??= await import("commander");
  const program = new commander.Command("tcod")
    .description("Curricula for on-policy distillation of multi-turn LLM agents.")
    .version(TCOD_VERSION)
    .configureOutput({ outputError: (text, write) => { if (!jsonMode()) write(`${who} error ${new UsageError("").code}: ${text.replace(/^error: /, "")}`); } })
    .showHelpAfterError(jsonMode() ? false : "  hint: `tcod --help` lists the commands.")
    .exitOverride();
  await registerCommands(program, argv.slice(2), commands);
  // A single-valued flag given twice, an empty path, a value that is the next flag: TC7009 naming the flag (bin/flag-rules.ts).
  enforceFlagRules(program, argv);
  if (!jsonMode()) for (const c of program.commands) c.showHelpAfterError(`  hint: \`tcod ${c.name()} --help\` shows its arguments and options.`);
  await program.parseAsync(argv);
}

/** A stream error listener: EPIPE (the reader is gone) is dropped; anything else is raised as before. */
function dropClosedPipe(e: NodeJS.ErrnoException): void {
  if (e.code !== "EPIPE") throw e;
}
