/**
 * Sample episodes: a few of a step's scored training episodes kept as text, turn by turn, with each
 * turn's reverse KL to the teacher — what the agent actually did, for the run report and for a
 * person reading RUN_DIR/episodes.jsonl.
 *
 * Which steps: the first, the last, and every `every`-th in between (about 20 sampled steps per
 * run). Which episodes: the first won and the first failed episode of the step's batch (batch order),
 * topped up with the next ones to `perStep`, so a report shows a success beside a failure when the
 * step has both. The turn's KL is the k1 estimate the metrics' per-turn KL is built from: the mean
 * over the turn's sampled response tokens of log p_S − log p_T.
 *
 * Samples travel with the step's rollout statistics through the staleness pipeline (and its
 * checkpoint) and are written when the step's metrics row is written, so a resumed run's file equals
 * an uninterrupted run's.
 */
import { appendFileSync, existsSync, writeFileSync } from "node:fs";
import type { Tokenizer } from "./backends/backend.js";
import type { ScoredEpisode } from "./replay.js";
import type { EpisodeRecord } from "./rollout.js";
import { turnKlMeans } from "./signals/kl.js";
import { responseText } from "./rollout.js";
import { writeFileAtomicSync } from "./fs-atomic.js";
import { RunFolderError } from "./checkpoint.js";
import { brokenLink, fileReadError, MAX_RUN_FILE_BYTES, readTextFile } from "../plan/read-file.js";
import { jsonSyntaxError } from "../plan/json-error.js";

export interface SampleTurn {
  /** Turn index in the episode (replayed expert steps count, as in the metrics' per-turn KL). */
  index: number;
  observation: string;
  /** The student's response text (stop tokens removed). */
  response: string;
  /** The parsed action, or null when the response did not parse. */
  action: string | null;
  /** The parsed action is one of the commands the env listed. */
  admissible: boolean;
  /** Mean k1 reverse KL over the turn's response tokens (nats/token); null in an evaluation (no teacher scores). */
  kl: number | null;
  tokens: number;
  finishReason: "stop" | "length";
}

export interface EpisodeSample {
  step: number;
  /** The evaluation's name for an evaluation episode (after training step `step`); absent for training episodes. */
  eval?: string;
  /** Position of the episode in its step's batch. */
  episode: number;
  task: string;
  split: string;
  won: boolean;
  reward: number;
  /** Cut by the curriculum's horizon before the env was done. */
  truncated: boolean;
  horizon: number;
  /** The expert actions replayed before the student played (TCOD-b2f). */
  prefix: string[];
  turns: SampleTurn[];
}

/** Observations longer than this are cut in a sample (the run's rows keep every token). */
export const MAX_OBSERVATION_CHARS = 2000;

/** Is step `step` of a `steps`-step run one whose episodes are sampled? */
export function samplesDue(step: number, steps: number, target = 20): boolean {
  const every = Math.max(1, Math.floor(steps / target));
  return step === 1 || step === steps || step % every === 0;
}

/** Which episodes of a batch to keep: the first won, the first failed, then batch order, `perStep` in all. */
export function pickEpisodes<E extends { record: EpisodeRecord }>(scored: readonly E[], perStep: number): E[] {
  const played = scored.filter((e) => e.record.turns.length > 0);
  const firstWon = played.find((e) => e.record.won), firstLost = played.find((e) => !e.record.won);
  const picked = [firstWon, firstLost].filter((e): e is E => e !== undefined).slice(0, perStep);
  for (const e of played) {
    if (picked.length >= perStep) break;
    if (!picked.includes(e)) picked.push(e);
  }
  return picked.sort((a, b) => a.record.spec.index - b.record.spec.index);
}

/** A scored episode as text, turn by turn, with each turn's k1 reverse KL (null without teacher scores). */
export function episodeSample(step: number, e: { record: EpisodeRecord; teacher?: number[][] }, tokenizer: Tokenizer): EpisodeSample {
  const r = e.record;
  const kl: (number | null)[] = e.teacher ? turnKlMeans(r.turns.map((t) => t.logprobs), e.teacher) : r.turns.map(() => null);
  return {
    step, episode: r.spec.index, task: r.spec.task.id, split: r.spec.task.split,
    won: r.won, reward: r.reward, truncated: r.truncated, horizon: r.spec.horizon,
    prefix: [...r.spec.prefixActions],
    turns: r.turns.map((t, i) => ({
      index: t.index,
      observation: cut(t.observation),
      response: responseText(tokenizer, t.response),
      action: t.action,
      admissible: t.action !== null && t.context.admissible.includes(t.action),
      kl: kl[i]!,
      tokens: t.response.length,
      finishReason: t.finishReason,
    })),
  };
}

