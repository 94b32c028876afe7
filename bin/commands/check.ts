import type { Command } from "commander";
import { checkFiles } from "../../compiler/index.js";
import { EXIT_OK, EXIT_USER } from "../exit.js";
import { printDiagnostics } from "../report-diagnostics.js";
import { result } from "../json-output.js";
import { MAX_POINTS_FLAG, parseMaxPoints } from "../sweep.js";

export function register(program: Command): void {
  program.command("check")
    .description("Check .tcod files: syntax, names, types, units, binding-time levels, ranges.")
    .argument("<files...>", ".tcod files")
    .option("--json", "diagnostics as JSON lines, then the result line")
    .option(...MAX_POINTS_FLAG)
    .action(run);
}

function run(files: string[], o: { json?: boolean; maxPoints?: string }): void {
  const r = checkFiles(files, parseMaxPoints(o.maxPoints));
  printDiagnostics(r, !!o.json);
  if (!o.json && r.ok) process.stderr.write(`ok: ${files.length} file(s), ${r.plans.length} plan(s)\n`);
  result({ files: files.length, plans: r.plans.map((p) => p.plan.name) });
  process.exitCode = r.ok ? EXIT_OK : EXIT_USER;
}

/**
 * `tcod check` run without commander (bin/cli.ts `main`) when its arguments are only files (none
 * starting with `-`, at least one) and `--json`, in any order: what commander would call the action
 * with. Anything else (another option, `--help`, `--`, no file) is left to commander, errors included.
 */
export function direct(args: string[]): (() => void) | undefined {
  const files = args.filter((a) => a !== "--json");
  if (files.length === 0 || files.some((a) => a === "" || a.startsWith("-"))) return undefined;
  return () => run(files, args.length > files.length ? { json: true } : {});
}
