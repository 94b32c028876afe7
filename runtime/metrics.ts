/**
 * Metrics: one JSON line per training step and one per evaluation, appended to
 * RUN_DIR/metrics.jsonl. Wall times live under `time` (they are the only fields that differ
 * between two runs of the same seed). The byte length of the file is the resume offset: a resumed
 * run truncates the file there, so no row is duplicated or half-written.
 */
import { appendFileSync, closeSync, existsSync, fsyncSync, openSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { brokenLink, fileReadError, MAX_RUN_FILE_BYTES, readTextFile } from "../plan/read-file.js";
import { jsonSyntaxError, type JsonSyntaxError } from "../plan/json-error.js";
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
    this.checkKept(offset);
    truncateSync(this.path, offset);
  }

  /**
   * What open(offset) refuses, read-only: the file holds at least `offset` bytes of whole metrics
   * rows. A resume checks it before it takes the run folder (a refused resume writes nothing).
   */
  checkKept(offset: number): void {
    const hint = "The metrics file no longer matches the checkpoint; start the run again in a new --out folder.";
    const fail = (what: string, line?: number) => new RunFolderError(`cannot resume: ${this.path} ${what}`, { hint, where: { file: this.path, ...(line !== undefined ? { line } : {}) } });
    const unreadable = brokenLink(this.path);
    if (unreadable) throw fail(`cannot be read (${unreadable.message})`);
    if (!existsSync(this.path)) throw fail("is missing; the checkpoint expects " + offset + " bytes of metrics rows");
    if (!statSync(this.path).isFile()) throw fail("is not a regular file");
    const size = statSync(this.path).size;
    if (size < offset) throw fail(`has ${size} bytes, the checkpoint expects at least ${offset} (truncated)`);
    const head = readFileSync(this.path).subarray(0, offset).toString("utf8");
    if (offset > 0 && !head.endsWith("\n")) throw fail(`does not end a row at byte ${offset}, where the checkpoint says the rows end`);
    // The rows kept are checked as `tcod compare` and `tcod metrics` read them: a resume cannot remake
    // a row before its checkpoint, so a damaged one is refused, never kept or dropped.
    const read = rowReader();
    head.split("\n").slice(0, -1).forEach((l, i) => {
      const parsed = read(l);
      if ("problem" in parsed) {
        throw new RunFolderError(`cannot resume: ${this.path} line ${i + 1} ${parsed.problem}${notJson(parsed)}`, {
          where: { file: this.path, line: i + 1, ...(parsed.json ? { column: parsed.json.column } : {}) },
          hint: `The row is before the run's last checkpoint, so a resume keeps it and cannot write it again: restore ${this.path} from a copy, or start the run again in a new --out folder.`,
        });
      }
    });
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

const num = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);
const obj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const NOT_A_ROW = "is not a metrics row (truncated or overwritten)";

/**
 * What is wrong with a line of a metrics file, as the commands that read one need it (`tcod compare`
 * draws every field named here, `tcod metrics` and the sinks read every number of a row, the report
 * the feedback rules'): undefined for a whole row. The one check of a metrics row, so the readers and
 * a resume agree on what is damaged. A number must be finite: JSON.parse reads `1e999` as Infinity,
 * which tcod never writes (JSON.stringify writes a non-finite number as null).
 */
export function rowProblem(line: string): string | undefined {
  const parsed = parseRow(line);
  return "problem" in parsed ? parsed.problem : undefined;
}

/** What is wrong with a line: rowProblem's message, and where JSON.parse stopped when it is not JSON. */
type RowProblem = { problem: string; json?: JsonSyntaxError };

/** A line of a metrics file parsed once: the row, or what is wrong with it (rowProblem's message). */
function parseRow(line: string): { row: MetricsRow } | RowProblem {
  let r: unknown;
  try { r = JSON.parse(line); } catch (e) {
    const json = jsonSyntaxError(e, line);
    if (!json) throw e;
    return { problem: NOT_A_ROW, json };
  }
  if (!obj(r) || (r.kind !== "train" && r.kind !== "eval") || typeof r.step !== "number") return { problem: NOT_A_ROW };
  const problem = fieldProblem(r);
  return problem ? { problem: `is ${r.kind === "eval" ? "an eval" : "a train"} row ${problem}` } : { row: r as unknown as MetricsRow };
}

