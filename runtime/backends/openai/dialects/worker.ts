/**
 * The tcod worker (worker/, package tcod_worker). It speaks vLLM's `/v1/completions` subset too, but
 * its native routes fit the runtime better, so this dialect uses them:
 * - `POST /sample {prompts, max_tokens, temperature, seed: [per row], stop_token_ids?, model,
 *   logprobs_mode: "processed"}` → `{samples: [{tokens, logprobs, finish_reason}], version}`: many
 *   requests in one call, each with its own seed (the worker runs one model call at a time, so
 *   batching is how it goes fast), logprobs of the distribution actually sampled from;
 * - `POST /score {sequences, prompt_lengths, topk, entropy, temperature, model}` →
 *   `{results: [{logprobs, topk?: [[{token, logprob}]], entropy?}], version}`: exact full-vocabulary
 *   entropy per position where a request asks for it (T-DUR's uncertainty), and a teacher held
 *   beside the student (`model: "teacher"`).
 * Training routes (/forward_backward, /optim_step, /save, /load) live in trainer.ts.
 */
import type { SampleRequest, SampleResult, ScoreRequest, ScoreResult } from "../../backend.js";
import { MalformedResponse } from "../errors.js";
import {
  checkSampleTemperature, checkScoreShape, checkScoreTemperature, checkTopk,
  type Dialect, type DialectOptions, type HttpCall, type LogprobsMode,
} from "./dialect.js";
import { asArray, asEntropy, asLogprob, asObject, asSampledLogprob, asTokenId, checkInVocabulary, checkListedIds, distinctAlternatives, requireExactLength, type Json, type ListedBounds } from "./shape.js";

export interface WorkerDialectOptions extends DialectOptions {
  /** Which of the worker's models answers: the trainable student or the frozen teacher beside it. */
  role: "student" | "teacher";
  /**
   * Ask /score for the exact entropy at every position, whatever the requests ask (default: only for
   * requests with `entropy: true`, which T-DUR's `turn.entropy` sends). It is a log-softmax and a
   * reduction over the vocabulary at every scored position, and doubles the response: on the CPU
   * worker, 16 sequences of 3,000 tokens scored in 2.0 s without it and 2.8–3.4 s with it.
   */
  entropy?: boolean;
  /** Requests per call (default 64 samples, 32 scored sequences; the worker micro-batches by --token-budget). */
  sampleBatch?: number;
  scoreBatch?: number;
}

export function workerSampleBody(o: WorkerDialectOptions, mode: LogprobsMode, reqs: SampleRequest[]): HttpCall {
  const first = reqs[0];
  if (!first) throw new Error("workerSampleBody: no requests");
  checkSampleTemperature(mode, first.temperature, "worker");
  return {
    path: "/sample",
    body: {
      prompts: reqs.map((r) => r.prompt),
      max_tokens: first.maxTokens,
      temperature: first.temperature,
      seed: reqs.map((r) => r.seed),
      model: o.role,
      logprobs_mode: mode,
      ...(o.stopTokenIds && o.stopTokenIds.length > 0 ? { stop_token_ids: o.stopTokenIds } : {}),
    },
  };
}

export function parseWorkerSample(json: Json, reqs: SampleRequest[], o?: Pick<DialectOptions, "vocabSize">): SampleResult[] {
  const samples = asArray(asObject(json, "").samples, "samples");
  requireExactLength(samples, reqs.length, "samples", "one sample per prompt");
  return reqs.map((r, i) => {
    const at = `samples[${i}]`;
    const s = asObject(samples[i], at);
    const tokens = asArray(s.tokens, `${at}.tokens`).map((x, j) => asTokenId(x, `${at}.tokens[${j}]`));
    checkInVocabulary(tokens, o?.vocabSize, (j) => `${at}.tokens[${j}]`);
    const logprobs = asArray(s.logprobs, `${at}.logprobs`).map((x, j) => asSampledLogprob(x, `${at}.logprobs[${j}]`));
    if (logprobs.length !== tokens.length) throw new MalformedResponse(`${at}.logprobs`, `has ${logprobs.length} entries for ${tokens.length} tokens`);
    if (tokens.length > r.maxTokens) throw new MalformedResponse(`${at}.tokens`, `${tokens.length} tokens exceed max_tokens ${r.maxTokens}`);
    if (s.finish_reason !== "stop" && s.finish_reason !== "length") {
      throw new MalformedResponse(`${at}.finish_reason`, `expected "stop" or "length", got ${JSON.stringify(s.finish_reason)}`);
    }
    return { tokens, logprobs, finishReason: s.finish_reason };
  });
}

