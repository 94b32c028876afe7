/**
 * `tcod run FILE --sweep [--parallel N] [--out SWEEP_DIR]`: every point of a file's sweeps (and every
 * curriculum) runs in a run folder of its own under one sweep folder:
 *   SWEEP_DIR/sweep.json            the file, the overrides, each point's settings, folder and status
 *   SWEEP_DIR/plans/NAME.plan.json  the compiled plans (and extension bundles, NAME.plan.bundle.mjs)
 *   SWEEP_DIR/NAME/                 a run folder (metrics.jsonl, checkpoint/, report.html, run.json, source/),
 *                                   and stderr.log: what the point wrote on stderr, every attempt (bin/point-log.ts)
 * Each point is a child `tcod run PLAN --out DIR` (or `--resume DIR`), N at a time. Run the same
 * command again and finished points are skipped, interrupted ones resumed (one stopped before its
 * first checkpoint starts again at step 0, its rows kept as *.before-restart-N: runtime/set-aside.ts),
 * the rest started; a point whose folder holds a run of a different plan is an error, never overwritten.
 */
import { shownValue } from "./flag-rules.js";
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import pLimit from "p-limit";
import { safeFileName, type CompiledPlan } from "../compiler/index.js";
import { stringifyPlan } from "../plan/access.js";
import { UsageError, UserError } from "../plan/errors.js";
import { SIZE_LIMITS } from "../plan/defaults.js";
import { brokenLink, fileReadError, MAX_RUN_FILE_BYTES, notRegularFile, readTextFile } from "../plan/read-file.js";
import { jsonSyntaxError } from "../plan/json-error.js";
import { planFileNames, withBundleBeside } from "./plan-file-names.js";
import { hasCheckpoint } from "../runtime/checkpoint.js";
import { rowsToKeep } from "../runtime/set-aside.js";
import { readMetrics, type MetricsRow } from "../runtime/metrics.js";
import { exitForSignal, STOP_SIGNALS, type StopSignal } from "./stop-signals.js";
import { countLog, describeCounts, openPointLog, pointLogBlocked, pointLogPath } from "./point-log.js";

export type PointStatus = "pending" | "running" | "completed" | "interrupted" | "failed";

export interface SweepPoint { name: string; dir: string; settings: string[]; status: PointStatus; exitCode?: number; seconds?: number }

export interface SweepRecord { file: string; overrides: string[]; points: SweepPoint[] }

/** A sweep folder that cannot take this sweep (TC7009). */
export class SweepError extends UsageError {
  constructor(message: string, hint: string, file?: string) {
    super(message, { hint, ...(file !== undefined ? { where: { file } } : {}) });
  }
}

/** `--max-points N`: the most sweep points a file may expand to (compiler TC5006 above it). */
export const MAX_POINTS_FLAG = ["--max-points <n>", "the most sweep points a file may expand to (default 1000, at most 100000)"] as const;

export function parseMaxPoints(text: string | undefined): { maxPoints?: number } {
  if (text === undefined) return {};
  const n = Number(text);
  if (!/^\s*\d+\s*$/.test(text) || n < 1) {
    throw new UsageError(`--max-points ${shownValue(text)}: expected a whole number of points, at least 1`, { hint: "e.g. --max-points 5000" });
  }
  // Every point is compiled and kept in memory: 10^10 of them would abort out of memory, not refuse.
  const max = SIZE_LIMITS.sweepPoints;
  if (n > max) {
    throw new UsageError(`--max-points ${text.trim()}: at most ${max.toLocaleString("en-US")} points (each is a plan compiled and held in memory)`, { hint: `Split the sweep into several files of at most ${max.toLocaleString("en-US")} points each, e.g. --max-points ${max}.` });
  }
  return { maxPoints: n };
}

export function defaultSweepDir(file: string): string {
  return join("runs", `${safeFileName(basename(file).replace(/\.tcod$/, ""))}.sweep`);
}