/** A value as a message shows it: JSON, cut short; a non-finite number in words. */
function shown(v: unknown): string {
  if (typeof v === "number" && !Number.isFinite(v)) return "a number too large for a double";
  const j = JSON.stringify(v) ?? String(v);
  return j.length > 40 ? `${j.slice(0, 40)}…` : j;
}

/** The tail of a message refusing the value `v` at `path`: `whose \`path\` is VALUE, not WHAT`. */
const whose = (path: string, v: unknown, what: string): string => `whose \`${path}\` is ${shown(v)}, not ${what}`;

/** The fields a row holds besides its numbers (each checked on its own below). */
const STRUCTURED = new Set(["kind", "step", "name", "time", "kl", "tokens", "coefs", "feedback"]);

/** The first problem of a row's fields, as the tail of rowProblem's message, if any. */
function fieldProblem(r: Record<string, unknown>): string | undefined {
  const first = r.kind === "eval" ? 0 : 1;
  if (!Number.isSafeInteger(r.step) || (r.step as number) < first) return whose("step", r.step, `an integer ≥ ${first}`);
  if (r.time !== undefined && !obj(r.time)) return "without a `time` object";
  if (r.kind === "eval") {
    if (typeof r.name !== "string") return "without a string `name`";
    if (!num(r.successRate)) return missing("successRate", r.successRate);
  } else {
    for (const k of ["successRate", "horizon", "prefix", "studentTurns"]) if (!num(r[k])) return missing(k, r[k]);
    if (!obj(r.kl) || !num(r.kl.mean) || !Array.isArray(r.kl.perTurn)) return "without `kl.mean` and `kl.perTurn`";
    const turn = r.kl.perTurn.findIndex((v) => v !== null && !num(v));
    if (turn >= 0) return whose(`kl.perTurn[${turn}]`, r.kl.perTurn[turn], "a number or null");
    if (!obj(r.tokens) || !num(r.tokens.prompt) || !num(r.tokens.response)) return "without `tokens.prompt` and `tokens.response`";
    if (!obj(r.coefs)) return "without a `coefs` object";
    const coef = Object.entries(r.coefs).find(([, v]) => !num(v));
    if (coef) return whose(`coefs.${coef[0]}`, coef[1], "a number");
    if (r.feedback !== undefined) {
      const f = feedbackProblem(r.feedback);
      if (f) return f;
    }
  }
  // Every other field is a number, or null (not measured, or not finite when written): `tcod metrics` shows each.
  const other = Object.entries(r).find(([k, v]) => !STRUCTURED.has(k) && v !== null && !num(v));
  if (other) return whose(other[0], other[1], "a number or null");
  const time = Object.entries(r.time ?? {}).find(([, v]) => !num(v));
  if (time) return whose(`time.${time[0]}`, time[1], "a number of seconds");
  return undefined;
}

/** Why a numeric field is refused: absent or not a number, or not finite. */
const missing = (k: string, v: unknown): string => (typeof v === "number" ? whose(k, v, "a finite number") : `without a numeric \`${k}\``);

/** A train row's `feedback` as the report and `tcod metrics` read it (plan/feedback.ts FeedbackSummary). */
function feedbackProblem(f: unknown): string | undefined {
  if (!obj(f) || !obj(f.values)) return "without `feedback.values` (an object)";
  const value = Object.entries(f.values).find(([, v]) => v !== null && !num(v));
  if (value) return whose(`feedback.values.${value[0]}`, value[1], "a number or null");
  if (f.stages === undefined) return undefined;
  if (!obj(f.stages)) return whose("feedback.stages", f.stages, "an object");
  for (const [name, st] of Object.entries(f.stages)) {
    const ok = obj(st) && num(st.stage) && num(st.streak) && typeof st.rule === "string"
      && (st.advancedAt === null || num(st.advancedAt)) && (st.signal === null || num(st.signal));
    if (!ok) return whose(`feedback.stages.${name}`, st, "a stage (`stage`, `streak`, `advancedAt`, `signal`, `rule`)");
  }
  return undefined;
}