export function workerScoreBody(o: WorkerDialectOptions, mode: LogprobsMode, reqs: ScoreRequest[]): HttpCall {
  const first = reqs[0];
  if (!first) throw new Error("workerScoreBody: no requests");
  reqs.forEach((r, i) => checkScoreShape(r, i));
  checkScoreTemperature(mode, first.temperature, "worker");
  checkTopk(first.topk, o.maxLogprobs ?? 20, "worker");
  return {
    path: "/score",
    body: {
      sequences: reqs.map((r) => [...r.prompt, ...r.completion]),
      prompt_lengths: reqs.map((r) => r.prompt.length),
      topk: first.topk ?? 0,
      entropy: o.entropy === true || first.entropy === true,
      temperature: first.temperature,
      model: o.role,
    },
  };
}

export function parseWorkerScore(json: Json, reqs: ScoreRequest[], o?: ListedBounds): ScoreResult[] {
  const results = asArray(asObject(json, "").results, "results");
  requireExactLength(results, reqs.length, "results", "one result per scored sequence");
  return reqs.map((r, i) => {
    const at = `results[${i}]`;
    const x = asObject(results[i], at);
    const n = r.completion.length;
    const logprobs = asArray(x.logprobs, `${at}.logprobs`).map((v, j) => asLogprob(v, `${at}.logprobs[${j}]`));
    if (logprobs.length !== n) throw new MalformedResponse(`${at}.logprobs`, `has ${logprobs.length} entries for a completion of ${n} tokens`);
    const out: ScoreResult = { logprobs };
    if (r.topk) {
      const rows = asArray(x.topk, `${at}.topk`);
      if (rows.length !== n) throw new MalformedResponse(`${at}.topk`, `has ${rows.length} positions for ${n} tokens`);
      out.topk = rows.map((row, j) => {
        const alts = asArray(row, `${at}.topk[${j}]`).map((alt, a) => {
          const e = asObject(alt, `${at}.topk[${j}][${a}]`);
          return { token: asTokenId(e.token, `${at}.topk[${j}][${a}].token`), logprob: asLogprob(e.logprob, `${at}.topk[${j}][${a}].logprob`) };
        });
        checkListedIds(alts.map((x) => x.token), o, (a) => `${at}.topk[${j}][${a}].token`);
        return distinctAlternatives(alts, `${at}.topk[${j}]`);
      });
    }
    if (x.entropy !== undefined) {
      const ent = asArray(x.entropy, `${at}.entropy`).map((v, j) => asEntropy(v, `${at}.entropy[${j}]`));
      if (ent.length !== n) throw new MalformedResponse(`${at}.entropy`, `has ${ent.length} entries for ${n} tokens`);
      out.entropy = ent;
    }
    return out;
  });
}

export function workerDialect(o: WorkerDialectOptions): Dialect {
  // /sample is asked for processed logprobs and /score applies the temperature: both post-temperature.
  const mode: LogprobsMode = "processed";
  return {
    name: "worker",
    logprobsMode: mode,
    sampleBatch: o.sampleBatch ?? 64,
    scoreBatch: o.scoreBatch ?? 32,
    buildSample: (reqs) => workerSampleBody(o, mode, reqs),
    parseSample: (json, reqs) => parseWorkerSample(json, reqs, o),
    buildScore: (reqs) => workerScoreBody(o, mode, reqs),
    parseScore: (json, reqs) => parseWorkerScore(json, reqs, o),
  };
}