export interface SweepOptions {
  file: string;
  plans: CompiledPlan[];
  overrides: string[];
  dir: string;
  parallel: number;
  seed?: number;
  cli: string;
  /** Where the plans' source paths are found, for each point's source/ copy. */
  sourceRoot: string;
  log: (line: string) => void;
  /** Aborted (reason: the signal's name) to stop the sweep: each running point finishes its step and checkpoints. */
  signal?: AbortSignal;
  /** Aborted on a second signal: the signal goes on to each running point again, which then quits at once. */
  quit?: AbortSignal;
  /** Each point's resolved curriculum (by plan name), written to its folder's config.txt for the report. */
  configs?: Map<string, string>;
  /** Flags every point's `tcod run` is given, started or resumed (its logging: --no-tensorboard, --wandb P). */
  pointFlags?: readonly string[];
}

/** A sweep every point of which was checked (checkSweep): its record and each point's plan, to be written. */
export interface CheckedSweep {
  readonly rec: SweepRecord;
  readonly plans: readonly { name: string; plan: CompiledPlan["plan"]; text: string; bundle: CompiledPlan["bundle"] }[];
}

/**
 * Checks every point of the sweep, writing nothing (it reads sweep.json and each point's saved plan,
 * and looks at its stderr.log): a sweep one point refuses writes nothing, and the caller makes and
 * probes the --out folder only after it (a refused new sweep leaves no folder, an existing one its mtime).
 */
export function checkSweep(o: Pick<SweepOptions, "file" | "plans" | "overrides" | "dir">): CheckedSweep {
  const recordPath = join(o.dir, "sweep.json");
  // A folder, a pipe or a link that leads nowhere in the record's place: it could be neither read nor rewritten.
  const notFile = notRegularFile(recordPath) ?? brokenLink(recordPath);
  if (notFile) throw new SweepError(`${recordPath} cannot be read (${notFile.message})`, `Move ${recordPath} out of the way (the sweep records each point's status in it), then run the sweep again.`, recordPath);
  const previous = readRecord(recordPath);
  const rec: SweepRecord = { file: o.file, overrides: o.overrides, points: [] };
  const fileNames = planFileNames(o.plans.map((c) => c.plan.name));
  // Every point is checked before any plan is written: a sweep one point refuses writes nothing.
  const plans = o.plans.map((c, i) => {
    const name = fileNames[i]!;
    // Its bundle is named after the plan's file, which no other point's shares.
    const plan = withBundleBeside(c.plan, name);
    const text = stringifyPlan(plan);
    const runDir = join(o.dir, name);
    const savedPlan = join(runDir, "plan.json");
    const saved = savedPlanText(savedPlan);
    if (saved !== undefined && saved !== text && !samePlan(saved, text)) {
      throw new SweepError(`${runDir} holds a run of a different plan than sweep point ${c.plan.name} compiles to now`,
        `The file or the overrides changed since that run; give the sweep another --out folder (or delete ${runDir} to redo the point).`);
    }
    const before = previous.find((p) => p.name === c.plan.name);
    // Completed in the same folder only: a point whose folder name changed (it was shared) runs again.
    const done = before?.status === "completed" && before.dir === name;
    const log = pointLogPath(runDir);
    const blocked = done ? undefined : pointLogBlocked(log);
    if (blocked) throw new SweepError(`${log} cannot be written (${blocked})`, `Move ${log} out of the way (the sweep keeps the point's stderr in it), then run the sweep again.`, log);
    rec.points.push({ name: c.plan.name, dir: name, settings: c.settings, status: done ? "completed" : existsSync(join(runDir, "metrics.jsonl")) ? "interrupted" : "pending" });
    return { name, plan, text, bundle: c.bundle };
  });
  return { rec, plans };
}