/** The samples of step `step` (none when the step is not due). */
export function stepSamples(step: number, steps: number, scored: readonly ScoredEpisode[], tokenizer: Tokenizer, perStep = 2): EpisodeSample[] {
  if (!samplesDue(step, steps)) return [];
  return pickEpisodes(scored, perStep).map((e) => episodeSample(step, e, tokenizer));
}

/**
 * Episodes of an evaluation kept as text (the first won and the first failed, `perEval` in all), so
 * that a success rate can be read back to what the agent did. Written after the training step
 * `step`, with the evaluation's name; no KL (an evaluation has no teacher scores).
 */
export function evalSamples(step: number, name: string, records: readonly EpisodeRecord[], tokenizer: Tokenizer, perEval = 2): EpisodeSample[] {
  return pickEpisodes(records.map((record) => ({ record })), perEval).map((e) => ({ ...episodeSample(step, e, tokenizer), eval: name }));
}

const cut = (s: string): string => (s.length > MAX_OBSERVATION_CHARS ? `${s.slice(0, MAX_OBSERVATION_CHARS)}…` : s);

/** A line of episodes.jsonl that is not a sample: its number (1-based), why, and where JSON.parse stopped. */
export interface SampleLineProblem { line: number; problem: string; column?: number }

/**
 * What a reader of episodes.jsonl reports of lines it left out: a warning for damaged lines (with
 * them, `damaged`, so a caller told of the same lines twice can say so once), a note for a cut-off last one.
 */
export type SampleFileNote = (kind: "warning" | "note", message: string, damaged?: readonly SampleLineProblem[]) => void;

/** A line of the file: a sample, a line cut off while it was written (the unterminated last line, not JSON), or damaged. */
type ReadLine = { sample: EpisodeSample } | { partial: true } | { problem: string; column?: number };

const isObj = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const isNum = (v: unknown): v is number => typeof v === "number" && Number.isFinite(v);

/**
 * What is wrong with a parsed line as a sample (undefined: nothing): the fields the report's panel
 * and `learn-summary` read, each of the type `episodeSample` writes.
 */
export function sampleProblem(v: unknown): string | undefined {
  if (!isObj(v)) return `holds ${Array.isArray(v) ? "a list" : v === null ? "null" : `a ${typeof v}`}, not a sample object`;
  if (!Number.isSafeInteger(v.step) || (v.step as number) < 0) return "has no `step` (a whole number ≥ 0)";
  if (v.eval !== undefined && typeof v.eval !== "string") return "has an `eval` that is not a string";
  for (const k of ["task", "split"]) if (typeof v[k] !== "string") return `has no string \`${k}\``;
  for (const k of ["episode", "reward", "horizon"]) if (!isNum(v[k])) return `has no numeric \`${k}\``;
  for (const k of ["won", "truncated"]) if (typeof v[k] !== "boolean") return `has no boolean \`${k}\``;
  if (!Array.isArray(v.prefix) || !v.prefix.every((a) => typeof a === "string")) return "has no `prefix` (a list of actions)";
  if (!Array.isArray(v.turns)) return "has no `turns` list";
  const bad = v.turns.findIndex((t) => !(isObj(t) && isNum(t.index) && typeof t.observation === "string" && typeof t.response === "string"
    && (t.action === null || typeof t.action === "string") && typeof t.admissible === "boolean" && (t.kl === null || isNum(t.kl))
    && isNum(t.tokens) && (t.finishReason === "stop" || t.finishReason === "length")));
  if (bad >= 0) return `has a \`turns[${bad}]\` that is not a turn (index, observation, response, action, admissible, kl, tokens, finishReason)`;
  return undefined;
}

/** Line `i` (0-based) of the file's `n` pieces split at newlines. */
function readLine(l: string, i: number, n: number): ReadLine {
  let v: unknown;
  try { v = JSON.parse(l); } catch (e) {
    // Unterminated and not JSON: cut short while being written (a run killed mid-write).
    if (i === n - 1) return { partial: true };
    const j = jsonSyntaxError(e, l);
    if (!j) throw e;
    return { problem: `is not JSON (${j.message} at column ${j.column})`, column: j.column };
  }
  const problem = sampleProblem(v);
  return problem === undefined ? { sample: v as EpisodeSample } : { problem };
}

/** The one warning for a file's damaged lines: the first named, all counted. */
export function damagedLinesMessage(path: string, damaged: readonly SampleLineProblem[], what: string): string {
  const first = damaged[0]!;
  const more = damaged.length > 1 ? `; ${damaged.length} lines in all (${damaged.slice(0, 10).map((d) => d.line).join(", ")}${damaged.length > 10 ? ", …" : ""})` : "";
  return `${path}:${first.line}${first.column !== undefined ? `:${first.column}` : ""}: not a sample episode tcod wrote (line ${first.line} ${first.problem})${more}; ${what}`;
}

