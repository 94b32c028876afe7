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
import { AbortedGeneration, describe, excerpt, MalformedResponse } from "../errors.js";
import {
  checkSampleTemperature, checkScoreShape, checkScoreTemperature, checkTopk, completionLogprobs,
  type Dialect, type DialectName, type DialectOptions, type HttpCall, type LogprobsMode,
  only,
} from "./dialect.js";
import { asArray, asLogprob, asObject, asSampledLogprob, asString, asTokenId, checkInVocabulary, checkListedIds, field, requireExactLength, type Json, type ListedBounds } from "./shape.js";

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

/**
 * `logprobs.tokens`, where the server wrote them as ids too (`"token_id:17"`, return_tokens_as_token_ids),
 * are `token_ids`: two lists of the sampled tokens that differ (a token repeated or dropped in one)
 * leave no telling which the logprobs belong to. Text tokens (a server that ignores the flag) are not compared.
 */
function checkTokenEcho(listed: Json, tokens: readonly number[]): void {
  if (!Array.isArray(listed) || !listed.every((x) => typeof x === "string" && /^token_id:\d+$/.test(x))) return;
  const ids = listed.map((x) => Number((x as string).slice("token_id:".length)));
  const differs = ids.findIndex((id, i) => id !== tokens[i]);
  if (ids.length === tokens.length && differs < 0) return;
  throw new MalformedResponse("choices[0].logprobs.tokens", ids.length !== tokens.length
    ? `has ${ids.length} tokens, but choices[0].token_ids has ${tokens.length}`
    : `differs from choices[0].token_ids at position ${differs} (token_id:${ids[differs]}, token_ids has ${tokens[differs]})`,
  "The server's two lists of the sampled tokens disagree (a token repeated or dropped), so the logprobs cannot be matched to tokens: a proxy that rewrites answers, or a broken version. See its log.");
}

/**
 * "stop" or "length". "abort" — vLLM's finish of a request it aborted, e.g. preempted and dropped
 * under load — is an AbortedGeneration, which the client retries; anything else is malformed.
 */
function finishReason(v: Json, path: string): "stop" | "length" {
  if (v === "stop" || v === "length") return v;
  if (v === "abort") {
    throw new AbortedGeneration(path, `is "abort": the server gave up on the generation`,
      "vLLM finishes a request it aborted (preempted and dropped under load, or cancelled) with \"abort\"; tcod retried it with backoff and every attempt aborted. " +
      "See the server's log; lower `concurrency` in the backend spec, or give vLLM more KV-cache memory (--gpu-memory-utilization) or fewer sequences at once (--max-num-seqs).");
  }
  throw new MalformedResponse(path, `expected "stop" or "length", got ${JSON.stringify(v)} (a failed generation)`,
    "The server finished the request in a way tcod cannot train on: see its log.");
}

/** The hint for an answer whose server did not read the token ids it was sent. */
const PROMPT_CHANGED_HINT = "The server did not process the token ids it was sent: it truncated the prompt (a context limit, `truncate_prompt_tokens`) " +
  "or re-tokenized it. Keep episodes within the server's --max-model-len (a shorter horizon or fewer max tokens), and check that it takes token-id prompts.";

/**
 * The answer's `model` is the one asked for. vLLM names the model that answered (a LoRA adapter by its
 * name), so another name means a router or proxy sent the request elsewhere, or the adapter was not
 * applied; a request for one of the server's base-model names is answered with the first of them.
 */
export function checkAnsweredModel(body: Record<string, Json>, expect: Pick<DialectOptions, "model" | "servedModels"> | undefined): void {
  if (!expect || body.model === undefined || body.model === null) return;
  const got = asString(body.model, "model");
  if (got === expect.model || got.endsWith(`/${expect.model}`)) return; // the probe takes "org/name" for "name" too
  const base = expect.servedModels ?? [];
  if (base.includes(got) && base.includes(expect.model)) return;
  throw new MalformedResponse("model", `is '${excerpt(got, 120)}', but the request asked for '${expect.model}'`,
    "Another model answered: a router or proxy in front of several servers sent the request elsewhere, or the server answered without the LoRA adapter it was asked for. " +
    "Point the backend's `url` at the server that serves this model, and see the server's log for the adapter.");
}

