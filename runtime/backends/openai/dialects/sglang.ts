/**
 * SGLang's native `POST /generate`, token-in/token-out (docs/REFERENCES.md#sglang).
 *
 * - Sampling: `input_ids`, `return_logprob: true`; generated ids and logprobs are read from
 *   `meta_info.output_token_logprobs`, a list of `[logprob, token_id, text|null]` triples.
 * - Scoring: a batch of `input_ids` lists in one call with `logprob_start_len: 0`; the token at
 *   position i is `meta_info.input_token_logprobs[i]` (entry 0's logprob is null), its top-k
 *   alternatives `meta_info.input_top_logprobs[i]`.
 * - Logprobs are processed by default: log_softmax(logits / T), after temperature, before top-k/p —
 *   the opposite of vLLM (`SGLANG_RETURN_ORIGINAL_LOGPROB=1` makes them raw).
 * - The seed: SGLang's per-request seed field is not in the documented sampling parameters, so it is
 *   sent only when `seedField` names it (e.g. "sampling_seed" on versions that have it); otherwise
 *   sampling is not reproducible per request on SGLang.
 * - Prefill-only scoring: `max_new_tokens: 0` is used upstream but the reference says to verify it on
 *   the deployed version, so the default is 1 (the extra token is ignored); `scoreMaxNewTokens: 0`
 *   saves that decode step where it works.
 */
import type { SampleRequest, SampleResult, ScoreRequest, ScoreResult } from "../../backend.js";
import { AbortedGeneration, excerpt, MalformedResponse } from "../errors.js";
import {
  checkSampleTemperature, checkScoreShape, checkScoreTemperature, checkTopk, completionLogprobs,
  type Dialect, type DialectOptions, type HttpCall, type LogprobsMode,
  only,
} from "./dialect.js";
import {
  asArray, asLogprob, asObject, asSampledLogprob, asTokenId, checkInVocabulary, checkListedIds, distinctAlternatives, requireExactLength, requireLength,
  ZERO_PROB_LOGPROB, type Json, type ListedBounds,
} from "./shape.js";

export interface SglangOptions extends DialectOptions {
  /** Name of the per-request seed in `sampling_params`, where the server has one. */
  seedField?: string;
  /** `max_new_tokens` of a scoring call (default 1). */
  scoreMaxNewTokens?: number;
}

const DEFAULT_SCORE_BATCH = 16;

export function sglangSampleBody(o: SglangOptions, mode: LogprobsMode, req: SampleRequest): HttpCall {
  checkSampleTemperature(mode, req.temperature, "sglang");
  return {
    path: "/generate",
    body: {
      input_ids: req.prompt,
      sampling_params: {
        max_new_tokens: req.maxTokens,
        temperature: req.temperature,
        skip_special_tokens: false,
        no_stop_trim: true,
        ...(o.stopTokenIds && o.stopTokenIds.length > 0 ? { stop_token_ids: o.stopTokenIds } : {}),
        ...(o.seedField ? { [o.seedField]: req.seed } : {}),
      },
      return_logprob: true,
      ...(o.loraName ? { lora_path: o.loraName } : {}),
    },
  };
}

/**
 * How a triple's logprob is read: "sampled", the token the server drew (never a probability of zero,
 * so a null there is refused); "scored", a token of a scored sequence or a top-k alternative, where a
 * null is SGLang's -inf (`sglangLogprob`).
 */
type TripleKind = "sampled" | "scored";

/** The hint for a null SGLang wrote where no -inf can be. */
const SGLANG_NULL_HINT = "SGLang writes every non-finite float as null: -inf (a probability of zero) and NaN alike. Where a probability of zero " +
  "cannot be, the null is a NaN: a model whose logits overflowed or diverged (fp16 overflow, a broken checkpoint or adapter). Check it on the server.";

/**
 * A log-probability where SGLang's null stands for -inf: its /generate writes every non-finite float
 * as null (orjson; docs/REFERENCES.md#sglang), so a null is read as a probability of zero,
 * ZERO_PROB_LOGPROB, the -9999 vLLM writes. A NaN is written as null too; the callers refuse the
 * nulls that can only be one (all of a position's top-k, every token of a scored completion).
 */
function sglangLogprob(v: Json, path: string): number {
  return v === null ? ZERO_PROB_LOGPROB : asLogprob(v, path);
}

/** A `[logprob, token_id, text|null]` triple, its logprob read as `kind` says. */
function triple(v: Json, path: string, kind: TripleKind): { logprob: number; token: number; isNull: boolean } {
  const t = asArray(v, path);
  requireLength(t, 2, path, "[logprob, token_id, text]");
  const token = asTokenId(t[1], `${path}[1]`);
  if (kind === "scored") return { logprob: sglangLogprob(t[0], `${path}[0]`), token, isNull: t[0] === null };
  if (t[0] === null) {
    throw new MalformedResponse(`${path}[0]`, "is null, which SGLang writes for -inf and NaN alike; the token the server sampled can have neither (it had a probability above zero)", SGLANG_NULL_HINT);
  }
  return { logprob: asSampledLogprob(t[0], `${path}[0]`), token, isNull: false };
}

