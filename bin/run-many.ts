/**
 * The parts of `tcod run` that look at a whole file rather than one plan: `--print-config` (the
 * resolved curriculum of every plan the file compiles to, or of `--curriculum NAME`), `--dry-run`
 * (the points a run would start, with the settings and resolved fields of each) and `--sweep`
 * (run every point, bin/sweep.ts).
 */
import { join, resolve } from "node:path";
import { CompileError, compileFile, type CompiledPlan, type CompileResult } from "../compiler/index.js";
import { didYouMean } from "../compiler/diagnostics/index.js";
import { projectRootOf } from "../compiler/modules.js";
import { UsageError } from "../plan/errors.js";
import { curriculumFlag } from "./curriculum-arg.js";
import { shownValue } from "./flag-rules.js";
import { formatConfig, resolvedFields } from "./print-config.js";
import { printDiagnostics } from "./report-diagnostics.js";
import { checkSweep, defaultSweepDir, parseMaxPoints, runSweep, sweepSummary } from "./sweep.js";
import { checkWandb } from "../runtime/sinks/wandb.js";
import { ensureOutDir } from "./out-path.js";
import { countLog, pointLogPath } from "./point-log.js";
import { result } from "./json-output.js";
import { exitForSignal, signalWord, STOP_SIGNALS, type StopSignal } from "./stop-signals.js";

export interface RunManyFlags {
  out?: string; set: string[]; curriculum?: string; sweep?: boolean; parallel?: string; dryRun?: boolean; printConfig?: boolean; json?: boolean; seed?: number; maxPoints?: string;
  /** No progress lines from a sweep (its summary is still printed). */
  quiet?: boolean;
  /** false: --no-tensorboard, passed on to each point of a sweep. */
  tensorboard?: boolean;
  /** --wandb PROJECT, passed on to each point of a sweep. */
  wandb?: string;
}

export async function runMany(file: string | undefined, o: RunManyFlags): Promise<number> {
  if (!file) throw new UsageError("give the .tcod file to inspect or sweep");
  if (!file.endsWith(".tcod")) throw new UsageError(`${file}: --sweep, --dry-run and --print-config take a .tcod file`, { hint: "A compiled plan is one point already: `tcod run PLAN.json`." });
  const r = compileFile(file, { overrides: o.set, ...curriculumOf(file, o.curriculum), ...parseMaxPoints(o.maxPoints) });
  printDiagnostics(r, false);
  if (!r.ok) throw new CompileError(file, r, true);
  const plans = pick(r, o.curriculum, file);
  // Checked before anything is listed: a dry run says what the run would do, and `tcod run FILE`
  // of several points without --sweep runs none of them.
  const parallel = parseParallel(o.parallel);
  if (o.dryRun && !o.sweep && o.out !== undefined && plans.length > 1) {
    throw new UsageError(`--out ${o.out}: a run folder holds one run, and ${file} compiles to ${plans.length} plans; \`tcod run\` would run none of them`, {
      hint: `Add --sweep to list the points the sweep would run under ${o.out}, or choose one with --curriculum NAME (\`tcod run ${file} --dry-run\` lists their names).`,
    });
  }
  if (o.printConfig || o.dryRun) {
    const out: string[] = [];
    const all = plans.map((c) => ({ c, fields: resolvedFields(c, r.sources) }));
    const json = all.map(({ c, fields }) => ({ point: c.plan.name, curriculum: c.curriculum.name, settings: c.settings, fields }));
    const show = (f: { field: string; value: string; unit?: string }) => `${f.field}: ${f.value}${f.unit ? ` [${f.unit}]` : ""}`;
    if (o.printConfig) for (const { c, fields } of all) out.push(formatConfig(c, fields));
    else {
      // The fields every point shares once, then what each point has of its own.
      const same = (field: string) => new Set(all.map((p) => show(p.fields.find((f) => f.field === field)!))).size === 1;
      const first = all[0]!.fields;
      out.push(`${file}: ${plans.length} point${plans.length === 1 ? "" : "s"}${o.sweep ? ` → ${o.out ?? defaultSweepDir(file)}` : o.out !== undefined ? ` → ${o.out}` : ""}`);
      const run = runSettings(o, parallel);
      if (run.length > 0) out.push(`  the run: ${run.join(", ")}`);
      out.push(`  every point:`, ...first.filter((f) => f.from !== "default" && (all.length === 1 || same(f.field))).map((f) => `      ${show(f)}`));
      if (all.length > 1) {
        for (const { c, fields } of all) {
          out.push(`  ${c.plan.name}`, ...fields.filter((f) => !same(f.field)).map((f) => `      ${show(f)}   (${f.from})`));
        }
      }
    }
    const given = o.dryRun ? {
      ...(o.sweep || o.out !== undefined ? { out: o.out ?? defaultSweepDir(file) } : {}), ...(o.seed !== undefined ? { seed: o.seed } : {}),
      ...(o.parallel !== undefined ? { parallel } : {}), ...(o.wandb !== undefined ? { wandb: o.wandb } : {}), ...(o.tensorboard === false ? { tensorboard: false } : {}),
    } : {};
    if (o.json) result({ file, dryRun: !!o.dryRun, ...given, points: json });
    else process.stdout.write(out.join("\n") + "\n");
    return 0;
  }
  const dir = o.out ?? defaultSweepDir(file);
  // Every point, and what every point's --wandb needs, checked before the folder is made or probed:
  // a refused sweep leaves no new folder, and an existing one as it was (its mtime too).
  const checked = checkSweep({ file, plans, overrides: o.set, dir });
  if (o.wandb !== undefined) await checkWandb();
  ensureOutDir(dir);
  // Ctrl-C, SIGTERM (a scheduler) and SIGHUP (a closed terminal) alike, as for `tcod run`: the signal
  // goes on to each running point (bin/sweep.ts), which finishes its step and checkpoints, and no new
  // point starts; a second signal goes on too, and the points quit at once, without a checkpoint.
  const abort = new AbortController(), quit = new AbortController();
  let stoppedBy: StopSignal | undefined;
  const onSignal = (sig: StopSignal) => {
    if (stoppedBy !== undefined) {
      quit.abort(sig);
      return;
    }
    stoppedBy = sig;
    process.stderr.write(`\n${signalWord(sig)}: each running point finishes its step and checkpoints (Ctrl-C or another signal to quit without a checkpoint); run the same command again to resume\n`);
    abort.abort(sig);
  };
  for (const sig of STOP_SIGNALS) process.on(sig, onSignal);
  try {
    const rec = await runSweep({
      file, plans, overrides: o.set, dir, parallel, ...(o.seed !== undefined ? { seed: o.seed } : {}), cli: process.argv[1]!, pointFlags: pointFlags(o),
      sourceRoot: projectRootOf(resolve(file)), configs: new Map(plans.map((c) => [c.plan.name, formatConfig(c, resolvedFields(c, r.sources))])), log: (l) => { if (!o.json && !o.quiet) process.stdout.write(l + "\n"); }, signal: abort.signal, quit: quit.signal,
    }, checked);
    const failed = rec.points.filter((p) => p.status === "failed").length;
    // Each point with its stderr.log and the warnings and notes in it, where it has one.
    const withLog = () => rec.points.map((p) => {
      const path = pointLogPath(join(dir, p.dir)), counts = countLog(path);
      return counts ? { ...p, stderrLog: { path, ...counts } } : p;
    });
    if (o.json) result({ sweep: resolve(dir), points: withLog() });
    else process.stdout.write(sweepSummary(rec, dir));
    // 128 + the signal's number (130, 143, 129), as `tcod run` exits when a signal stops it.
    return stoppedBy !== undefined ? exitForSignal(stoppedBy) : failed ? 1 : 0;
  } finally {
    for (const sig of STOP_SIGNALS) process.off(sig, onSignal);
  }
}

