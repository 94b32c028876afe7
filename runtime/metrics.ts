/**
 * Metrics: one JSON line per training step and one per evaluation, appended to
 * RUN_DIR/metrics.jsonl. Wall times live under `time` (they are the only fields that differ
 * between two runs of the same seed). The byte length of the file is the resume offset: a resumed
 * run truncates the file there, so no row is duplicated or half-written.
 */
import { appendFileSync, closeSync, existsSync, fsyncSync, openSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { MAX_RUN_FILE_BYTES, readTextFile } from "../plan/read-file.js";
import type { EvalRow } from "./nodes/evaluate.js";
import { RunFolderError } from "./checkpoint.js";
import { writeErrorOf } from "./write-error.js";
import type { FeedbackSummary } from "../plan/feedback.js";

export interface TrainRowMetrics {
  kind: "train";
  step: number;
  /** Training steps completed by the policy that produced this step's rollouts. */
  policyStep: number;
  /** Optimiser steps taken by the student after this step's update. */
  policyVersion: number;
  episodes: number;
  successRate: number;
  meanReward: number;
  /** Schedules in force, mean over the step's episodes (turns). */
  horizon: number;
  prefix: number;
  /** Mean expert length L of the step's tasks (turns; 0 where a task has none or none was needed). */
  expertLength: number;
  studentTurns: number;
  turns: number;
  invalidActions: number;
  /** Share of student turns whose action is admissible (a well-formed command the env lists). */
  admissibleRate: number;
  noExperience: number;
  droppedFailed: number;
  droppedStale: number;
  kl: { mean: number; perTurn: (number | null)[] };
  tokens: { prompt: number; response: number };
  coefs: Record<string, number>;
  blendWeight: number | null;
  adaptiveCap: number | null;
  /** Mean −log p of the expert demonstrations' tokens under the student (sft terms only; learner.ts demoNll). */
  demoNll?: number;
  /** The feedback rules in force for this step (stages, smoothed signals); only when the plan has any. */
  feedback?: FeedbackSummary;
  lr: number;
  loss: number;
  gradNorm: number;
  updates: number;
  time: Record<string, number>;
}

export type MetricsRow = TrainRowMetrics | (EvalRow & { time: Record<string, number> });

export class MetricsWriter {
  constructor(readonly path: string) {}

  /**
   * Starts a fresh file, or continues one at `offset` bytes (resume): the file must hold at least
   * that many bytes, and they must be whole metrics rows (a checkpoint records the offset only after
   * its rows were written and synced); what follows is cut off.
   */
  open(offset?: number): void {
    if (offset === undefined) { writeFileSync(this.path, ""); return; }
    const hint = "The metrics file no longer matches the checkpoint; start the run again in a new --out folder.";
    const fail = (what: string, line?: number) => new RunFolderError(`cannot resume: ${this.path} ${what}`, { hint, where: { file: this.path, ...(line !== undefined ? { line } : {}) } });
    if (!existsSync(this.path)) throw fail("is missing; the checkpoint expects " + offset + " bytes of metrics rows");
    if (!statSync(this.path).isFile()) throw fail("is not a regular file");
    const size = statSync(this.path).size;
    if (size < offset) throw fail(`has ${size} bytes, the checkpoint expects at least ${offset} (truncated)`);
    const head = readFileSync(this.path).subarray(0, offset).toString("utf8");
    if (offset > 0 && !head.endsWith("\n")) throw fail(`does not end a row at byte ${offset}, where the checkpoint says the rows end`);
    // The rows kept are checked as `tcod compare` and `tcod metrics` read them: a resume cannot remake
    // a row before its checkpoint, so a damaged one is refused, never kept or dropped.
    head.split("\n").slice(0, -1).forEach((l, i) => {
      const problem = rowProblem(l);
      if (problem) {
        throw new RunFolderError(`cannot resume: ${this.path} line ${i + 1} ${problem}`, {
          where: { file: this.path, line: i + 1 },
          hint: `The row is before the run's last checkpoint, so a resume keeps it and cannot write it again: restore ${this.path} from a copy, or start the run again in a new --out folder.`,
        });
      }
    });
    truncateSync(this.path, offset);
  }

  /** Flushes the rows written so far to disk (before a checkpoint records their offset). */
  sync(): void {
    if (!existsSync(this.path)) return;
    const fd = openSync(this.path, "r+");
    try { fsyncSync(fd); } finally { closeSync(fd); }
  }

  write(row: MetricsRow): void {
    try {
      appendFileSync(this.path, JSON.stringify(row) + "\n");
    } catch (e) {
      // A partial row past the last checkpoint's offset is cut off by the resume.
      throw writeErrorOf(e, this.path, dirname(this.path)) ?? e;
    }
  }

  offset(): number {
    return existsSync(this.path) ? statSync(this.path).size : 0;
  }
}

const num = (v: unknown): boolean => typeof v === "number";
const obj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * What is wrong with a line of a metrics file, as the commands that read one need it (`tcod compare`
 * draws every field named here, `tcod metrics` and the sinks read `kl` and `tokens`): undefined for a
 * whole row. The one check of a metrics row, so the readers and a resume agree on what is damaged.
 */
export function rowProblem(line: string): string | undefined {
  let r: unknown;
  try { r = JSON.parse(line); } catch { return "is not a metrics row (truncated or overwritten)"; }
  if (!obj(r) || (r.kind !== "train" && r.kind !== "eval") || !num(r.step)) return "is not a metrics row (truncated or overwritten)";
  const missing = missingField(r);
  return missing && `is ${r.kind === "eval" ? "an eval" : "a train"} row without ${missing}`;
}

/** The first field a row lacks or has of the wrong type, if any. */
function missingField(r: Record<string, unknown>): string | undefined {
  if (r.time !== undefined && !obj(r.time)) return "a `time` object";
  if (r.kind === "eval") {
    if (typeof r.name !== "string") return "a string `name`";
    return num(r.successRate) ? undefined : "a numeric `successRate`";
  }
  for (const k of ["successRate", "horizon", "prefix", "studentTurns"]) if (!num(r[k])) return `a numeric \`${k}\``;
  if (!obj(r.kl) || !num(r.kl.mean) || !Array.isArray(r.kl.perTurn)) return "`kl.mean` and `kl.perTurn`";
  if (!obj(r.tokens) || !num(r.tokens.prompt) || !num(r.tokens.response)) return "`tokens.prompt` and `tokens.response`";
  return obj(r.coefs) ? undefined : "a `coefs` object";
}

/**
 * The rows of a metrics file; a line that is not a whole row is a RunFolderError naming the file and
 * line, with what a resume can do about it (damagedRowHint).
 */
export function readMetrics(path: string): MetricsRow[] {
  let text: string;
  try {
    text = readTextFile(path, MAX_RUN_FILE_BYTES);
  } catch (e) {
    throw new RunFolderError(`cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, { where: { file: path }, hint: "A run's metrics.jsonl is a file of JSON rows that `tcod run` writes; restore it, or run the curriculum again in a new --out folder." });
  }
  const rows: MetricsRow[] = [];
  const lines = text.split("\n");
  let at = 0; // the byte offset of line i
  lines.forEach((l, i) => {
    const start = at;
    at += Buffer.byteLength(l) + 1;
    if (l.length === 0) return;
    const problem = rowProblem(l);
    if (problem) {
      // The last line without its newline, not JSON: a row being written (a live or killed run), skipped.
      if (i === lines.length - 1 && problem.startsWith("is not a metrics row")) return;
      throw new RunFolderError(`${path}: line ${i + 1} ${problem}`, { where: { file: path, line: i + 1 }, hint: damagedRowHint(path, start) });
    }
    rows.push(JSON.parse(l) as MetricsRow);
  });
  return rows;
}

/**
 * What a resume does to a damaged row at byte `start`: it cuts off and writes again the rows after its
 * checkpoint's offset, and keeps (so refuses, while damaged) the rows before it. Read-only: the
 * checkpoint's state.json is only peeked at (findCheckpoint repairs a folder; a reader must not).
 */
export function damagedRowHint(path: string, start: number): string {
  const fresh = `restore ${basename(path)} from a copy, or run the curriculum again in a new --out folder`;
  let offset: unknown;
  try { offset = (JSON.parse(readFileSync(join(dirname(path), "checkpoint", "state.json"), "utf8")) as { metricsOffset?: unknown }).metricsOffset; } catch { offset = undefined; }
  if (typeof offset !== "number") return `The run has no readable checkpoint to resume from: ${fresh}.`;
  if (start >= offset) return "The row is after the run's last checkpoint: resuming the run (`tcod run --resume DIR`) cuts it off and runs its step again.";
  return `The row is before the run's last checkpoint, which a resume keeps (and refuses while it is damaged): ${fresh}.`;
}