/** The hint for an answer whose server did not read the token ids it was sent. */
const PROMPT_CHANGED_HINT = "The server did not process the token ids it was sent: it truncated the prompt (a context limit) or re-tokenized it. " +
  "Keep episodes within the server's --context-length (a shorter horizon or fewer max tokens).";

/** `meta_info.prompt_tokens`, where given, is the number of input ids sent (SGLang counts the ids it read). */
function checkPromptTokens(meta: Record<string, Json>, sent: number, base: string): void {
  const n = meta.prompt_tokens;
  if (typeof n === "number" && n !== sent) throw new MalformedResponse(`${base}.prompt_tokens`, `is ${n}, but ${sent} input ids were sent`, PROMPT_CHANGED_HINT);
}

/**
 * A finish_reason of "stop" or "length". SGLang finishes a request it gave up on with
 * `{"type": "abort", "message", "status_code", "err_type"}`: one it refused as a client error (a 4xx
 * status_code or err_type "BadRequestError": an input over its context length, a bad parameter) would
 * abort again and is refused; any other — a request dropped unserved (aborted while the server paused
 * for a weight update, cancelled, out of memory, no status) — is an AbortedGeneration, retried by the
 * client as vLLM's "abort" is.
 */
function finishType(v: Json, base: string): "stop" | "length" {
  const fr = asObject(v, `${base}.finish_reason`);
  if (fr.type === "stop" || fr.type === "length") return fr.type;
  const why = typeof fr.message === "string" ? `: ${excerpt(fr.message, 200)}` : "";
  if (fr.type === "abort" && !isClientError(fr)) {
    throw new AbortedGeneration(`${base}.finish_reason.type`, `is "abort": the server gave up on the generation${why ? ` (${why.slice(2)})` : ""}`,
      "SGLang aborts a request it drops unserved (cancelled, aborted while it paused for a weight update, under memory pressure); tcod retried it with backoff and every attempt aborted. " +
      "See the server's log; lower `concurrency` in the backend spec, or give SGLang more KV-cache memory (--mem-fraction-static) or fewer requests at once (--max-running-requests).");
  }
  throw new MalformedResponse(`${base}.finish_reason.type`, `expected "stop" or "length", got ${JSON.stringify(fr.type)} (an aborted generation${why})`,
    "The server refused the request (an input over its context length, a parameter it does not take): it would abort again. Its message and log say why.");
}

/** An SGLang abort that reports a client error (4xx other than 408/429, or err_type "BadRequestError"): the same request fails the same way. */
function isClientError(fr: Record<string, Json>): boolean {
  const s = fr.status_code;
  if (typeof s === "number" && s >= 400 && s < 500) return s !== 408 && s !== 429;
  return fr.err_type === "BadRequestError";
}

export function parseSglangSample(json: Json, req: SampleRequest, o?: Pick<DialectOptions, "vocabSize">): SampleResult {
  // A single input may come back as the object itself or as a one-element list.
  if (Array.isArray(json)) requireExactLength(json, 1, "(body)", "one result: one prompt was sent");
  const one = Array.isArray(json) ? json[0] : json;
  const base = Array.isArray(json) ? "[0]" : "";
  const body = asObject(one, base);
  const meta = asObject(body.meta_info, `${base}meta_info`);
  // Before the logprobs: an aborted request may come back without them.
  const finish = finishType(meta.finish_reason, `${base}meta_info`);
  const out = asArray(meta.output_token_logprobs, `${base}meta_info.output_token_logprobs`)
    .map((x, i) => triple(x, `${base}meta_info.output_token_logprobs[${i}]`, "sampled"));
  const tokens = out.map((x) => x.token);
  checkInVocabulary(tokens, o?.vocabSize, (i) => `${base}meta_info.output_token_logprobs[${i}][1]`);
  if (Array.isArray(body.output_ids)) {
    const ids = body.output_ids.map((x, i) => asTokenId(x, `${base}output_ids[${i}]`));
    if (ids.length !== tokens.length || ids.some((id, i) => id !== tokens[i])) {
      throw new MalformedResponse(`${base}output_ids`, "disagrees with the ids in meta_info.output_token_logprobs");
    }
  }
  if (tokens.length > req.maxTokens) throw new MalformedResponse(`${base}meta_info.output_token_logprobs`, `${tokens.length} tokens exceed max_new_tokens ${req.maxTokens}`);
  checkPromptTokens(meta, req.prompt.length, `${base}meta_info`);
  if (typeof meta.completion_tokens === "number" && meta.completion_tokens !== tokens.length) {
    throw new MalformedResponse(`${base}meta_info.completion_tokens`, `is ${meta.completion_tokens}, but meta_info.output_token_logprobs has ${tokens.length} tokens`,
      "The server's count of the tokens it generated is not the tokens it returned logprobs for: its answer is inconsistent (a proxy that rewrites answers, a broken version). See its log.");
  }
  return { tokens, logprobs: out.map((x) => x.logprob), finishReason: finish };
}

