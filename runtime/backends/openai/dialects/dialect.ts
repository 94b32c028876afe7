/**
 * What a dialect is: pure request builders and response parsers for sampling and scoring. The client
 * does the HTTP; a dialect never touches the network, so each is tested against documented bodies.
 */
import type { SampleRequest, SampleResult, ScoreRequest, ScoreResult } from "../../backend.js";
import { UnsupportedRequest } from "../errors.js";

export type DialectName = "vllm" | "sglang" | "worker";

/**
 * Which distribution a server's logprobs describe (docs/REFERENCES.md#vllm, #sglang):
 * - "raw": log_softmax(logits), before temperature — vLLM's default (`--logprobs-mode raw_logprobs`);
 * - "processed": log_softmax(logits / T) — SGLang's default, and vLLM with
 *   `--logprobs-mode processed_logprobs`.
 */
export type LogprobsMode = "raw" | "processed";

export interface HttpCall {
  path: string;
  body: unknown;
}

export interface DialectOptions {
  /** The `model` field (vLLM: a served model or a hot-loaded LoRA name). */
  model: string;
  /** What the server's logprobs mean; defaults per dialect (vllm raw, sglang processed, worker processed). */
  logprobsMode?: LogprobsMode;
  /** Token ids that stop a response (EOS / end of turn), sent as `stop_token_ids`. */
  stopTokenIds?: number[];
  /** Server cap on top-k alternatives (vLLM `--max-logprobs`, default 20). */
  maxLogprobs?: number;
  /** SGLang: LoRA adapter name for `lora_path` on /generate (vLLM selects adapters through `model`). */
  loraName?: string;
  /**
   * The base-model names the server listed at start (/v1/models entries without a `parent`): vLLM
   * answers a request for any of its `--served-model-name`s with the first, so an answer naming another
   * of these is the same model. Where unknown, the answer's `model` must be the one asked for.
   */
  servedModels?: readonly string[];
  /**
   * The model's vocabulary size (rows of its embedding), where known: sampled ids and top-k
   * alternatives at or past it are refused (shape.ts checkInVocabulary). The worker reports it (/info vocab_size); vLLM and SGLang do
   * not, so for them it is the trainer's, or `vocabSize` given through the API, or unknown (unchecked).
   */
  vocabSize?: number;
  /**
   * A teacher's: the student's vocabulary size (the rows its train() normalises over), where known.
   * Top-k alternatives at or past it are refused where the answer is read (shape.ts checkListedIds):
   * the topk estimator's target lives on the student's rows alone.
   */
  studentVocabSize?: number;
}

export interface Dialect {
  readonly name: DialectName;
  readonly logprobsMode: LogprobsMode;
  /** Largest number of sample requests one call may carry (1 where seeds are per call, as in vLLM). */
  readonly sampleBatch: number;
  /** One call for a group of requests sharing `sampleGroupKey`. */
  buildSample(reqs: SampleRequest[]): HttpCall;
  parseSample(json: unknown, reqs: SampleRequest[]): SampleResult[];
  /** Largest number of score requests one call should carry. */
  readonly scoreBatch: number;
  /** One call for a group of requests sharing temperature and topk (see `scoreGroupKey`). */
  buildScore(reqs: ScoreRequest[]): HttpCall;
  parseScore(json: unknown, reqs: ScoreRequest[]): ScoreResult[];
}

/** Requests that can share one sampling call (the worker's /sample takes per-row seeds). */
export function sampleGroupKey(r: SampleRequest): string {
  return `${r.maxTokens}|${r.temperature}`;
}

/** Requests that can share one scoring call: same temperature, same top-k, the same need of the entropy. */
export function scoreGroupKey(r: ScoreRequest): string {
  return `${r.temperature}|${r.topk ?? 0}|${r.entropy === true}`;
}

/**
 * Refuse a temperature whose logprobs the server cannot report faithfully. At T = 1 raw and processed
 * agree. At T = 0 (greedy) there is no sampling distribution to report; the server's values pass
 * through and must not be used as importance weights. Any other T needs processed logprobs.
 */