/** Runs the points of a checked sweep; resolves to the sweep record after every point has stopped. */
export async function runSweep(o: SweepOptions, { rec, plans }: CheckedSweep): Promise<SweepRecord> {
  const recordPath = join(o.dir, "sweep.json");
  mkdirSync(join(o.dir, "plans"), { recursive: true });
  for (const { name, plan, text, bundle } of plans) {
    writeFileSync(join(o.dir, "plans", `${name}.plan.json`), text);
    if (bundle && plan.extensions) writeFileSync(join(o.dir, "plans", plan.extensions.bundle), bundle);
  }
  const save = () => writeFileSync(recordPath, JSON.stringify(rec, null, 2) + "\n");
  save();
  const limit = pLimit(Math.max(1, o.parallel));
  const total = rec.points.length;
  let started = 0;
  await Promise.all(rec.points.map((p) => limit(async () => {
    if (p.status === "completed") { o.log(`skip  ${p.name}: already completed`); return; }
    if (o.signal?.aborted) return;
    const runDir = join(o.dir, p.dir);
    const resume = existsSync(join(runDir, "metrics.jsonl"));
    const planPath = join(o.dir, "plans", `${p.dir}.plan.json`);
    const args = [o.cli, "run", ...(resume ? ["--resume", runDir] : [planPath, "--out", runDir]), "--quiet", "--watch-parent", ...(o.pointFlags ?? []),
      ...(o.seed !== undefined && !resume ? ["--seed", String(o.seed)] : []),
      ...(resume ? [] : ["--record", JSON.stringify({ settings: p.settings, sweep: { dir: "..", point: p.name }, sourceRoot: o.sourceRoot })])];
    if (!resume) {
      const config = o.configs?.get(p.name);
      mkdirSync(runDir, { recursive: true });
      if (config) writeFileSync(join(runDir, "config.txt"), config);
    }
    started++;
    // A point stopped before its first checkpoint starts over at step 0; rows it had written are kept aside (runtime/set-aside.ts).
    const restart = resume && !hasCheckpoint(runDir);
    const kept = restart ? rowsToKeep(runDir).map((f) => basename(f)) : [];
    const read = kept.includes("metrics.jsonl") ? ` (\`tcod metrics ${join(runDir, "metrics.jsonl.before-restart-N")}\` reads them)` : "";
    const why = restart ? `: no checkpoint, so it starts again at step 0${kept.length ? `; the rows it had are kept as ${kept.map((f) => `${f}.before-restart-N`).join(" and ")}${read}` : ""}` : "";
    const verb = restart ? "restart" : resume ? "resume" : "start";
    o.log(`${verb} [${started}/${total}] ${p.name}${p.settings.length ? `  (${p.settings.join(", ")})` : ""}${why}`);
    p.status = "running";
    save();
    // The point's stderr is its log in its folder (after the run folder exists: a fresh point's is made
    // above), written by the point itself, so it outlives the sweep (bin/point-log.ts); a pipe to the
    // sweep only when the log could not be opened.
    const logPath = pointLogPath(runDir);
    const log = openPointLog(logPath, `${new Date().toISOString()} ${verb} ${p.name}`);
    const t0 = Date.now();
    const { code, stderr: piped } = await child(process.execPath, args, log.fd, o.signal, o.quit);
    p.seconds = Math.round((Date.now() - t0) / 100) / 10;
    p.exitCode = code;
    p.status = code === 0 ? "completed" : STOPPED_EXITS.has(code) || o.signal?.aborted ? "interrupted" : "failed";
    const stderr = log.fd === undefined ? piped : log.written(8000);
    log.close(`${new Date().toISOString()} ${p.status}, exit ${code}, ${p.seconds} s`);
    save();
    // A failed point's stderr is shown; so is any point's whose log could not be kept (else it would be lost).
    const lost = log.failed !== undefined ? `\n      (its stderr could not be kept in ${logPath}: ${log.failed})` : "";
    const said = p.status === "failed" || lost ? undefined : logNote(logPath);
    o.log(`${p.status.padEnd(11)} ${p.name} (${p.seconds} s)${said ? `: ${said}` : ""}${lost}${p.status === "failed" || lost ? `\n${indent(stderr.trim())}` : ""}`);
  })));
  return rec;
}

/** "2 warnings and 1 note in DIR/stderr.log" for a point's log with any (undefined: none). */
function logNote(path: string): string | undefined {
  const said = describeCounts(countLog(path));
  return said && `${said} in ${path}`;
}