export function sglangScoreBody(o: SglangOptions, mode: LogprobsMode, reqs: ScoreRequest[]): HttpCall {
  const first = reqs[0];
  if (!first) throw new Error("sglangScoreBody: no requests");
  reqs.forEach((r, i) => checkScoreShape(r, i));
  checkScoreTemperature(mode, first.temperature, "sglang");
  checkTopk(first.topk, o.maxLogprobs ?? 20, "sglang");
  return {
    path: "/generate",
    body: {
      input_ids: reqs.map((r) => [...r.prompt, ...r.completion]),
      sampling_params: { max_new_tokens: o.scoreMaxNewTokens ?? 1, temperature: mode === "raw" ? 1 : first.temperature },
      return_logprob: true,
      logprob_start_len: 0,
      ...(first.topk ? { top_logprobs_num: first.topk } : {}),
      ...(o.loraName ? { lora_path: o.loraName } : {}),
    },
  };
}

export function parseSglangScore(json: Json, reqs: ScoreRequest[], o?: ListedBounds): ScoreResult[] {
  const list = reqs.length === 1 && !Array.isArray(json) ? [json] : asArray(json, "");
  requireExactLength(list, reqs.length, "(body)", "one result per scored sequence");
  return reqs.map((r, j) => {
    const base = `[${j}].meta_info`;
    const meta = asObject(asObject(list[j], `[${j}]`).meta_info, base);
    // Before the logprobs: an aborted request comes back without them (SGLang drops return_logprob).
    if (meta.finish_reason !== undefined && meta.finish_reason !== null) finishType(meta.finish_reason, base);
    const input = asArray(meta.input_token_logprobs, `${base}.input_token_logprobs`);
    const seq = [...r.prompt, ...r.completion];
    if (input.length !== seq.length) {
      throw new MalformedResponse(`${base}.input_token_logprobs`, `expected ${seq.length} entries (one per input token, logprob_start_len: 0), got ${input.length}`, PROMPT_CHANGED_HINT);
    }
    checkPromptTokens(meta, seq.length, base);
    const tops = r.topk ? asArray(meta.input_top_logprobs, `${base}.input_top_logprobs`) : [];
    let nulls = 0;
    // Entry 0 (the first token, no context) has a null logprob and is never read: completions start at ≥ 1.
    const out = completionLogprobs(r, (i, token) => {
      const at = `${base}.input_token_logprobs[${i}]`;
      const t = triple(input[i], at, "scored");
      if (t.token !== token) throw new MalformedResponse(`${at}[1]`, `is token ${t.token}, but the scored sequence has ${token} there; the server changed the input ids`, PROMPT_CHANGED_HINT);
      if (t.isNull) nulls++;
      return { logprob: t.logprob, alternatives: () => topAlternatives(tops[i], `${base}.input_top_logprobs[${i}]`, o) };
    });
    // A teacher that gives every token the student wrote a probability of zero is a NaN one (SGLang
    // writes NaN as null too), not a verdict: its scores would be a KL of ~9999 per token.
    if (nulls === r.completion.length) {
      throw new MalformedResponse(`${base}.input_token_logprobs`, `is null at every completion position (${prettyRange(r.prompt.length, seq.length - 1)}): a probability of zero for every token of the completion, or NaN`, SGLANG_NULL_HINT);
    }
    return out;
  });
}

/**
 * One position's top-k triples, each id inside the known vocabularies; a null is -inf, but not all of
 * them: a distribution's most likely token has a probability above zero.
 */
function topAlternatives(v: Json, path: string, bounds: ListedBounds | undefined): { token: number; logprob: number }[] {
  const alts = asArray(v, path).map((x, a) => triple(x, `${path}[${a}]`, "scored"));
  checkListedIds(alts.map((x) => x.token), bounds, (a) => `${path}[${a}][1]`);
  if (alts.length > 0 && alts.every((x) => x.isNull)) {
    throw new MalformedResponse(path, `gives every one of its ${alts.length} alternatives a null log-probability: the most likely token of a distribution cannot have probability zero, so they are NaN`, SGLANG_NULL_HINT);
  }
  return distinctAlternatives(alts.map(({ token, logprob }) => ({ token, logprob })), path);
}

function prettyRange(a: number, b: number): string {
  return a === b ? `position ${a}` : `positions ${a}…${b}`;
}

export function sglangDialect(o: SglangOptions): Dialect {
  const mode = o.logprobsMode ?? "processed";
  return {
    name: "sglang",
    logprobsMode: mode,
    scoreBatch: DEFAULT_SCORE_BATCH,
    sampleBatch: 1,
    buildSample: (reqs) => sglangSampleBody(o, mode, only(reqs)),
    parseSample: (json, reqs) => [parseSglangSample(json, only(reqs), o)],
    buildScore: (reqs) => sglangScoreBody(o, mode, reqs),
    parseScore: (json, reqs) => parseSglangScore(json, reqs, o),
  };
}