/** `choices[j].prompt_token_ids` (vLLM ≥ 0.10.2 with return_token_ids), where given, are the ids sent. */
function checkPromptEcho(c: Record<string, Json>, sent: readonly number[], at: string): void {
  if (!Array.isArray(c.prompt_token_ids)) return;
  const ids = c.prompt_token_ids;
  const differs = ids.findIndex((x, i) => x !== sent[i]);
  if (ids.length !== sent.length || differs >= 0) {
    throw new MalformedResponse(`${at}.prompt_token_ids`, ids.length !== sent.length
      ? `has ${ids.length} ids, but the prompt sent has ${sent.length}`
      : `differs from the prompt sent at position ${differs} (${JSON.stringify(ids[differs])}, sent ${sent[differs]})`, PROMPT_CHANGED_HINT);
  }
}

/** `usage[key]`, where the server counts it, agrees with what was sent or returned. */
function checkUsage(body: Record<string, Json>, key: "prompt_tokens" | "completion_tokens", expected: number, what: string, hint: string): void {
  const u = body.usage;
  if (u === null || typeof u !== "object" || Array.isArray(u)) return;
  const n = (u as Record<string, Json>)[key];
  if (typeof n !== "number") return;
  if (n !== expected) throw new MalformedResponse(`usage.${key}`, `is ${n}, but ${what} ${expected}`, hint);
}