/**
 * Why a train row of step `step` cannot follow the rows before it (train steps increase: a file
 * holding two runs' rows, or rows pasted out of order, would be drawn as one run), given the last
 * train step before it (0: none).
 */
function orderProblem(step: number, last: number): string | undefined {
  return step <= last ? `is a train row of step ${step} after the train row of step ${last} (train steps increase; are two runs' rows in one file?)` : undefined;
}

/**
 * One line of a metrics file after the lines before it: the row, or what is wrong with it — rowProblem's
 * check, then, for a train row, orderProblem against the file's train rows so far. A resume's kept
 * rows and readMetrics take each line through one of these, so each line is parsed once.
 */
function rowReader(): (line: string) => { row: MetricsRow } | RowProblem {
  let lastTrain = 0;
  return (line) => {
    const parsed = parseRow(line);
    if ("problem" in parsed || parsed.row.kind !== "train") return parsed;
    const problem = orderProblem(parsed.row.step, lastTrain);
    lastTrain = parsed.row.step;
    return problem ? { problem } : parsed;
  };
}

/**
 * The rows of a metrics file; a line that is not a whole row is a RunFolderError naming the file and
 * line, with what a resume can do about it (damagedRowHint). The one exception: a last line without
 * its newline that is not JSON is a row being written (a live run, or one killed mid-write): it is
 * left out, and `partialLastLine` is told its line number so a reader can say so.
 */
export function readMetrics(path: string, partialLastLine?: (line: number) => void): MetricsRow[] {
  return readRows(path, (line, problem, start) => {
    throw new RunFolderError(`${path}: line ${line} ${problem.problem}${notJson(problem)}`, { where: { file: path, line, ...(problem.json ? { column: problem.json.column } : {}) }, hint: damagedRowHint(path, start) });
  }, partialLastLine);
}

/**
 * The rows of a metrics file, a line that is not a whole row left out once `damaged` is told its
 * number and why (rowProblem's message): for a summary of many runs (bench/study/summarize.ts) that
 * says what it could not read and goes on. A file that cannot be read is a RunFolderError, as above.
 */
export function readMetricsSkipping(path: string, damaged: (line: number, why: string) => void, partialLastLine?: (line: number) => void): MetricsRow[] {
  return readRows(path, (line, problem) => damaged(line, `${problem.problem}${notJson(problem)}`), partialLastLine);
}

/** readMetrics's loop: each line that is not a whole row goes to `damaged` (with its byte offset). */
function readRows(path: string, damaged: (line: number, problem: RowProblem, start: number) => void, partialLastLine?: (line: number) => void): MetricsRow[] {
  let text: string;
  try {
    text = readTextFile(path, MAX_RUN_FILE_BYTES);
  } catch (e) {
    throw new RunFolderError(`cannot read ${path} (${fileReadError(e).message})`, { where: { file: path }, hint: "A run's metrics.jsonl is a file of JSON rows that `tcod run` writes; restore it, or run the curriculum again in a new --out folder." });
  }
  const rows: MetricsRow[] = [];
  const lines = text.split("\n");
  let at = 0; // the byte offset of line i
  const read = rowReader();
  lines.forEach((l, i) => {
    const start = at;
    at += Buffer.byteLength(l) + 1;
    if (l.length === 0) return;
    const parsed = read(l);
    if ("problem" in parsed) {
      // Unterminated and not JSON: cut short while being written. A whole JSON value there is no row being written.
      if (parsed.problem === NOT_A_ROW && i === lines.length - 1 && !isJson(l)) { partialLastLine?.(i + 1); return; }
      damaged(i + 1, parsed, start);
      return;
    }
    rows.push(parsed.row);
  });
  return rows;
}

/** What a reader prints of the row left out by readMetrics (`partialLastLine`). */
export function partialNote(command: string, path: string, line: number): string {
  return `${command}: note: ${path}:${line}: the last line is not a whole row yet (a run still writing, or one killed mid-write); it is left out\n`;
}

/** A line that is not JSON: why, after rowProblem's message ("": it is JSON). */
const notJson = (p: RowProblem): string => (p.json ? `: not JSON (${p.json.message} at column ${p.json.column})` : "");

const isJson = (line: string): boolean => { try { JSON.parse(line); return true; } catch { return false; } };

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
