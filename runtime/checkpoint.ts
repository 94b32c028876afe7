/**
 * Checkpoints: everything a run needs to continue exactly — the student's weights and optimiser
 * (StudentBackend.saveState), the curriculum state, the replay buffer, pending per-step rollout
 * statistics, counters and the metrics offset. RNG state is not stored because every random
 * choice is derived from (seed, position) (seeds.ts); the seed is.
 *
 * Written to RUN_DIR/checkpoint.tmp-<pid>, every file fsynced, then renamed over RUN_DIR/checkpoint
 * (the old one moved aside first: rename cannot replace a non-empty folder) and the run folder
 * fsynced, so a crash leaves the old or the new checkpoint, never a half-written one; a crash between
 * the two renames leaves checkpoint.old-<pid>, which the next read puts back.
 *
 * Reading refuses a damaged checkpoint with a RunFolderError (TC7014) naming the file: missing,
 * truncated or not JSON, a foreign format, fields of the wrong type, an iteration beyond the plan;
 * the run-state check (checkResumable) also refuses a plan.json changed since the run wrote it.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { z } from "zod";
import { UserError } from "../plan/errors.js";
import type { StudentBackend } from "./backends/backend.js";
import type { CurriculumSnapshot } from "./curriculum-state.js";
import type { BufferSnapshot } from "./replay.js";
import { fsyncDir, fsyncTree, writeFileAtomicSync } from "./fs-atomic.js";
import { writeErrorOf } from "./write-error.js";
import { brokenLink, MAX_RUN_FILE_BYTES, readTextFile } from "../plan/read-file.js";
import { jsonSyntaxError } from "../plan/json-error.js";

export const CHECKPOINT_FORMAT = "tcod.checkpoint/1";

/** A run folder whose state cannot be read: a damaged or foreign checkpoint, metrics file or student weights (TC7014). */
export class RunFolderError extends UserError {
  readonly code = "TC7014";
}

export interface CheckpointState {
  format: typeof CHECKPOINT_FORMAT;
  planName: string;
  /**
   * The SHA-256 of RUN_DIR/plan.json as the run wrote it: a resume refuses a plan.json edited since
   * (the steps so far ran the plan it had). Absent in checkpoints of older versions (not checked).
   */
  planSha256?: string;
  seed: number;
  /** Last completed loop iteration (rollout step). */
  iteration: number;
  /** Training steps completed (learner). */
  learnerStep: number;
  curriculum: CurriculumSnapshot;
  buffer: BufferSnapshot;
  /** Rollout statistics of steps whose update has not run yet (asynchronous runs). */
  pending: unknown[];
  /** Episodes rolled out but not yet scored by the teacher (staleness ≥ 1 overlaps scoring). */
  unscored: unknown | null;
  counters: { droppedFailed: number; droppedStale: number };
  metricsOffset: number;
  savedAt: string;
  /**
   * The files the student's saveState wrote under checkpoint/student, by path within it, with their
   * sizes in bytes, as found when the checkpoint was written: a resume checks them before it takes the
   * folder (checkStudentFiles). Absent in checkpoints of older versions; empty where the student saved
   * its state elsewhere (a worker on another machine).
   */
  student?: { files: Record<string, number> };
}

const count = z.number().int().nonnegative();
const nums = z.array(z.number());
const RowSchema = z.looseObject({
  step: z.number().int(), episode: z.number().int(), group: z.number().int(),
  turnOf: nums, tokens: nums, mask: nums, logprobs: nums, teacherLogprobs: nums,
  reward: z.number(), policyStep: z.number().int(),
});
// Loose objects throughout: the schema checks what the restore reads, and keys it does not name
// (state added by a part of the runtime, e.g. the feedback tracker's) pass through unchanged.
const StateSchema = z.looseObject({
  format: z.literal(CHECKPOINT_FORMAT),
  planName: z.string(),
  planSha256: z.string().optional(),
  seed: z.number().int(),
  iteration: count,
  learnerStep: count,
  curriculum: z.looseObject({
    step: count,
    adaptiveCap: z.number().nullable(),
    probes: z.array(z.looseObject({ step: z.number().int(), cap: z.number() })),
  }),
  buffer: z.looseObject({ rows: z.array(RowSchema), droppedStale: count, droppedOverflow: count }),
  pending: z.array(z.looseObject({ step: count, time: z.looseObject({}) })),
  unscored: z.looseObject({ step: count, policyStep: count, records: z.array(z.looseObject({})) }).nullable(),
  counters: z.looseObject({ droppedFailed: count, droppedStale: count }),
  metricsOffset: count,
  savedAt: z.string(),
  student: z.looseObject({ files: z.record(z.string(), count) }).optional(),
});