/**
 * Runs a point with `log` (a descriptor) as its stderr; without one its stderr is a pipe, and the
 * last 8,000 characters of it come back.
 */
function child(cmd: string, args: string[], log: number | undefined, signal?: AbortSignal, quit?: AbortSignal): Promise<{ code: number; stderr: string }> {
  return new Promise((done) => {
    // Its own process group: a signal sent to the sweep's group (Ctrl-C or a closed terminal, `timeout`,
    // SLURM) reaches a point only through the sweep below, once, and not a second time straight from
    // the sender, which the point would take for "quit now, without a checkpoint".
    // Its stdin a pipe the sweep never writes to (--watch-parent): it closes when the sweep ends, even
    // by SIGKILL, which the sweep cannot catch to stop its points, and the point then stops as on SIGHUP.
    const p = spawn(cmd, args, { stdio: ["pipe", "ignore", log ?? "pipe"], detached: true });
    let stderr = "";
    p.stderr?.on("data", (b: Buffer) => { stderr = (stderr + b.toString()).slice(-8000); });
    // The signal that stopped the sweep (the abort's reason; SIGINT when none was given) goes on to the
    // point, which checkpoints at the end of its step, then exits 128 + the signal's number.
    const forward = (s: AbortSignal) => () => { if (p.exitCode === null && p.signalCode === null) p.kill(isStopSignal(s.reason) ? s.reason : "SIGINT"); };
    const stop = signal && forward(signal), again = quit && forward(quit);
    if (stop) signal.addEventListener("abort", stop, { once: true });
    if (again) quit.addEventListener("abort", again, { once: true });
    p.on("error", (e) => done({ code: 1, stderr: e.message }));
    p.on("close", (code, sig) => {
      if (stop) signal.removeEventListener("abort", stop);
      if (again) quit.removeEventListener("abort", again);
      p.stdin?.destroy();
      done({ code: code ?? (isStopSignal(sig) ? exitForSignal(sig) : 1), stderr });
    });
  });
}

/** The exit statuses of a point a stop signal ended after its checkpoint: 130, 143, 129. */
const STOPPED_EXITS = new Set<number>(STOP_SIGNALS.map(exitForSignal));
const isStopSignal = (s: unknown): s is StopSignal => (STOP_SIGNALS as readonly unknown[]).includes(s);

/**
 * The points an earlier sweep.json records (each with a name and a folder); none from one that is
 * missing, not JSON or of another shape: each point's folder then says where it stands (a point with
 * metrics is resumed, which a completed run ends at once). One that is not JSON is said on stderr, at
 * its line and column, as the sweep rewrites it; one without a `points` list, or with entries that
 * are not points, is said too (the first such entry named, all counted).
 */
function readRecord(path: string): SweepPoint[] {
  let data: unknown;
  let text = "";
  try { text = readFileSync(path, "utf8"); data = JSON.parse(text); } catch (e) {
    const j = jsonSyntaxError(e, text);
    if (j) process.stderr.write(`tcod run: warning: ${path}:${j.line}:${j.column}: the sweep's record is not JSON (${j.message}); each point's run folder says where it stands, and the record is written anew\n`);
    return [];
  }
  const warn = (what: string) => process.stderr.write(`tcod run: warning: ${path}: ${what}, not a record the sweep wrote; each point's run folder says where it stands, and the record is written anew\n`);
  const points = data !== null && typeof data === "object" && !Array.isArray(data) ? (data as { points?: unknown }).points : undefined;
  if (!Array.isArray(points)) {
    warn("it has no `points` list");
    return [];
  }
  const isPoint = (p: unknown): p is SweepPoint => p !== null && typeof p === "object" && typeof (p as SweepPoint).name === "string" && typeof (p as SweepPoint).dir === "string";
  const bad = points.flatMap((p, i) => (isPoint(p) ? [] : [i]));
  if (bad.length) warn(`\`points[${bad[0]}]\`${bad.length > 1 ? ` (and ${bad.length - 1} more: ${bad.length} in all)` : ""} is not a point with a string \`name\` and \`dir\``);
  return points.filter(isPoint);
}

