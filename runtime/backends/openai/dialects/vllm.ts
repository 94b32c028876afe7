/**
 * vLLM's OpenAI-compatible `/v1/completions`, token-in/token-out (docs/REFERENCES.md#vllm).
 *
 * - Sampling: `prompt` as token ids, `logprobs: 0` (the sampled token only), `return_token_ids` (vLLM ≥
 *   0.10.2) and `return_tokens_as_token_ids` (older servers: `"token_id:17"` strings in
 *   `logprobs.tokens`) so generated ids come back whichever the server supports.
 * - Scoring: `prompt` as a list of token-id lists (one call scores many sequences), `max_tokens: 1`
 *   (works on old and new versions; the extra token is ignored), `prompt_logprobs: k`; the completion
 *   token at position i is read as `choices[j].prompt_logprobs[i][String(id)].logprob`.
 * - Logprobs are raw (pre-temperature) unless the server runs `--logprobs-mode processed_logprobs`.
 */
import type { SampleRequest, SampleResult, ScoreRequest, ScoreResult } from "../../backend.js";
import { MalformedResponse } from "../errors.js";
import {
  checkSampleTemperature, checkScoreShape, checkScoreTemperature, checkTopk, completionLogprobs,
  type Dialect, type DialectName, type DialectOptions, type HttpCall, type LogprobsMode,
  only,
} from "./dialect.js";
import { asArray, asLogprob, asNumber, asObject, asString, asTokenId, field, requireLength, type Json } from "./shape.js";

/** Sequences per scoring call: bounded so one prefill batch stays a sane size. */
const DEFAULT_SCORE_BATCH = 16;

export function vllmSampleBody(o: DialectOptions, mode: LogprobsMode, req: SampleRequest, dialect: DialectName = "vllm"): HttpCall {
  checkSampleTemperature(mode, req.temperature, dialect);
  return {
    path: "/v1/completions",
    body: {
      model: o.model,
      prompt: req.prompt,
      max_tokens: req.maxTokens,
      temperature: req.temperature,
      seed: req.seed,
      logprobs: 0,
      return_token_ids: true,
      return_tokens_as_token_ids: true,
      skip_special_tokens: false,
      ...(o.stopTokenIds && o.stopTokenIds.length > 0 ? { stop_token_ids: o.stopTokenIds } : {}),
    },
  };
}

/** `"token_id:17"` (return_tokens_as_token_ids) → 17. */
function tokenIdFromString(s: Json, path: string): number {
  const m = /^token_id:(\d+)$/.exec(asString(s, path));
  if (!m) throw new MalformedResponse(path, `expected "token_id:<id>" (return_tokens_as_token_ids), got ${JSON.stringify(s)}; without return_token_ids support the server must honour return_tokens_as_token_ids`);
  return Number(m[1]);
}

function finishReason(v: Json, path: string): "stop" | "length" {
  if (v === "stop" || v === "length") return v;
  throw new MalformedResponse(path, `expected "stop" or "length", got ${JSON.stringify(v)} (an aborted or failed generation)`);
}

export function parseVllmSample(json: Json, req: SampleRequest): SampleResult {
  const body = asObject(json, "");
  const choices = asArray(body.choices, "choices");
  requireLength(choices, 1, "choices", "one choice per prompt");
  const c = asObject(choices[0], "choices[0]");
  const lp = asObject(c.logprobs, "choices[0].logprobs");
  const tokenLogprobs = asArray(lp.token_logprobs, "choices[0].logprobs.token_logprobs")
    .map((x, i) => asLogprob(x, `choices[0].logprobs.token_logprobs[${i}]`));
  let tokens: number[];
  if (Array.isArray(c.token_ids)) {
    tokens = c.token_ids.map((x, i) => asTokenId(x, `choices[0].token_ids[${i}]`));
  } else {
    tokens = asArray(lp.tokens, "choices[0].logprobs.tokens").map((x, i) => tokenIdFromString(x, `choices[0].logprobs.tokens[${i}]`));
  }
  if (tokens.length !== tokenLogprobs.length) {
    throw new MalformedResponse("choices[0].logprobs.token_logprobs", `has ${tokenLogprobs.length} entries for ${tokens.length} generated tokens`);
  }
  if (tokens.length > req.maxTokens) {
    throw new MalformedResponse("choices[0].token_ids", `${tokens.length} tokens exceed max_tokens ${req.maxTokens}`);
  }
  return { tokens, logprobs: tokenLogprobs, finishReason: finishReason(c.finish_reason, "choices[0].finish_reason") };
}