export const checkpointDir = (runDir: string): string => join(runDir, "checkpoint");

/** Leftovers of writes that a crash interrupted (one writer per run folder, so any of them is stale). */
function removeStaleTemps(runDir: string): void {
  for (const f of readdirSync(runDir)) if (f.startsWith("checkpoint.tmp-")) rmSync(join(runDir, f), { recursive: true, force: true });
}

export async function writeCheckpoint(runDir: string, state: CheckpointState, student: StudentBackend): Promise<void> {
  const final = checkpointDir(runDir);
  const tmp = join(runDir, `checkpoint.tmp-${process.pid}`);
  removeStaleTemps(runDir);
  try {
    mkdirSync(join(tmp, "student"), { recursive: true });
    await student.saveState(join(tmp, "student"));
    writeFileAtomicSync(join(tmp, "state.json"), JSON.stringify({ ...state, student: { files: filesUnder(join(tmp, "student")) } }));
    fsyncTree(tmp);
    fsyncDir(runDir);
  } catch (e) {
    // The previous checkpoint is untouched until the renames below; drop the partial one.
    rmSync(tmp, { recursive: true, force: true });
    const path = (e as NodeJS.ErrnoException).path;
    throw writeErrorOf(e, path ?? tmp, runDir) ?? e;
  }
  const old = join(runDir, `checkpoint.old-${process.pid}`);
  if (existsSync(final)) renameSync(final, old);
  renameSync(tmp, final);
  fsyncDir(runDir);
  rmSync(old, { recursive: true, force: true });
  // An older run's checkpoint.old-* is stale once a newer checkpoint is in place.
  for (const f of readdirSync(runDir)) if (f.startsWith("checkpoint.old-")) rmSync(join(runDir, f), { recursive: true, force: true });
}

/**
 * The checkpoint of a run folder; null when the run never wrote one (killed before its first
 * checkpoint: it resumes from step 0). A damaged checkpoint is a RunFolderError naming the file.
 */
export function findCheckpoint(runDir: string): CheckpointState | null {
  refuseBrokenLink(runDir);
  recoverInterruptedWrite(runDir);
  removeStaleTemps(runDir);
  const dir = checkpointDir(runDir);
  if (!existsSync(dir)) return null;
  return readCheckpointAt(dir, runDir);
}

/**
 * The checkpoint findCheckpoint would return, read without repairing anything: the leftover of an
 * interrupted write that findCheckpoint would put back is read where it is. For the checks a resume
 * makes before it takes the run folder, so that a refused resume leaves the folder as it was.
 */
export function peekCheckpoint(runDir: string): CheckpointState | null {
  refuseBrokenLink(runDir);
  const leftover = existsSync(checkpointDir(runDir)) ? undefined : newestLeftover(runDir);
  const dir = leftover === undefined ? checkpointDir(runDir) : join(runDir, leftover);
  if (!existsSync(dir)) return null;
  const state = readCheckpointAt(dir, runDir);
  checkStudentFiles(dir, state, runDir);
  return state;
}

/** Every regular file under `dir` (links followed) by its path within it, with its size in bytes. */
function filesUnder(dir: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const f of readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()) {
    const st = statSync(join(dir, f), { throwIfNoEntry: false });
    if (st?.isFile()) out[f] = st.size;
  }
  return out;
}

