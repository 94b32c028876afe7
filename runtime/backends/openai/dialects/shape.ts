/**
 * Small readers for response bodies that throw `MalformedResponse` naming the exact JSON path that
 * failed, so an error says `choices[0].prompt_logprobs[5]["17"].logprob: expected a number, got null`
 * instead of "cannot read properties of undefined".
 */
import { describe, MalformedResponse } from "../errors.js";

export type Json = unknown;

export function field(parent: string, key: string | number): string {
  if (typeof key === "number") return `${parent}[${key}]`;
  return /^[A-Za-z_][A-Za-z0-9_]*$/.test(key) ? (parent ? `${parent}.${key}` : key) : `${parent}[${JSON.stringify(key)}]`;
}

export function asObject(v: Json, path: string): Record<string, Json> {
  if (v === null || typeof v !== "object" || Array.isArray(v)) throw new MalformedResponse(path || "(body)", `expected an object, got ${describe(v)}`);
  return v as Record<string, Json>;
}

export function asArray(v: Json, path: string): Json[] {
  if (!Array.isArray(v)) throw new MalformedResponse(path || "(body)", `expected an array, got ${describe(v)}`);
  return v;
}

/** What a null or a string where a number belongs most likely is, and what to do. */
const NOT_A_NUMBER_HINT = "The server's value is not a finite number: vLLM and the tcod worker write NaN and +Infinity as null (SGLang every " +
  "non-finite float, -inf included), other servers a string. A model whose logits overflowed or diverged gives them (fp16 overflow, a broken " +
  "checkpoint or adapter): check it on the server.";

/** A finite number (JSON.parse reads `1e400` as Infinity; NaN and Infinity never pass). */
export function asNumber(v: Json, path: string): number {
  if (typeof v !== "number" || !Number.isFinite(v)) {
    const odd = v === null || typeof v === "string" || typeof v === "number";
    throw new MalformedResponse(path, `expected a finite number, got ${describe(v)}`, odd ? NOT_A_NUMBER_HINT : undefined);
  }
  return v;
}

/**
 * The log-probability that stands for a probability of zero: vLLM's serving layer writes -9999.0 for
 * -inf, and so does the tcod worker. Every log-probability read is clamped up to it, so the loss and
 * the metrics never see -Infinity, nor a magnitude whose arithmetic overflows.
 */
export const ZERO_PROB_LOGPROB = -9999;

/**
 * A log-probability: a number ≤ 0 (tiny positive round-off, up to 1e-4, is read as 0). -inf — written
 * as the string "-inf" or "-Infinity" (JSON has no -Infinity), or any number below -9999 — is read as
 * ZERO_PROB_LOGPROB: a probability of zero, as vLLM writes it.
 */
export function asLogprob(v: Json, path: string): number {
  if (v === "-inf" || v === "-Infinity") return ZERO_PROB_LOGPROB;
  if (v === -Infinity) return ZERO_PROB_LOGPROB; // JSON.parse reads -1e400 as -Infinity
  if (typeof v !== "number" || !Number.isFinite(v)) {
    throw new MalformedResponse(path, `expected a log-probability (a number ≤ 0), got ${describe(v)}`, NOT_A_NUMBER_HINT);
  }
  if (v > 1e-4) {
    throw new MalformedResponse(path, `expected a log-probability (≤ 0), got ${v}`,
      "A log-probability above 0 is a probability above 1: the server reports something else there (logits, a score), or its numbers are broken. Is `dialect` right for this server?");
  }
  return Math.max(ZERO_PROB_LOGPROB, Math.min(v, 0));
}

/**
 * The log-probability of a token the server itself sampled: as asLogprob, but never a probability of
 * zero — a token drawn from a distribution had probability above 0 there, so the server's logprobs
 * are not of the distribution it sampled from, and neither importance ratios nor entropies could use them.
 */
export function asSampledLogprob(v: Json, path: string): number {
  const x = asLogprob(v, path);
  if (x <= ZERO_PROB_LOGPROB) {
    throw new MalformedResponse(path, `gives the token the server sampled a probability of zero (${JSON.stringify(v)})`,
      "The server's logprobs are not those of the distribution it sampled from (a logits processor, grammar or penalty applied after they were taken, or a broken kernel); tcod cannot train on them. Sample without such processors, or see the server's log.");
  }
  return x;
}

/** The largest entropy there is, in nats: a uniform distribution over 2³¹ tokens (token ids are int32). */
const MAX_ENTROPY_NATS = 31 * Math.LN2;