/** The plan.json of a point's run folder (undefined: none yet); one that cannot be read is TC7009, naming it. */
function savedPlanText(path: string): string | undefined {
  if (!existsSync(path) && !brokenLink(path)) return undefined;
  try {
    return readTextFile(path, MAX_RUN_FILE_BYTES);
  } catch (e) {
    throw new SweepError(`${path} cannot be read (${fileReadError(e).message})`, `The point's run folder is damaged: move ${dirname(path)} out of the way to run the point again, or give the sweep another --out folder.`, path);
  }
}

/** Two plan texts mean the same run when they differ at most in the seed a run was started with. */
function samePlan(a: string, b: string): boolean {
  try {
    const x = JSON.parse(a) as { clock?: { seed?: number } }, y = JSON.parse(b) as { clock?: { seed?: number } };
    if (x.clock) delete x.clock.seed;
    if (y.clock) delete y.clock.seed;
    return JSON.stringify(x) === JSON.stringify(y);
  } catch { return false; }
}

const indent = (s: string) => s.split("\n").map((l) => `      ${l}`).join("\n");

/**
 * A point's results for the summary: its last train step and last evaluation, from its metrics.jsonl
 * read as `tcod metrics` reads it; a file that is not whole rows is said (`said`: a warning naming
 * the file and line), never taken for a point without results, and an unterminated last line (a
 * point killed mid-write) is left out with a note.
 */
export function pointResults(runDir: string): { last: string; said?: string } {
  const path = join(runDir, "metrics.jsonl");
  if (!existsSync(path) && !brokenLink(path)) return { last: "" }; // a point that never started has no metrics
  let partial: number | undefined;
  let rows: MetricsRow[];
  try {
    rows = readMetrics(path, (line) => { partial = line; });
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    const at = e.where?.line !== undefined ? `:${e.where.line}${e.where.column !== undefined ? `:${e.where.column}` : ""}` : "";
    const what = e.message.startsWith(`${path}: `) ? e.message.slice(path.length + 2) : e.message;
    return { last: "results unreadable", said: `warning: ${path}${at}: ${what}; its results are not shown (\`tcod metrics ${runDir}\` says more)` };
  }
  const evals = rows.filter((r) => r.kind === "eval");
  const lastEval = evals[evals.length - 1];
  const lastTrain = rows.filter((r) => r.kind === "train").pop();
  const last = [lastTrain ? `step ${lastTrain.step}, train success ${lastTrain.successRate.toFixed(3)}` : "", lastEval?.kind === "eval" ? `${lastEval.name} ${lastEval.successRate.toFixed(3)}` : ""].filter(Boolean).join(", ");
  return partial === undefined ? { last } : { last, said: `note: ${path}:${partial}: the last line is not a whole row (the point was killed while writing it); it is left out` };
}

export function sweepSummary(rec: SweepRecord, dir: string): string {
  const w = Math.max(5, ...rec.points.map((p) => p.name.length));
  const lines = [`sweep ${resolve(dir)}: ${rec.points.filter((p) => p.status === "completed").length}/${rec.points.length} points completed`];
  const results = rec.points.map((p) => pointResults(join(dir, p.dir)));
  rec.points.forEach((p, i) => lines.push(`  ${p.name.padEnd(w)}  ${p.status.padEnd(11)}  ${results[i]!.last}`));
  // Under the table, one line per point that said something on stderr worth reading (not a failed
  // one: its stderr was shown when it failed), so warnings about a completed point's results are seen;
  // and one per point whose metrics could not all be read.
  rec.points.forEach((p, i) => {
    const said = p.status === "failed" ? undefined : logNote(pointLogPath(join(dir, p.dir)));
    if (said) lines.push(`  ${p.name}: ${said}`);
    const read = results[i]!.said;
    if (read) lines.push(`  ${p.name}: ${read}`);
  });
  return lines.join("\n") + "\n";
}