/**
 * The student's files of the checkpoint folder `dir` as cheaply as they can be checked before a resume
 * takes the run folder: its student/ folder is there, and each file the checkpoint lists is a regular
 * file of the size it had when written. Weights that pass may still not load (loadStudent, later);
 * weights cut short, removed or replaced are refused here, the folder untouched (RunFolderError).
 */
function checkStudentFiles(dir: string, state: CheckpointState, runDir: string): void {
  const folder = join(dir, "student");
  const hint = `The checkpoint's student state is damaged: put its files back as the run wrote them, or start the run again in a new --out folder; the metrics so far are in ${join(runDir, "metrics.jsonl")}.`;
  const damaged = (file: string, what: string) => new RunFolderError(`cannot resume: ${file} ${what}`, { where: { file }, hint });
  const st = statSync(folder, { throwIfNoEntry: false });
  if (!st) throw damaged(folder, brokenLink(folder) ? `cannot be read (${brokenLink(folder)!.message})` : "is missing (the checkpoint holds no student state)");
  if (!st.isDirectory()) throw damaged(folder, "is a file, not the student's state folder");
  for (const [name, bytes] of Object.entries(state.student?.files ?? {})) {
    // A name that leaves the folder was not written by writeCheckpoint.
    if (isAbsolute(name) || name.split(/[\\/]/).includes("..")) throw damaged(join(dir, "state.json"), `lists a student file outside ${folder}: ${JSON.stringify(name.slice(0, 80))}`);
    const file = join(folder, name);
    const f = statSync(file, { throwIfNoEntry: false });
    if (!f) throw damaged(file, brokenLink(file) ? `cannot be read (${brokenLink(file)!.message})` : `is missing (the checkpoint recorded ${bytes} bytes)`);
    if (!f.isFile()) throw damaged(file, `is ${f.isDirectory() ? "a folder" : "not a regular file"}, not the file of ${bytes} bytes the checkpoint recorded`);
    if (f.size !== bytes) throw damaged(file, `has ${f.size} bytes, the checkpoint recorded ${bytes} (${f.size < bytes ? "truncated" : "overwritten"})`);
  }
}

/**
 * A link in the checkpoint's place that leads nowhere is not "no checkpoint yet", which would start
 * the run over (rewriting metrics.jsonl) and then fail to put a checkpoint in its place.
 */
function refuseBrokenLink(runDir: string): void {
  const broken = brokenLink(checkpointDir(runDir));
  if (broken) {
    throw new RunFolderError(`cannot resume: ${checkpointDir(runDir)} cannot be read (${broken.message})`, {
      where: { file: checkpointDir(runDir) }, hint: `Point the link at the run's checkpoint folder again, or remove it to restart the run from step 0.`,
    });
  }
}