/** An entropy in nats: 0 ≤ H ≤ ln 2³¹ (tiny negative round-off, down to -1e-4, is read as 0). */
export function asEntropy(v: Json, path: string): number {
  const x = asNumber(v, path);
  if (x < -1e-4 || x > MAX_ENTROPY_NATS + 1e-4) {
    throw new MalformedResponse(path, `expected an entropy in nats, 0 ≤ H ≤ ${MAX_ENTROPY_NATS.toFixed(2)} (a distribution over at most 2³¹ tokens), got ${x}`,
      "The server's entropy is not that of a probability distribution: its numbers are broken, or it reports something else there. See its log.");
  }
  return Math.min(Math.max(x, 0), MAX_ENTROPY_NATS);
}

export function asTokenId(v: Json, path: string): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0) throw new MalformedResponse(path, `expected a token id (integer ≥ 0), got ${describe(v)}`);
  return v;
}

/**
 * Ids a server names — the tokens it sampled, or the top-k alternatives it lists — lie inside the
 * model's vocabulary, where its size is known (`vocabSize`, the rows of the model's embedding): a
 * sampled id past it would be trained on as a token the model has no row for, a listed one trained
 * toward by the `topk` estimator (the student's log-probability read at that row): an IndexError or a
 * CUDA device assert in the trainer. `at(i)` names position i.
 */
export function checkInVocabulary(ids: readonly number[], vocabSize: number | undefined, at: (i: number) => string, what: "sampled" | "listed" = "sampled"): void {
  if (vocabSize === undefined || vocabSize <= 0) return;
  const i = ids.findIndex((id) => id >= vocabSize);
  if (i < 0) return;
  throw new MalformedResponse(at(i), `token id ${ids[i]} is past the model's vocabulary of ${vocabSize} ids (0…${vocabSize - 1})`,
    (what === "sampled" ? "The server sampled a token the model has no embedding row for" : "The server lists among its top-k alternatives a token the model has no embedding row for") +
    ": it serves another model than the one trained (a larger vocabulary), or its answer is broken. " +
    "Serve the model the plan names (the trainer's --model, the teacher's path) at this URL, and see the server's log.");
}

/**
 * What a scored answer's top-k ids are checked against: the answering model's vocabulary and, for a
 * teacher, the student's (DialectOptions.studentVocabSize); unknown sizes are not checked.
 */
export interface ListedBounds { vocabSize?: number; studentVocabSize?: number }

/**
 * Top-k alternatives inside the model's vocabulary and, for a teacher, inside the student's: the topk
 * estimator trains the student toward every listed id (signals/topk-target.ts), so an id the student
 * has no output row for is refused here, naming the field, rather than mid-step without the server.
 */
export function checkListedIds(ids: readonly number[], b: ListedBounds | undefined, at: (i: number) => string): void {
  checkInVocabulary(ids, b?.vocabSize, at, "listed");
  const student = b?.studentVocabSize;
  if (student === undefined || student <= 0) return;
  const i = ids.findIndex((id) => id >= student);
  if (i < 0) return;
  throw new MalformedResponse(at(i), `token id ${ids[i]} is past the student's vocabulary of ${student} ids (0…${student - 1})`,
    "The teacher lists among its top-k alternatives a token the student has no output row for, and the topk estimator trains the student toward every id listed: " +
    "the teacher's vocabulary is larger than the student's (another model family, a tokenizer with added tokens). " +
    "Serve a teacher whose tokenizer and vocabulary are the student's, or use the k1 estimator, which reads no top-k.");
}

export function asString(v: Json, path: string): string {
  if (typeof v !== "string") throw new MalformedResponse(path, `expected a string, got ${describe(v)}`);
  return v;
}

export function get(o: Record<string, Json>, key: string, parent: string): { value: Json; path: string } {
  return { value: o[key], path: field(parent, key) };
}

/** One position's top-k alternatives, each token once (a list naming one twice is not a distribution's top k). */
export function distinctAlternatives<T extends { token: number }>(list: T[], path: string): T[] {
  const seen = new Set<number>();
  for (const [a, x] of list.entries()) {
    if (seen.has(x.token)) throw new MalformedResponse(`${path}[${a}]`, `lists token ${x.token} a second time among the top-k alternatives`);
    seen.add(x.token);
  }
  return list;
}

/** Exactly `n` entries: a server that answers more than it was asked for is not answering this request. */
export function requireExactLength(xs: readonly unknown[], n: number, path: string, why: string): void {
  if (xs.length !== n) throw new MalformedResponse(path, `expected ${n} ${n === 1 ? "entry" : "entries"} (${why}), got ${xs.length}`);
}

export function requireLength(xs: readonly unknown[], n: number, path: string, why: string): void {
  if (xs.length < n) throw new MalformedResponse(path, `expected at least ${n} entries (${why}), got ${xs.length}`);
}
