import type { Command } from "commander";
import { writeSync } from "node:fs";
import { checkFiles } from "../../compiler/index.js";
import { EXIT_OK, EXIT_USER } from "../exit.js";
import { collect, printDiagnostics } from "../report-diagnostics.js";
import { result } from "../json-output.js";
import { curriculumFlag } from "../curriculum-arg.js";
import { MAX_POINTS_FLAG, parseMaxPoints } from "../sweep.js";

export function register(program: Command): void {
  program.command("check")
    .description("Check .tcod files: syntax, names, types, units, binding-time levels, ranges.")
    .argument("<files...>", ".tcod files")
    .option("--set <target=value>", "override a curriculum field or a let in every file, as `tcod run` would (repeatable)", collect, [])
    .option("--curriculum <name>", "check only this curriculum")
    .option("--json", "diagnostics as JSON lines, then the result line")
    .option(...MAX_POINTS_FLAG)
    .action(run);
}

function run(files: string[], o: { json?: boolean; maxPoints?: string; set?: string[]; curriculum?: string }): void {
  const r = checkFiles(files, {
    ...parseMaxPoints(o.maxPoints),
    ...(o.set?.length ? { overrides: o.set } : {}), ...(o.curriculum !== undefined ? { curriculum: curriculumFlag(files[0]!, o.curriculum) } : {}),
  });
  printDiagnostics(r, !!o.json, writeErr);
  if (!o.json && r.ok) writeErr(`ok: ${files.length} file(s), ${r.plans.length} plan(s)\n`);
  result({ files: files.length, plans: r.plans.map((p) => p.plan.name) });
  process.exitCode = r.ok ? EXIT_OK : EXIT_USER;
}

/** Whether stderr's output has gone through `process.stderr` (then all of it does, in order). */
let streamed = false;

/**
 * Writes `text` to stderr, straight to file descriptor 2 while nothing has been left to
 * `process.stderr` (all of a check's stderr output comes through here). Creating `process.stderr`
 * costs ~4.5 ms at a cold start when stderr is a pipe (Node.js loads `net` for its socket), as it is
 * under an editor, CI, `2>&1 | …` and bench/cold-check.bench.mjs; the bytes written are the same.
 * What writeSync does not take (EAGAIN on a non-blocking pipe, EPIPE, a closed descriptor) goes to
 * `process.stderr`, as before, and so does every later write.
 */
function writeErr(text: string): void {
  if (streamed) {
    process.stderr.write(text);
    return;
  }
  const bytes = Buffer.from(text);
  let done = 0;
  try {
    let n: number;
    do {
      n = writeSync(2, bytes, done);
      done += n;
    } while (done < bytes.length && n !== 0);
  } catch {
    // left to process.stderr below
  }
  if (done < bytes.length) {
    streamed = true;
    process.stderr.write(bytes.subarray(done));
  }
}

/**
 * For the start-up snapshot's build (bin/snapshot-main.ts): calls, with nothing to do, the functions
 * a check runs besides the compiler's, so that their bytecode is in the snapshot and not compiled at
 * each start. Prints nothing.
 */
export function warmUp(): void {
  // writeErr(""): a write of zero bytes to fd 2, which compiles fs.writeSync too.
  parseMaxPoints(undefined);
  printDiagnostics({ diagnostics: [], sources: new Map() }, false, writeErr);
  writeErr("");
  direct([]);
  result({});
}

/**
 * `tcod check` run without commander (bin/cli.ts `main`) when its arguments are only files (none
 * starting with `-`, at least one) and `--json`, in any order: what commander would call the action
 * with. Anything else (another option, `--help`, `--`, no file, a blank one) is left to commander, errors included.
 */
export function direct(args: string[]): (() => void) | undefined {
  const files = args.filter((a) => a !== "--json");
  // An empty or blank path is left to commander's path rules too (bin/flag-rules.ts).
  if (files.length === 0 || files.some((a) => a.trim() === "" || a.startsWith("-"))) return undefined;
  return () => run(files, args.length > files.length ? { json: true } : {});
}