export function checkSampleTemperature(mode: LogprobsMode, t: number, dialect: DialectName): void {
  if (!(t >= 0)) throw new UnsupportedRequest(`sampling temperature ${t} is invalid`, "Use a temperature ≥ 0.");
  if (mode === "raw" && t !== 1 && t !== 0) {
    throw new UnsupportedRequest(
      `sampling at temperature ${t} against a ${dialect} server whose logprobs are raw (pre-temperature): the returned logprobs would not be the sampling distribution the student's loss needs`,
      dialect === "vllm"
        ? "Start vLLM with `--logprobs-mode processed_logprobs` and set logprobsMode: processed, or sample the student at temperature 1."
        : "Set the server to return post-temperature logprobs (SGLang: unset SGLANG_RETURN_ORIGINAL_LOGPROB) and logprobsMode: processed, or sample at temperature 1.",
    );
  }
}

export function checkScoreTemperature(mode: LogprobsMode, t: number, dialect: DialectName): void {
  if (!(t > 0)) throw new UnsupportedRequest(`scoring temperature ${t} is invalid`, "Score at a temperature > 0 (normally 1).");
  if (mode === "raw" && t !== 1) {
    throw new UnsupportedRequest(
      `scoring at temperature ${t} against a ${dialect} server whose logprobs are raw (pre-temperature): they would silently be the T = 1 values`,
      dialect === "vllm"
        ? "Score the teacher at temperature 1, or start vLLM with `--logprobs-mode processed_logprobs` and set logprobsMode: processed."
        : "Score at temperature 1, or unset SGLANG_RETURN_ORIGINAL_LOGPROB and set logprobsMode: processed.",
    );
  }
}

export function checkTopk(topk: number | undefined, max: number, dialect: DialectName): void {
  if (topk === undefined || topk === 0) return;
  if (!Number.isInteger(topk) || topk < 0) throw new UnsupportedRequest(`top-k ${topk} is not a non-negative integer`, "Write topk as 0, 1, 2, …");
  if (topk > max) {
    throw new UnsupportedRequest(`top-k ${topk} exceeds the server's cap of ${max} logprobs per position`,
      dialect === "vllm" ? `Lower topk to ≤ ${max}, or start vLLM with a larger \`--max-logprobs\` and set maxLogprobs to match.` : `Lower topk to ≤ ${max} or raise maxLogprobs.`);
  }
}

export function checkScoreShape(r: ScoreRequest, i: number): void {
  if (r.prompt.length === 0) {
    throw new UnsupportedRequest(`score request ${i} has an empty prompt: the first token of a sequence has no logprob`,
      "Every scored completion needs at least one prompt token before it (the chat template's opening tokens).");
  }
}

/** The single request of a one-request call (dialects whose sampling is not batched). */
export function only<T>(reqs: T[]): T {
  if (reqs.length !== 1 || reqs[0] === undefined) throw new Error(`expected exactly one request per call, got ${reqs.length}`);
  return reqs[0];
}

/** One scored position as a dialect reads it: the scored token's logprob, and its alternatives when top-k is asked. */
export interface PositionLogprobs { logprob: number; alternatives?: () => { token: number; logprob: number }[] }

/**
 * The completion part of a scored sequence (prompt ++ completion), read position by position with
 * `read(i, token)` (i indexes the whole sequence; `token` is the id scored there): the one loop of
 * every dialect's score parser. Top-k alternatives are ranked by logprob (ties by token id), k kept.
 */
export function completionLogprobs(r: ScoreRequest, read: (i: number, token: number) => PositionLogprobs): ScoreResult {
  const seq = [...r.prompt, ...r.completion];
  const logprobs: number[] = [];
  const topk: { token: number; logprob: number }[][] = [];
  for (let i = r.prompt.length; i < seq.length; i++) {
    const p = read(i, seq[i]!);
    logprobs.push(p.logprob);
    if (r.topk) topk.push((p.alternatives?.() ?? []).sort((a, b) => b.logprob - a.logprob || a.token - b.token).slice(0, r.topk));
  }
  return r.topk ? { logprobs, topk } : { logprobs };
}