export function parseVllmSample(json: Json, req: SampleRequest, expect?: Pick<DialectOptions, "model" | "servedModels" | "vocabSize">): SampleResult {
  const body = asObject(json, "");
  checkAnsweredModel(body, expect);
  const choices = asArray(body.choices, "choices");
  requireExactLength(choices, 1, "choices", "the request asked for one completion, n = 1");
  const c = asObject(choices[0], "choices[0]");
  if (c.index !== undefined && c.index !== 0) throw new MalformedResponse("choices[0].index", `expected 0 (the only prompt sent), got ${describe(c.index)}`);
  // Before the logprobs: an aborted request may come back without them.
  const finish = finishReason(c.finish_reason, "choices[0].finish_reason");
  const lp = asObject(c.logprobs, "choices[0].logprobs");
  const tokenLogprobs = asArray(lp.token_logprobs, "choices[0].logprobs.token_logprobs")
    .map((x, i) => asSampledLogprob(x, `choices[0].logprobs.token_logprobs[${i}]`));
  let tokens: number[];
  if (Array.isArray(c.token_ids)) {
    tokens = c.token_ids.map((x, i) => asTokenId(x, `choices[0].token_ids[${i}]`));
    checkInVocabulary(tokens, expect?.vocabSize, (i) => `choices[0].token_ids[${i}]`);
    checkTokenEcho(lp.tokens, tokens);
  } else {
    tokens = asArray(lp.tokens, "choices[0].logprobs.tokens").map((x, i) => tokenIdFromString(x, `choices[0].logprobs.tokens[${i}]`));
    checkInVocabulary(tokens, expect?.vocabSize, (i) => `choices[0].logprobs.tokens[${i}]`);
  }
  if (tokens.length !== tokenLogprobs.length) {
    throw new MalformedResponse("choices[0].logprobs.token_logprobs", `has ${tokenLogprobs.length} entries for ${tokens.length} generated tokens`);
  }
  if (tokens.length > req.maxTokens) {
    throw new MalformedResponse("choices[0].token_ids", `${tokens.length} tokens exceed max_tokens ${req.maxTokens}`);
  }
  checkPromptEcho(c, req.prompt, "choices[0]");
  checkUsage(body, "prompt_tokens", req.prompt.length, "the prompt sent has", PROMPT_CHANGED_HINT);
  checkUsage(body, "completion_tokens", tokens.length, "the answer's token ids are", "The server's count of the tokens it generated is not the ids it returned: its answer is inconsistent (a proxy that rewrites answers, a broken version). See its log.");
  return { tokens, logprobs: tokenLogprobs, finishReason: finish };
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

/** Every alternative of one position's dict (completionLogprobs keeps the k highest; the actual token may rank below k), each id inside the known vocabularies. */
function alternativesOf(entry: Record<string, Json>, path: string, bounds: ListedBounds | undefined): { token: number; logprob: number }[] {
  const alts = Object.entries(entry).map(([key, v]) => {
    const id = Number(key);
    if (!Number.isInteger(id) || id < 0) throw new MalformedResponse(path, `key ${JSON.stringify(key)} is not a token id`);
    return { token: id, logprob: asLogprob(asObject(v, field(path, key)).logprob, field(field(path, key), "logprob")) };
  });
  checkListedIds(alts.map((a) => a.token), bounds, (i) => field(path, String(alts[i]!.token)));
  return alts;
}

/**
 * Read completion-token logprobs out of one `prompt_logprobs` list (entry 0 is null: the first token
 * has no context, and is never read); top-k ids past the known vocabularies (`bounds`) are refused.
 */
export function readPromptLogprobs(pl: Json, r: ScoreRequest, base: string, bounds?: ListedBounds): ScoreResult {
  const list = asArray(pl, base);
  const seq = [...r.prompt, ...r.completion];
  if (list.length !== seq.length) {
    throw new MalformedResponse(base, `expected ${seq.length} entries (one per token of the scored sequence), got ${list.length}`, PROMPT_CHANGED_HINT);
  }
  return completionLogprobs(r, (i, token) => {
    const at = `${base}[${i}]`;
    if (list[i] === null) {
      throw new MalformedResponse(at, `is null, but only the first token of a sequence has no log-probability (position ${i} is in the completion)`,
        "The server did not score this position; its prompt logprobs are broken or it re-tokenized the sequence. See its log.");
    }
    const entry = asObject(list[i], at);
    const key = String(token);
    if (!(key in entry)) {
      throw new MalformedResponse(at, `has no entry for the scored token ${key} (keys: ${Object.keys(entry).slice(0, 6).join(", ")}); the server may have re-tokenized the prompt`, PROMPT_CHANGED_HINT);
    }
    return { logprob: asLogprob(asObject(entry[key], field(at, key)).logprob, field(field(at, key), "logprob")), alternatives: () => alternativesOf(entry, at, bounds) };
  });
}

/** A choice's `index`: a whole number naming one of the `n` prompts sent. */
function choiceIndex(v: Json, path: string, n: number): number {
  if (typeof v !== "number" || !Number.isInteger(v) || v < 0 || v >= n) {
    throw new MalformedResponse(path, `expected the index of one of the ${n} prompts sent (0…${n - 1}), got ${describe(v)}`);
  }
  return v;
}

export function parseVllmScore(json: Json, reqs: ScoreRequest[], expect?: Pick<DialectOptions, "model" | "servedModels" | "vocabSize" | "studentVocabSize">): ScoreResult[] {
  const body = asObject(json, "");
  checkAnsweredModel(body, expect);
  const choices = asArray(body.choices, "choices");
  requireExactLength(choices, reqs.length, "choices", "one choice per scored sequence");
  // Choices carry the prompt's `index`; order by it rather than trusting array order. With exactly n
  // choices, distinct indices in 0…n-1 name every prompt once.
  const byIndex = new Map<number, { c: Record<string, Json>; at: number }>();
  choices.forEach((x, j) => {
    const c = asObject(x, `choices[${j}]`);
    const idx = c.index === undefined ? j : choiceIndex(c.index, `choices[${j}].index`, reqs.length);
    const twin = byIndex.get(idx);
    if (twin) throw new MalformedResponse(`choices[${j}].index`, `repeats index ${idx} (choices[${twin.at}] has it too), so another prompt has no answer`);
    if (c.finish_reason !== undefined && c.finish_reason !== null) finishReason(c.finish_reason, `choices[${j}].finish_reason`);
    byIndex.set(idx, { c, at: j });
  });
  const out = reqs.map((r, i) => {
    const hit = byIndex.get(i)!;
    checkPromptEcho(hit.c, [...r.prompt, ...r.completion], `choices[${hit.at}]`);
    return readPromptLogprobs(hit.c.prompt_logprobs, r, `choices[${hit.at}].prompt_logprobs`, expect);
  });
  const sent = reqs.reduce((n, r) => n + r.prompt.length + r.completion.length, 0);
  checkUsage(body, "prompt_tokens", sent, "the sequences sent have", PROMPT_CHANGED_HINT);
  return out;
}

export function vllmDialect(o: DialectOptions): Dialect {
  const mode = o.logprobsMode ?? "raw";
  return {
    name: "vllm",
    logprobsMode: mode,
    scoreBatch: DEFAULT_SCORE_BATCH,
    sampleBatch: 1,
    buildSample: (reqs) => vllmSampleBody(o, mode, only(reqs)),
    // `o` is read at parse time: the hot-load gate keeps o.model fixed while a call is in flight.
    parseSample: (json, reqs) => [parseVllmSample(json, only(reqs), o)],
    buildScore: (reqs) => vllmScoreBody(o, mode, reqs),
    parseScore: (json, reqs) => parseVllmScore(json, reqs, o),
  };
}
