import type { Command } from "commander";

type Register = (program: Command) => void;

/**
 * One line per command. Each module exports `register(program)`; it is imported only when its
 * command runs (or for `--help`), so `tcod check` never loads the runtime. A module may also export
 * `direct(args)`: the command's action for the arguments after its name when they are plain enough
 * to need no parsing (undefined otherwise), run by bin/cli.ts without setting up commander.
 */
export type Commands = Record<string, () => Promise<{ register: Register; direct?: (args: string[]) => (() => void) | undefined }>>;

export const COMMANDS: Commands = {
  check: () => import("./check.js"),
  compile: () => import("./compile.js"),
  explain: () => import("./explain.js"),
  plot: () => import("./plot.js"),
  export: () => import("./export.js"),
  import: () => import("./import.js"),
  run: () => import("./run.js"),
  compare: () => import("./compare.js"),
  metrics: () => import("./metrics.js"),
  fmt: () => import("./fmt.js"),
  lsp: () => import("./lsp.js"),
};

export async function registerCommands(program: Command, argv: string[], commands: Commands): Promise<void> {
  const name = argv.find((a) => !a.startsWith("-"));
  // `tcod --version` needs no command; `tcod --help` (or an unknown command) lists them all.
  if (!name && argv.some((a) => a === "-V" || a === "--version")) return;
  const wanted = name && name in commands ? [name] : Object.keys(commands);
  for (const n of wanted) (await commands[n]!()).register(program);
  // `--json` is the same contract for every command (bin/json-output.ts); the language server speaks
  // JSON-RPC on stdio instead.
  for (const c of program.commands) {
    if (c.name() !== "lsp" && !c.options.some((o) => o.long === "--json")) c.option("--json", "machine-readable output: JSON lines, the last one the command's result");
  }
}