/** The state.json of the checkpoint folder `dir` of `runDir`, checked; a damaged one is a RunFolderError naming the file. */
function readCheckpointAt(dir: string, runDir: string): CheckpointState {
  const file = join(dir, "state.json");
  const damaged = (what: string, hint?: string, at?: { line: number; column: number }) => new RunFolderError(`cannot resume: ${file} ${what}`, {
    hint: hint ?? `The checkpoint is damaged. Start the run again in a new --out folder; the metrics so far are in ${join(runDir, "metrics.jsonl")}.`,
    where: { file, ...at },
  });
  if (!statSync(dir).isDirectory()) throw new RunFolderError(`cannot resume: ${dir} is a file, not a checkpoint folder`, { where: { file: dir }, hint: `Move ${dir} away to restart the run from step 0.` });
  if (!existsSync(file) && !brokenLink(file)) throw damaged("is missing (the checkpoint folder has no state)");
  let text: string;
  try {
    text = readTextFile(file, MAX_RUN_FILE_BYTES);
  } catch (e) {
    throw damaged(`cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    const j = jsonSyntaxError(e, text);
    if (!j) throw e;
    if (text.trim().length === 0) throw damaged("is empty");
    throw damaged(`is not JSON (truncated or overwritten; ${text.length} bytes; ${j.message})`, undefined, { line: j.line, column: j.column });
  }
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    throw damaged(`is not a checkpoint: it holds ${Array.isArray(data) ? "a list" : data === null ? "null" : `a ${typeof data}`}, not an object`);
  }
  const fmt = (data as { format?: unknown }).format;
  if (fmt !== CHECKPOINT_FORMAT) {
    throw damaged(`has format ${JSON.stringify(fmt) ?? "(none)"}, expected "${CHECKPOINT_FORMAT}"`,
      "This folder was not written by this version of tcod's run; start the run again in a new --out folder.");
  }
  const r = StateSchema.safeParse(data);
  if (!r.success) {
    const i = r.error.issues[0]!;
    throw damaged(`is not a valid checkpoint: at ${formatPath(i.path)}: ${i.message}`);
  }
  // The schema checks every field the restore reads; the rest of a row or record is data passed through.
  const s = r.data as unknown as CheckpointState;
  if (s.learnerStep > s.iteration) throw damaged(`says ${s.learnerStep} training steps after ${s.iteration} iterations; a run never trains ahead of its explorer`);
  return s;
}

/**
 * Whether a run folder holds a checkpoint, or something in its place a resume reads as one (a file, a
 * link, the leftover of an interrupted write): read-only, unlike findCheckpoint, which repairs.
 */
export function hasCheckpoint(runDir: string): boolean {
  const dir = checkpointDir(runDir);
  if (existsSync(dir) || brokenLink(dir)) return true;
  try { return readdirSync(runDir).some((f) => f.startsWith("checkpoint.old-")); } catch { return false; }
}

/** The checkpoint of a run folder that must have one (a RunFolderError when it has none). */
export function readCheckpoint(runDir: string): CheckpointState {
  const ck = findCheckpoint(runDir);
  if (!ck) throw new RunFolderError(`${runDir} holds no checkpoint`, { where: { file: checkpointDir(runDir) }, hint: "A run writes one at step 0; resume it with `tcod run --resume` to start it again from step 0." });
  return ck;
}

function formatPath(path: readonly PropertyKey[]): string {
  let s = "$";
  for (const p of path) s += typeof p === "number" ? `[${p}]` : `.${String(p)}`;
  return s;
}

/** A crash between the two renames of writeCheckpoint leaves only checkpoint.old-*: put the newest back. */
function recoverInterruptedWrite(runDir: string): void {
  if (existsSync(checkpointDir(runDir)) || !existsSync(runDir)) return;
  const last = newestLeftover(runDir);
  if (last !== undefined) {
    renameSync(join(runDir, last), checkpointDir(runDir));
    fsyncDir(runDir);
  }
}

/**
 * The checkpoint.old-* folder recoverInterruptedWrite puts back: the newest readable one; if none is
 * readable, the last, so that reading it reports the damage.
 */
function newestLeftover(runDir: string): string | undefined {
  const old = readdirSync(runDir).filter((f) => f.startsWith("checkpoint.old-"))
    .map((f) => ({ f, iteration: iterationOf(join(runDir, f, "state.json")) }))
    .sort((a, b) => a.iteration - b.iteration);
  return old[old.length - 1]?.f;
}

function iterationOf(stateFile: string): number {
  try {
    const it = (JSON.parse(readTextFile(stateFile, MAX_RUN_FILE_BYTES)) as { iteration?: unknown }).iteration;
    return typeof it === "number" && Number.isInteger(it) ? it : -1;
  } catch {
    return -1;
  }
}

/** Loads the checkpoint's student state; weights that do not load are a RunFolderError naming the folder. */
export async function loadStudent(runDir: string, student: StudentBackend): Promise<void> {
  const dir = join(checkpointDir(runDir), "student");
  try {
    await student.loadState(dir);
  } catch (e) {
    const msg = (e as Error).message;
    throw new RunFolderError(`cannot resume: the student state in ${dir} does not load: ${msg}`, {
      where: { file: dir },
      hint: "The checkpoint's weights are damaged or come from other backend settings; resume with the same plan, or start the run again in a new --out folder.",
    });
  }
}