/** The note for an unterminated last line left out. */
export function partialSampleMessage(path: string, line: number): string {
  return `${path}:${line}: the last line is not a whole sample (a run killed while writing it); it is left out`;
}

/**
 * RUN_DIR/episodes.jsonl: one sample per line. A resumed run keeps the lines of the steps its
 * checkpoint has trained (their metrics rows are kept too) and drops the rest.
 */
export class EpisodeSampleWriter {
  constructor(readonly path: string) {}

  /**
   * Starts a fresh file, or, on a resume, keeps the samples of the steps through `keepThroughStep`.
   * A line that is not a sample is kept as it is (the report leaves it out and says so) and `tell`
   * warns of it; an unterminated last line that is not JSON was being written after the checkpoint:
   * it is dropped, with a note.
   */
  open(keepThroughStep?: number, tell?: SampleFileNote): void {
    const text = keepThroughStep === undefined ? undefined : this.readKept();
    if (keepThroughStep === undefined || text === undefined) { writeFileSync(this.path, ""); return; }
    const lines = text.split("\n");
    const damaged: SampleLineProblem[] = [];
    let partial: number | undefined;
    const kept = lines.filter((l, i) => {
      if (l.length === 0) return false;
      const r = readLine(l, i, lines.length);
      if ("partial" in r) { partial = i + 1; return false; }
      if ("problem" in r) { damaged.push({ line: i + 1, ...r }); return true; }
      return r.sample.step <= keepThroughStep;
    });
    if (damaged.length) tell?.("warning", damagedLinesMessage(this.path, damaged, "the resume keeps such lines as they are and the report leaves them out"), damaged);
    if (partial !== undefined) tell?.("note", partialSampleMessage(this.path, partial));
    // Replaced atomically: a run killed while resuming keeps every sample of its trained steps.
    writeFileAtomicSync(this.path, kept.map((l) => `${l}\n`).join(""));
  }

  /**
   * The file a resume keeps the samples of (undefined: there is none), read-only; one that cannot be
   * read is a RunFolderError. A resume calls it before it takes the run folder (a refused resume writes nothing).
   */
  readKept(): string | undefined {
    const unreadable = brokenLink(this.path);
    if (!existsSync(this.path) && !unreadable) return undefined;
    try {
      if (unreadable) throw unreadable;
      return readTextFile(this.path, MAX_RUN_FILE_BYTES);
    } catch (e) {
      // A folder, a pipe, a link that leads nowhere or a file past the limit where the samples were: the resume cannot keep them.
      throw new RunFolderError(`cannot resume: ${this.path} cannot be read (${fileReadError(e).message})`, {
        where: { file: this.path }, hint: `Move ${this.path} out of the way (it holds the report's sample episodes of the steps so far), then resume again.`,
      });
    }
  }

  write(samples: readonly EpisodeSample[]): void {
    if (samples.length) appendFileSync(this.path, samples.map((s) => `${JSON.stringify(s)}\n`).join(""));
  }
}

/** The samples of episodes.jsonl, the lines that are not samples, and an unterminated last line left out. */
export interface EpisodeSamplesRead { samples: EpisodeSample[]; damaged: SampleLineProblem[]; partialLastLine?: number }

/**
 * Reads RUN_DIR/episodes.jsonl. A line that is not a sample (sampleProblem) is left out and listed in
 * `damaged` with its number and why; an unterminated last line that is not JSON (a run killed while
 * writing it) is left out as `partialLastLine`. A folder, a pipe or a file past MAX_RUN_FILE_BYTES in
 * its place is a RunFolderError (TC7014) naming it.
 */
export function readEpisodeSamples(path: string): EpisodeSamplesRead {
  if (!existsSync(path)) return { samples: [], damaged: [] };
  let text: string;
  try {
    text = readTextFile(path, MAX_RUN_FILE_BYTES);
  } catch (e) {
    throw new RunFolderError(`the report cannot read ${path} (${fileReadError(e).message})`, {
      where: { file: path }, hint: `Move ${path} out of the way (it holds the report's sample episodes), then write the report again by resuming the run.`,
    });
  }
  const samples: EpisodeSample[] = [];
  const damaged: SampleLineProblem[] = [];
  let partialLastLine: number | undefined;
  const lines = text.split("\n");
  lines.forEach((l, i) => {
    if (l.length === 0) return;
    const r = readLine(l, i, lines.length);
    if ("partial" in r) partialLastLine = i + 1;
    else if ("problem" in r) damaged.push({ line: i + 1, ...r });
    else samples.push(r.sample);
  });
  return { samples, damaged, ...(partialLastLine !== undefined ? { partialLastLine } : {}) };
}