/** `--parallel N`: the points a sweep runs at once (1 when not given). */
function parseParallel(text: string | undefined): number {
  // Decimal digits only: Number() would also take 0x2, 1e1 and " 2 ".
  const parallel = text === undefined ? 1 : /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(parallel) || parallel < 1 || parallel > 64) {
    throw new UsageError(`--parallel ${shownValue(text ?? "")}: expected a whole number from 1 to 64`, { hint: "The points a sweep runs at once, e.g. --parallel 4 (each point is a `tcod run` process of its own)." });
  }
  return parallel;
}

/** What the flags set of the run a dry run lists, in words (none: the run's defaults). */
function runSettings(o: RunManyFlags, parallel: number): string[] {
  return [
    ...(o.seed !== undefined ? [`seed ${o.seed} (--seed)`] : []),
    ...(o.parallel !== undefined ? [`${parallel} point${parallel === 1 ? "" : "s"} at a time (--parallel)`] : []),
    ...(o.wandb !== undefined ? [`also logged to the W&B project ${o.wandb} (--wandb)`] : []),
    ...(o.tensorboard === false ? ["no TensorBoard event files (--no-tensorboard)"] : []),
  ];
}

/** The flags each point of a sweep is run with, as given to the sweep: its logging. */
function pointFlags(o: RunManyFlags): string[] {
  return [...(o.tensorboard === false ? ["--no-tensorboard"] : []), ...(o.wandb !== undefined ? ["--wandb", o.wandb] : [])];
}

/**
 * What `--curriculum` asks the compiler for: its curriculum alone (of a sweep point's name, the part
 * before `@`), so that a name the file lacks is the compiler's TC2017 at `<--curriculum>`, as in
 * `tcod compile`; a malformed one is refused first (bin/curriculum-arg.ts).
 */
export function curriculumOf(file: string, want: string | undefined): { curriculum?: string } {
  return want === undefined ? {} : { curriculum: curriculumFlag(file, want, { points: true }) };
}

/**
 * The plans of `--curriculum NAME` (a curriculum, or one sweep point), or all of them when no name is
 * given; an empty or unknown name is an error with a did-you-mean, never "all of them".
 */
export function pick(r: CompileResult, want: string | undefined, file: string): CompiledPlan[] {
  if (want === undefined) {
    if (r.plans.length === 0) throw new UsageError(`${file} declares no curriculum`);
    return r.plans;
  }
  const plans = r.plans.filter((p) => p.plan.name === want || p.curriculum.name === want);
  if (plans.length === 0) {
    // The compiler compiled `want`'s curriculum alone (curriculumOf), so it is the point that is missing.
    const points = r.plans.map((p) => p.plan.name);
    throw new UsageError(`--curriculum ${want}: no sweep point of that name in ${file}.${didYouMean(want, points)}`, {
      hint: `Name one of its points, as \`tcod run ${file} --dry-run\` lists them: ${points.join(", ") || "(none)"}; or the curriculum alone, ${want.slice(0, want.indexOf("@"))}, for all of them with --sweep.`,
    });
  }
  return plans;
}