export function vllmScoreBody(o: DialectOptions, mode: LogprobsMode, reqs: ScoreRequest[], dialect: DialectName = "vllm"): HttpCall {
  const first = reqs[0];
  if (!first) throw new Error("vllmScoreBody: no requests");
  reqs.forEach((r, i) => checkScoreShape(r, i));
  checkScoreTemperature(mode, first.temperature, dialect);
  checkTopk(first.topk, o.maxLogprobs ?? 20, dialect);
  return {
    path: "/v1/completions",
    body: {
      model: o.model,
      prompt: reqs.map((r) => [...r.prompt, ...r.completion]),
      max_tokens: 1,
      // Raw logprobs ignore temperature; processed ones are taken at the requested T.
      temperature: mode === "raw" ? 1 : first.temperature,
      prompt_logprobs: first.topk ?? 0,
    },
  };
}

/** Every alternative of one position's dict (completionLogprobs keeps the k highest; the actual token may rank below k). */
function alternativesOf(entry: Record<string, Json>, path: string): { token: number; logprob: number }[] {
  return Object.entries(entry).map(([key, v]) => {
    const id = Number(key);
    if (!Number.isInteger(id) || id < 0) throw new MalformedResponse(path, `key ${JSON.stringify(key)} is not a token id`);
    return { token: id, logprob: asLogprob(asObject(v, field(path, key)).logprob, field(field(path, key), "logprob")) };
  });
}

/** Read completion-token logprobs out of one `prompt_logprobs` list. */
export function readPromptLogprobs(pl: Json, r: ScoreRequest, base: string): ScoreResult {
  const list = asArray(pl, base);
  const seq = [...r.prompt, ...r.completion];
  requireLength(list, seq.length, base, "one entry per prompt token");
  return completionLogprobs(r, (i, token) => {
    const at = `${base}[${i}]`;
    const entry = asObject(list[i], at);
    const key = String(token);
    if (!(key in entry)) {
      throw new MalformedResponse(at, `has no entry for the scored token ${key} (keys: ${Object.keys(entry).slice(0, 6).join(", ")}); the server may have re-tokenized the prompt`);
    }
    return { logprob: asLogprob(asObject(entry[key], field(at, key)).logprob, field(field(at, key), "logprob")), alternatives: () => alternativesOf(entry, at) };
  });
}

export function parseVllmScore(json: Json, reqs: ScoreRequest[]): ScoreResult[] {
  const body = asObject(json, "");
  const choices = asArray(body.choices, "choices");
  requireLength(choices, reqs.length, "choices", "one choice per scored sequence");
  // Choices carry the prompt's `index`; order by it rather than trusting array order.
  const byIndex = new Map<number, { c: Record<string, Json>; at: number }>();
  choices.forEach((x, j) => {
    const c = asObject(x, `choices[${j}]`);
    const idx = c.index === undefined ? j : asNumber(c.index, `choices[${j}].index`);
    byIndex.set(idx, { c, at: j });
  });
  return reqs.map((r, i) => {
    const hit = byIndex.get(i);
    if (!hit) throw new MalformedResponse("choices", `no choice with index ${i}`);
    return readPromptLogprobs(hit.c.prompt_logprobs, r, `choices[${hit.at}].prompt_logprobs`);
  });
}

export function vllmDialect(o: DialectOptions): Dialect {
  const mode = o.logprobsMode ?? "raw";
  return {
    name: "vllm",
    logprobsMode: mode,
    scoreBatch: DEFAULT_SCORE_BATCH,
    sampleBatch: 1,
    buildSample: (reqs) => vllmSampleBody(o, mode, only(reqs)),
    parseSample: (json, reqs) => [parseVllmSample(json, only(reqs))],
    buildScore: (reqs) => vllmScoreBody(o, mode, reqs),
    parseScore: parseVllmScore,
  };
}
