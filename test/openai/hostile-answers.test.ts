/**
 * What a broken or hostile inference server answers, and what tcod makes of it: every case is either a
 * TC7004 naming the server, the endpoint, the field and what was expected (with a hint), or a reading
 * runtime/backends/openai/README.md documents — never an internal error, and never a number that is
 * not finite (or not a log-probability) handed on to the loss or the metrics.
 *
 * Before this file: a sampled token's "-inf" came through as -Infinity, -1e300 as itself; two choices
 * for n = 1 were read as the first whatever its index; a repeated choice index, more results than
 * sequences, a usage count or prompt_token_ids that disagreed with the ids sent, and an answer naming
 * another model were all accepted; a worker's entropy of -5 or 1e300 too; an empty body read
 * "the body is not JSON: " and a bare NaN as a dialect mismatch.
 */
import { Worker } from "node:worker_threads";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { SampleRequest, ScoreRequest } from "../../runtime/backends/backend.js";
import { OpenAIClient } from "../../runtime/backends/openai/client.js";
import { parseSglangSample, parseSglangScore, sglangDialect } from "../../runtime/backends/openai/dialects/sglang.js";
import { ZERO_PROB_LOGPROB } from "../../runtime/backends/openai/dialects/shape.js";
import { parseVllmSample, parseVllmScore, vllmDialect } from "../../runtime/backends/openai/dialects/vllm.js";
import { parseWorkerSample, parseWorkerScore, workerDialect } from "../../runtime/backends/openai/dialects/worker.js";
import { AbortedGeneration, HttpBackendError, MalformedResponse } from "../../runtime/backends/openai/errors.js";
import { createOpenAIBackend } from "../../runtime/backends/openai/index.js";
import { json, startFake, type FakeServer } from "./fake-server.js";

let fake: FakeServer | undefined;
afterEach(async () => { await fake?.close(); fake = undefined; });
const workers: Worker[] = [];
afterAll(async () => { await Promise.all(workers.map((w) => w.terminate())); });

const req: SampleRequest = { prompt: [1, 2], maxTokens: 4, temperature: 1, seed: 0 };
const sreq: ScoreRequest[] = [{ prompt: [1, 2], completion: [3, 4], temperature: 1 }];

function malformed(f: () => unknown): MalformedResponse {
  try { f(); } catch (e) { expect(e).toBeInstanceOf(MalformedResponse); return e as MalformedResponse; }
  throw new Error("expected MalformedResponse");
}
async function failure(p: Promise<unknown>): Promise<HttpBackendError> {
  const e = await p.then(() => undefined, (x: unknown) => x);
  expect(e).toBeInstanceOf(HttpBackendError);
  return e as HttpBackendError;
}
const client = (url: string) => new OpenAIClient({ url, label: "vllm", concurrency: 1, timeoutMs: 2000, retries: 0 });

// ---- one answer per dialect, with a hole where a hostile value goes ---------------------------------
const vllmSample = (lp: unknown) => ({ model: "m", choices: [{ index: 0, finish_reason: "stop", token_ids: [5, 6], logprobs: { token_logprobs: [-0.5, lp] } }] });
const vllmScore = (lp: unknown) => ({ choices: [{ index: 0, finish_reason: "length", prompt_logprobs: [null, { 2: { logprob: -1 } }, { 3: { logprob: -1 }, 9: { logprob: lp } }, { 4: { logprob: lp } }] as unknown[] }] });
const sglangSample = (lp: unknown) => ({ output_ids: [5, 6], meta_info: { finish_reason: { type: "stop" }, output_token_logprobs: [[-0.5, 5, null], [lp, 6, null]] } });
const sglangScore = (lp: unknown) => [{ meta_info: { input_token_logprobs: [[null, 1, null], [-1, 2, null], [-1, 3, null], [lp, 4, null]] } }];
const workerSample = (lp: unknown) => ({ samples: [{ tokens: [5, 6], logprobs: [-0.5, lp], finish_reason: "stop" }] });
const workerScore = (lp: unknown) => ({ results: [{ logprobs: [-1, lp], topk: [[{ token: 3, logprob: -1 }], [{ token: 4, logprob: lp }]], entropy: [0.5, 0.5] }] });
const topkReq: ScoreRequest[] = [{ ...sreq[0]!, topk: 2 }];

const parsers: { name: string; sampled: boolean; run: (lp: unknown) => number[] }[] = [
  { name: "vllm sample", sampled: true, run: (lp) => parseVllmSample(vllmSample(lp), req).logprobs },
  { name: "vllm score", sampled: false, run: (lp) => parseVllmScore(vllmScore(lp), [{ ...sreq[0]!, topk: 2 }]).flatMap((r) => [...r.logprobs, ...r.topk!.flat().map((a) => a.logprob)]) },
  { name: "sglang sample", sampled: true, run: (lp) => parseSglangSample(sglangSample(lp), req).logprobs },
  { name: "sglang score", sampled: false, run: (lp) => parseSglangScore(sglangScore(lp), sreq).flatMap((r) => r.logprobs) },
  { name: "worker sample", sampled: true, run: (lp) => parseWorkerSample(workerSample(lp), [req])[0]!.logprobs },
  { name: "worker score", sampled: false, run: (lp) => parseWorkerScore(workerScore(lp), topkReq).flatMap((r) => [...r.logprobs, ...r.topk!.flat().map((a) => a.logprob)]) },
];

describe("log-probabilities: what reaches the loss is finite, in [-9999, 0], or the answer is refused", () => {
  // Values as JSON text, so that JSON.parse's own readings (1e400 → Infinity) are covered too.
  const hostile = ["null", '"NaN"', '"nan"', '"Infinity"', '"inf"', '"-inf"', '"-Infinity"', "-1e300", "-1e400", "1e400", "1e300", "0.5", "1e-5", "-0", "-9999", "-10000", "{}", "[]", "true", '"-1"'];

  for (const p of parsers) {
    it(`${p.name}: every hostile value is a MalformedResponse or a finite log-probability`, () => {
      for (const text of hostile) {
        const v = JSON.parse(text) as unknown;
        let out: number[] | undefined;
        try { out = p.run(v); } catch (e) {
          expect(e, text).toBeInstanceOf(MalformedResponse);
          expect((e as MalformedResponse).hint, text).toBeTruthy();
          continue;
        }
        for (const x of out) {
          expect(Number.isFinite(x), `${text} → ${x}`).toBe(true);
          expect(x, text).toBeGreaterThanOrEqual(ZERO_PROB_LOGPROB);
          expect(x, text).toBeLessThanOrEqual(0);
        }
      }
    });
  }

  it("a scored token's -inf (as a string, -1e400 or any number below -9999) is read as -9999, vLLM's zero probability", () => {
    for (const v of ["-inf", "-Infinity", -1e300, -Infinity, -10000]) {
      expect(parseVllmScore(vllmScore(v), sreq)[0]!.logprobs).toEqual([-1, -9999]);
      expect(parseSglangScore(sglangScore(v), sreq)[0]!.logprobs).toEqual([-1, -9999]);
      expect(parseWorkerScore(workerScore(v), sreq)[0]!.logprobs).toEqual([-1, -9999]);
    }
  });

  it("a sampled token may not have probability zero: the logprobs are not of the distribution sampled from", () => {
    for (const p of parsers.filter((x) => x.sampled)) {
      for (const v of ["-inf", -9999, -1e300]) {
        const e = malformed(() => p.run(v));
        expect(e.problem).toContain("gives the token the server sampled a probability of zero");
        expect(e.hint).toMatch(/not those of the distribution it sampled from/);
      }
    }
  });

  it("null, NaN-like strings and 1e400 name the field and say what a null most likely is", () => {
    let e = malformed(() => parseVllmSample(vllmSample(null), req));
    expect(e.field).toBe("choices[0].logprobs.token_logprobs[1]");
    expect(e.problem).toBe("expected a log-probability (a number ≤ 0), got null");
    expect(e.hint).toMatch(/write NaN and \+Infinity as null/);
    e = malformed(() => parseSglangSample(sglangSample("NaN"), req));
    expect(e.field).toBe("meta_info.output_token_logprobs[1][0]");
    expect(e.problem).toContain('got string "NaN"');
    e = malformed(() => parseWorkerScore(workerScore(JSON.parse("1e400")), sreq));
    expect(e.field).toBe("results[0].logprobs[1]");
    expect(e.problem).toContain("got number Infinity");
  });

  it("a positive log-probability is refused; round-off up to 1e-4 is read as 0", () => {
    const e = malformed(() => parseVllmScore(vllmScore(0.5), sreq));
    expect(e.field).toBe('choices[0].prompt_logprobs[3]["4"].logprob');
    expect(e.problem).toBe("expected a log-probability (≤ 0), got 0.5");
    expect(parseVllmScore(vllmScore(5e-5), sreq)[0]!.logprobs).toEqual([-1, 0]);
  });

  it("logprobs missing for some tokens are refused in every dialect", () => {
    expect(malformed(() => parseVllmSample({ choices: [{ index: 0, finish_reason: "stop", token_ids: [5, 6], logprobs: { token_logprobs: [-1] } }] }, req)).problem)
      .toBe("has 1 entries for 2 generated tokens");
    expect(malformed(() => parseWorkerSample({ samples: [{ tokens: [5, 6], logprobs: [-1], finish_reason: "stop" }] }, [req])).field).toBe("samples[0].logprobs");
    expect(malformed(() => parseWorkerScore({ results: [{ logprobs: [-1] }] }, sreq)).problem).toBe("has 1 entries for a completion of 2 tokens");
  });

  it("a worker's entropy must be one of a distribution (0 ≤ H ≤ ln 2³¹ nats); round-off is read as 0", () => {
    const ent = (h: unknown) => ({ results: [{ logprobs: [-1, -1], entropy: [0.5, h] }] });
    expect(parseWorkerScore(ent(-5e-5), sreq)[0]!.entropy).toEqual([0.5, 0]);
    for (const h of [-5, 1e300, 22]) expect(malformed(() => parseWorkerScore(ent(h), sreq)).problem).toMatch(/expected an entropy in nats, 0 ≤ H ≤ 21\.49/);
    expect(malformed(() => parseWorkerScore(ent(null), sreq)).problem).toBe("expected a finite number, got null");
  });
});

describe("vLLM prompt_logprobs: null for the first token (documented), null elsewhere refused", () => {
  it("the first entry is null and never read; a completion position's null names it", () => {
    expect(parseVllmScore(vllmScore(-2), sreq)[0]!.logprobs).toEqual([-1, -2]);
    const body = vllmScore(-2);
    body.choices[0]!.prompt_logprobs[2] = null;
    const e = malformed(() => parseVllmScore(body, sreq));
    expect(e.field).toBe("choices[0].prompt_logprobs[2]");
    expect(e.problem).toBe("is null, but only the first token of a sequence has no log-probability (position 2 is in the completion)");
  });

  it("a list longer or shorter than the sequence is refused (a truncated or re-tokenized prompt)", () => {
    for (const extra of [[{ 9: { logprob: -1 } }], []]) {
      const body = vllmScore(-2);
      body.choices[0]!.prompt_logprobs = extra.length ? [...body.choices[0]!.prompt_logprobs, ...extra] : body.choices[0]!.prompt_logprobs.slice(1);
      const e = malformed(() => parseVllmScore(body, sreq));
      expect(e.problem).toMatch(/^expected 4 entries \(one per token of the scored sequence\), got [35]$/);
      expect(e.hint).toMatch(/truncated the prompt/);
    }
  });
});

describe("token counts that disagree with what was sent or returned", () => {
  it("vLLM usage.prompt_tokens or prompt_token_ids other than the prompt sent: a truncated prompt", () => {
    const body = { ...vllmSample(-1), usage: { prompt_tokens: 1, completion_tokens: 2 } };
    let e = malformed(() => parseVllmSample(body, req));
    expect(e.field).toBe("usage.prompt_tokens");
    expect(e.problem).toBe("is 1, but the prompt sent has 2");
    expect(e.hint).toMatch(/truncated the prompt/);
    const echoed = vllmSample(-1);
    (echoed.choices[0] as Record<string, unknown>).prompt_token_ids = [1, 7];
    e = malformed(() => parseVllmSample(echoed, req));
    expect(e.field).toBe("choices[0].prompt_token_ids");
    expect(e.problem).toBe("differs from the prompt sent at position 1 (7, sent 2)");
  });

  it("vLLM usage.completion_tokens other than the ids returned; a scoring call's prompt_tokens other than the ids sent", () => {
    expect(malformed(() => parseVllmSample({ ...vllmSample(-1), usage: { prompt_tokens: 2, completion_tokens: 3 } }, req)).problem)
      .toBe("is 3, but the answer's token ids are 2");
    expect(malformed(() => parseVllmScore({ ...vllmScore(-1), usage: { prompt_tokens: 3 } }, sreq)).problem).toBe("is 3, but the sequences sent have 4");
    // Where the server does not count (usage absent, or without the field), nothing is checked.
    expect(parseVllmSample({ ...vllmSample(-1), usage: {} }, req).tokens).toEqual([5, 6]);
  });

  it("SGLang meta_info.prompt_tokens other than the input ids sent", () => {
    const body = sglangSample(-1) as { meta_info: Record<string, unknown> };
    body.meta_info.prompt_tokens = 9;
    expect(malformed(() => parseSglangSample(body, req)).field).toBe("meta_info.prompt_tokens");
    const scored = sglangScore(-1) as { meta_info: Record<string, unknown> }[];
    scored[0]!.meta_info.prompt_tokens = 3;
    expect(malformed(() => parseSglangScore(scored, sreq)).problem).toBe("is 3, but 4 input ids were sent");
  });

  it("vLLM's two lists of the sampled tokens (token_ids, logprobs.tokens as token_id:N) must agree; text tokens are not compared", () => {
    const body = vllmSample(-1) as { choices: { logprobs: Record<string, unknown> }[] };
    body.choices[0]!.logprobs.tokens = ["token_id:5", "token_id:6"];
    expect(parseVllmSample(body, req).tokens).toEqual([5, 6]);
    body.choices[0]!.logprobs.tokens = ["token_id:5", "token_id:5"];
    let e = malformed(() => parseVllmSample(body, req));
    expect(e.field).toBe("choices[0].logprobs.tokens");
    expect(e.problem).toBe("differs from choices[0].token_ids at position 1 (token_id:5, token_ids has 6)");
    body.choices[0]!.logprobs.tokens = ["token_id:5", "token_id:5", "token_id:6"];
    e = malformed(() => parseVllmSample(body, req));
    expect(e.problem).toBe("has 3 tokens, but choices[0].token_ids has 2");
    body.choices[0]!.logprobs.tokens = ["a", "b", "c"];
    expect(parseVllmSample(body, req).tokens).toEqual([5, 6]);
  });

  it("text that does not match the token ids is ignored: the ids are what is trained on (documented)", () => {
    const body = vllmSample(-1) as { choices: Record<string, unknown>[] };
    body.choices[0]!.text = "something else entirely";
    expect(parseVllmSample(body, req).tokens).toEqual([5, 6]);
  });
});

describe("choices: empty, more than asked, out of order, repeated; finish reasons", () => {
  it("n = 1 sampling takes exactly one choice, of index 0", () => {
    expect(malformed(() => parseVllmSample({ choices: [] }, req)).problem).toBe("expected 1 entry (the request asked for one completion, n = 1), got 0");
    const two = vllmSample(-1);
    two.choices.push({ ...two.choices[0]!, index: 1 });
    expect(malformed(() => parseVllmSample(two, req)).problem).toBe("expected 1 entry (the request asked for one completion, n = 1), got 2");
    const other = vllmSample(-1);
    other.choices[0]!.index = 1;
    expect(malformed(() => parseVllmSample(other, req)).field).toBe("choices[0].index");
  });

  it("scoring choices are matched by index; a repeated or out-of-range index, or one too many, is refused", () => {
    const reqs: ScoreRequest[] = [sreq[0]!, { prompt: [7], completion: [8], temperature: 1 }];
    const c0 = vllmScore(-2).choices[0]!;
    const c1 = { index: 1, finish_reason: "length", prompt_logprobs: [null, { 8: { logprob: -3 } }] };
    expect(parseVllmScore({ choices: [c1, c0] }, reqs).map((r) => r.logprobs)).toEqual([[-1, -2], [-3]]);
    expect(malformed(() => parseVllmScore({ choices: [c0, { ...c1, index: 0 }] }, reqs)).problem).toBe("repeats index 0 (choices[0] has it too), so another prompt has no answer");
    expect(malformed(() => parseVllmScore({ choices: [c0, { ...c1, index: 2 }] }, reqs)).problem).toBe("expected the index of one of the 2 prompts sent (0…1), got number 2");
    expect(malformed(() => parseVllmScore({ choices: [c0, c1, c1] }, reqs)).problem).toBe("expected 2 entries (one choice per scored sequence), got 3");
  });

  it("a top-k list that names a token twice is refused where it is read (SGLang, worker), not later as a signal error", () => {
    const w = workerScore(-1) as { results: { topk: { token: number; logprob: number }[][] }[] };
    w.results[0]!.topk[1] = [{ token: 4, logprob: -1 }, { token: 4, logprob: -2 }];
    expect(malformed(() => parseWorkerScore(w, topkReq)).field).toBe("results[0].topk[1][1]");
    const sg = sglangScore(-1) as { meta_info: Record<string, unknown> }[];
    sg[0]!.meta_info.input_top_logprobs = [null, null, [[-1, 3, null], [-2, 3, null]], [[-1, 4, null]]];
    expect(malformed(() => parseSglangScore(sg, topkReq)).problem).toBe("lists token 3 a second time among the top-k alternatives");
  });

  it("SGLang and worker batches: one result per request, not more", () => {
    expect(malformed(() => parseSglangScore([...sglangScore(-1), ...sglangScore(-1)], sreq)).problem).toBe("expected 1 entry (one result per scored sequence), got 2");
    expect(malformed(() => parseSglangSample([sglangSample(-1), sglangSample(-1)], req)).field).toBe("(body)");
    expect(malformed(() => parseWorkerSample({ samples: [...workerSample(-1).samples, ...workerSample(-1).samples] }, [req])).field).toBe("samples");
    expect(malformed(() => parseWorkerScore({ results: [...workerScore(-1).results, ...workerScore(-1).results] }, sreq)).field).toBe("results");
  });

  it('"length" is accepted (a truncated response is trained on as such); "abort" is refused with the server\'s reason (vLLM\'s as retryable: the client tries again)', () => {
    const len = vllmSample(-1);
    len.choices[0]!.finish_reason = "length";
    expect(parseVllmSample(len, req).finishReason).toBe("length");
    const aborted = { choices: [{ index: 0, finish_reason: "abort", logprobs: null }] };
    const e = malformed(() => parseVllmSample(aborted, req));
    expect(e.field).toBe("choices[0].finish_reason"); // before the missing logprobs
    expect(e).toBeInstanceOf(AbortedGeneration);
    expect(e.hint).toMatch(/every attempt aborted/);
    const sg = { meta_info: { finish_reason: { type: "abort", message: "The input (5000 tokens) is longer than the model's context length (4096 tokens).", status_code: 400, err_type: "BadRequestError" }, output_token_logprobs: [] } };
    const sgErr = malformed(() => parseSglangSample(sg, req));
    expect(sgErr).not.toBeInstanceOf(AbortedGeneration); // a client error: it would abort again
    expect(sgErr.problem).toContain("(an aborted generation: The input (5000 tokens) is longer than the model's context length (4096 tokens).)");
    const score = vllmScore(-1);
    score.choices[0]!.finish_reason = "abort";
    expect(malformed(() => parseVllmScore(score, sreq)).field).toBe("choices[0].finish_reason");
  });
});

describe("SGLang's null: -inf where a probability of zero can be, refused where it cannot", () => {
  // SGLang's /generate writes -inf, +inf and NaN alike as null (orjson); before, every null was refused.
  const scored = (lps: unknown[], tops?: unknown[]) => [{ meta_info: {
    finish_reason: { type: "length", length: 1 },
    input_token_logprobs: [[null, 1, null], [-1, 2, null], ...lps.map((lp, i) => [lp, 3 + i, null])],
    ...(tops ? { input_top_logprobs: [null, null, ...tops] } : {}),
  } }];

  it("a scored token's null reads as -9999, the -inf vLLM writes as -9999", () => {
    expect(parseSglangScore(scored([-1, null]), sreq)[0]!.logprobs).toEqual([-1, ZERO_PROB_LOGPROB]);
  });

  it("a top-k alternative's null reads as -9999, and ranks last", () => {
    const r = parseSglangScore(scored([-1, -2], [[[-1, 3, null], [null, 9, null]], [[-2, 4, null], [null, 8, null]]]), topkReq)[0]!;
    expect(r.topk).toEqual([[{ token: 3, logprob: -1 }, { token: 9, logprob: ZERO_PROB_LOGPROB }], [{ token: 4, logprob: -2 }, { token: 8, logprob: ZERO_PROB_LOGPROB }]]);
  });

  it("all of a position's top-k null: NaN (a distribution's most likely token has a probability above zero)", () => {
    const e = malformed(() => parseSglangScore(scored([-1, -2], [[[-1, 3, null]], [[null, 4, null], [null, 8, null]]]), topkReq));
    expect(e.field).toBe("[0].meta_info.input_top_logprobs[3]");
    expect(e.problem).toBe("gives every one of its 2 alternatives a null log-probability: the most likely token of a distribution cannot have probability zero, so they are NaN");
    expect(e.hint).toMatch(/-inf \(a probability of zero\) and NaN alike/);
  });

  it("every token of a scored completion null: NaN, not a verdict (a KL of ~9999 per token)", () => {
    const e = malformed(() => parseSglangScore(scored([null, null]), sreq));
    expect(e.field).toBe("[0].meta_info.input_token_logprobs");
    expect(e.problem).toBe("is null at every completion position (positions 2…3): a probability of zero for every token of the completion, or NaN");
  });

  it("a sampled token's null is refused: it had a probability above zero, so the null is a NaN", () => {
    const e = malformed(() => parseSglangSample(sglangSample(null), req));
    expect(e.field).toBe("meta_info.output_token_logprobs[1][0]");
    expect(e.problem).toBe("is null, which SGLang writes for -inf and NaN alike; the token the server sampled can have neither (it had a probability above zero)");
    expect(e.hint).toMatch(/the null is a NaN/);
  });
});

describe("SGLang's abort ({type: \"abort\"}): retried unless it reports a client error", () => {
  const abort = (extra: Record<string, unknown> = {}) => ({ meta_info: { finish_reason: { type: "abort", message: "Abort in waiting queue", status_code: null, err_type: null, ...extra }, output_token_logprobs: [] } });

  it("a request dropped unserved (no status, or a 5xx) is an AbortedGeneration; a 4xx or BadRequestError is not", () => {
    for (const extra of [{}, { status_code: 503 }, { status_code: 500 }, { status_code: 429 }]) {
      const e = malformed(() => parseSglangSample(abort(extra), req));
      expect(e, JSON.stringify(extra)).toBeInstanceOf(AbortedGeneration);
      expect(e.field).toBe("meta_info.finish_reason.type");
      expect(e.problem).toBe('is "abort": the server gave up on the generation (Abort in waiting queue)');
      expect(e.hint).toMatch(/every attempt aborted/);
    }
    for (const extra of [{ status_code: 400 }, { err_type: "BadRequestError" }]) {
      expect(malformed(() => parseSglangSample(abort(extra), req)), JSON.stringify(extra)).not.toBeInstanceOf(AbortedGeneration);
    }
  });

  it("a scoring answer's abort is read before its (missing) logprobs, as sampling's is", () => {
    const body = [{ meta_info: { finish_reason: { type: "abort", message: "Aborted" }, input_token_logprobs: null } }];
    const e = malformed(() => parseSglangScore(body, sreq));
    expect(e).toBeInstanceOf(AbortedGeneration);
    expect(e.field).toBe("[0].meta_info.finish_reason.type");
  });

  it("the client retries it within its budget and uses the answer after it; every attempt aborted ends retryable, counted", async () => {
    let aborts = 2;
    fake = await startFake((_q, res) => json(res, 200, aborts-- > 0 ? abort() : sglangSample(-1)));
    const c = new OpenAIClient({ url: fake.url, label: "sglang", concurrency: 1, timeoutMs: 2000, retries: 3, baseDelayMs: 1 });
    expect((await c.postJson("/generate", {}, (j) => parseSglangSample(j, req))).tokens).toEqual([5, 6]);
    expect(fake.seen).toHaveLength(3);
    aborts = 1000;
    const e = await failure(c.postJson("/generate", {}, (j) => parseSglangSample(j, req)));
    expect(e.kind).toBe("aborted");
    expect(e.retryable).toBe(true);
    expect(e.attempts).toBe(4);
    expect(e.message).toBe(`sglang server ${fake.url} /generate: malformed response: meta_info.finish_reason.type: is "abort": the server gave up on the generation (Abort in waiting queue) (attempt 4)`);
    expect(fake.seen).toHaveLength(7);
  });

  it("a client error's abort is not retried", async () => {
    fake = await startFake((_q, res) => json(res, 200, abort({ status_code: 400, message: "Input length (5000 tokens) exceeds the maximum allowed length (4096 tokens)." })));
    const c = new OpenAIClient({ url: fake.url, label: "sglang", concurrency: 1, timeoutMs: 2000, retries: 3, baseDelayMs: 1 });
    const e = await failure(c.postJson("/generate", {}, (j) => parseSglangSample(j, req)));
    expect(e.kind).toBe("malformed");
    expect(e.retryable).toBe(false);
    expect(e.message).toContain("(an aborted generation: Input length (5000 tokens) exceeds the maximum allowed length (4096 tokens).)");
    expect(e.hint).toMatch(/it would abort again/);
    expect(fake.seen).toHaveLength(1);
  });

  it("meta_info.completion_tokens other than the tokens returned is refused", () => {
    const body = sglangSample(-1) as { meta_info: Record<string, unknown> };
    body.meta_info.completion_tokens = 3;
    const e = malformed(() => parseSglangSample(body, req));
    expect(e.field).toBe("meta_info.completion_tokens");
    expect(e.problem).toBe("is 3, but meta_info.output_token_logprobs has 2 tokens");
  });
});

describe("sampled ids past the model's vocabulary", () => {
  it("each dialect refuses an id at or past a known vocabulary size, naming its position; below it, or unknown, passes", () => {
    expect(malformed(() => parseWorkerSample(workerSample(-1), [req], { vocabSize: 6 })).field).toBe("samples[0].tokens[1]");
    expect(malformed(() => parseSglangSample(sglangSample(-1), req, { vocabSize: 6 })).field).toBe("meta_info.output_token_logprobs[1][1]");
    const v = malformed(() => parseVllmSample(vllmSample(-1), req, { model: "m", vocabSize: 6 }));
    expect(v.field).toMatch(/^choices\[0\]\.(token_ids|logprobs\.tokens)\[1\]$/);
    expect(v.problem).toBe("token id 6 is past the model's vocabulary of 6 ids (0…5)");
    expect(parseWorkerSample(workerSample(-1), [req], { vocabSize: 7 })[0]!.tokens).toEqual([5, 6]);
    expect(parseSglangSample(sglangSample(-1), req)).toMatchObject({ tokens: [5, 6] });
  });
});

describe("top-k alternatives past the model's vocabulary (the topk estimator trains toward them)", () => {
  const big = 10; // the listed id added below; the answers name 3, 4 and 9 otherwise
  it("each dialect refuses a listed id at or past a known vocabulary size, naming it; below it, or unknown, passes", () => {
    const vllm = vllmScore(-2);
    (vllm.choices[0]!.prompt_logprobs[3] as Record<string, unknown>)[String(big)] = { logprob: -5 };
    const sg = sglangScore(-2) as { meta_info: Record<string, unknown> }[];
    sg[0]!.meta_info.input_top_logprobs = [null, null, [[-1, 3, null]], [[-2, 4, null], [-5, big, null]]];
    const wk = workerScore(-2) as { results: { topk: { token: number; logprob: number }[][] }[] };
    wk.results[0]!.topk[1]!.push({ token: big, logprob: -5 });
    const cases: [string, (vocabSize?: number) => unknown, string][] = [
      ["vllm", (v) => vllmDialect({ model: "m", vocabSize: v }).parseScore(vllm, topkReq), `choices[0].prompt_logprobs[3]["${big}"]`],
      ["sglang", (v) => sglangDialect({ model: "m", vocabSize: v }).parseScore(sg, topkReq), "[0].meta_info.input_top_logprobs[3][1][1]"],
      ["worker", (v) => workerDialect({ model: "m", role: "teacher", vocabSize: v }).parseScore(wk, topkReq), "results[0].topk[1][1].token"],
    ];
    for (const [name, parse, field] of cases) {
      const e = malformed(() => parse(big));
      expect(e.field, name).toBe(field);
      expect(e.problem, name).toBe(`token id ${big} is past the model's vocabulary of ${big} ids (0…${big - 1})`);
      expect(e.hint, name).toMatch(/^The server lists among its top-k alternatives a token the model has no embedding row for/);
      expect(() => parse(big + 1), name).not.toThrow();
      expect(() => parse(undefined), name).not.toThrow();
    }
  });

  it("a teacher's listed id at or past the student's vocabulary is refused where the answer is read, in each dialect; below it, or unknown, passes", () => {
    const vllm = vllmScore(-2);
    (vllm.choices[0]!.prompt_logprobs[3] as Record<string, unknown>)[String(big)] = { logprob: -5 };
    const sg = sglangScore(-2) as { meta_info: Record<string, unknown> }[];
    sg[0]!.meta_info.input_top_logprobs = [null, null, [[-1, 3, null]], [[-2, 4, null], [-5, big, null]]];
    const wk = workerScore(-2) as { results: { topk: { token: number; logprob: number }[][] }[] };
    wk.results[0]!.topk[1]!.push({ token: big, logprob: -5 });
    // The teacher's own vocabulary is larger (or unknown): only the student's bounds the ids.
    const cases: [string, (student?: number) => unknown, string][] = [
      ["vllm", (s) => vllmDialect({ model: "m", vocabSize: 1000, studentVocabSize: s }).parseScore(vllm, topkReq), `choices[0].prompt_logprobs[3]["${big}"]`],
      ["sglang", (s) => sglangDialect({ model: "m", studentVocabSize: s }).parseScore(sg, topkReq), "[0].meta_info.input_top_logprobs[3][1][1]"],
      ["worker", (s) => workerDialect({ model: "m", role: "teacher", vocabSize: 1000, studentVocabSize: s }).parseScore(wk, topkReq), "results[0].topk[1][1].token"],
    ];
    for (const [name, parse, field] of cases) {
      const e = malformed(() => parse(big));
      expect(e.field, name).toBe(field);
      expect(e.problem, name).toBe(`token id ${big} is past the student's vocabulary of ${big} ids (0…${big - 1})`);
      expect(e.hint, name).toMatch(/^The teacher lists among its top-k alternatives a token the student has no output row for/);
      expect(e.hint, name).toContain("k1 estimator");
      expect(() => parse(big + 1), name).not.toThrow();
      expect(() => parse(undefined), name).not.toThrow();
    }
  });
});

describe("HTTP answers of the wrong kind", () => {
  const answer = (status: number, body: string, type = "application/json") => startFake((_q, res) => { res.writeHead(status, { "content-type": type }); res.end(body); });
  const post = () => client(fake!.url).postJson("/v1/completions", {}, (j) => parseVllmSample(j, req));

  it("HTTP 200 with an empty body names it and points at the server's log and the url", async () => {
    fake = await answer(200, "");
    const e = await failure(post());
    expect(e.code).toBe("TC7004");
    expect(e.message).toBe(`vllm server ${fake.url} /v1/completions: malformed response: the body is empty, not JSON`);
    expect(e.hint).toMatch(/answered without a body/);
  });

  it("HTTP 200 with an HTML page: another server answers at this URL", async () => {
    fake = await answer(200, "<!DOCTYPE html><html><body>Sign in</body></html>", "text/html");
    const e = await failure(post());
    expect(e.message).toContain("the body is an HTML page, not JSON: <!DOCTYPE html>");
    expect(e.hint).toMatch(/Another server answers at this URL/);
  });

  it("HTTP 200 with a bare NaN or -Infinity (Python's json.dumps default) is named as such", async () => {
    fake = await answer(200, '{"choices":[{"index":0,"finish_reason":"stop","token_ids":[5],"logprobs":{"token_logprobs":[NaN]}}]}');
    let e = await failure(post());
    expect(e.message).toContain("the body is not JSON: it holds a bare NaN or Infinity, which JSON cannot carry");
    expect(e.hint).toMatch(/diverged model/);
    await fake.close();
    fake = await answer(200, '{"choices":[{"index":0,"finish_reason":"stop","token_ids":[5],"logprobs":{"token_logprobs":[-Infinity]}}]}');
    e = await failure(post());
    expect(e.message).toContain("holds a bare NaN or Infinity");
  });

  it("HTTP 200 with a server-sent event stream (a gateway that forces streaming) is named as such", async () => {
    fake = await answer(200, 'data: {"choices":[{"index":0,"text":"a"}]}\n\ndata: [DONE]\n\n', "text/event-stream");
    const e = await failure(post());
    expect(e.kind).toBe("malformed");
    expect(e.message).toContain("the body is a server-sent event stream (`data:` lines), not one JSON answer: data: {");
    expect(e.hint).toMatch(/forces streaming/);
  });

  it("a body trickled a byte at a time past the timeout (slow-loris) is cut by the per-attempt timeout", async () => {
    fake = await startFake((_q, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      const t = setInterval(() => { if (res.writableEnded || res.destroyed) clearInterval(t); else res.write(" "); }, 20);
      res.on("close", () => clearInterval(t));
    });
    const c = new OpenAIClient({ url: fake.url, label: "vllm", concurrency: 1, timeoutMs: 300, retries: 1, baseDelayMs: 1 });
    const started = Date.now();
    const e = await failure(c.postJson("/v1/completions", {}, (j) => j));
    expect(e.kind).toBe("timeout");
    expect(e.message).toContain("no complete answer within 300 ms (attempt 2)");
    expect(Date.now() - started).toBeLessThan(3000);
  });

  it("HTTP 200 with FastAPI's {detail} is the server's error, not a dialect mismatch", async () => {
    fake = await answer(200, '{"detail":"Model is still loading"}');
    const e = await failure(post());
    expect(e.kind).toBe("server-error");
    expect(e.message).toContain("the server answered HTTP 200 with an error: Model is still loading");
  });

  it("4xx error bodies of vLLM, SGLang and FastAPI: their message, not retried", async () => {
    const forms: [number, unknown, string][] = [
      [400, { object: "error", message: "This model's maximum context length is 4096 tokens.", type: "BadRequestError", param: null, code: 400 }, "HTTP 400 Bad Request: This model's maximum context length is 4096 tokens."],
      [400, { error: { message: "The input (5000 tokens) is longer than the model's context length (4096 tokens).", type: "BadRequestError", code: 400 } }, "HTTP 400 Bad Request: The input (5000 tokens) is longer"],
      [404, { detail: "Not Found" }, "HTTP 404 Not Found: Not Found"],
      [422, { detail: [{ loc: ["body", "prompt"], msg: "Field required", type: "missing" }] }, 'HTTP 422 Unprocessable Entity: [{"loc":["body","prompt"],"msg":"Field required","type":"missing"}]'],
    ];
    for (const [status, body, want] of forms) {
      fake = await startFake((_q, res) => json(res, status, body));
      const e = await failure(client(fake.url).postJson("/v1/completions", {}, (j) => j));
      expect(e.message).toContain(want);
      expect(e.retryable).toBe(false);
      expect(e.hint).toBeTruthy();
      expect(fake.seen).toHaveLength(1);
      await fake.close(); fake = undefined;
    }
  });

  it("5xx error bodies are retried and end as a retryable failure with the server's message", async () => {
    fake = await startFake((_q, res) => json(res, 500, { object: "error", message: "CUDA error: an illegal memory access was encountered", type: "InternalServerError", code: 500 }));
    const c = new OpenAIClient({ url: fake.url, label: "sglang", concurrency: 1, timeoutMs: 2000, retries: 1, baseDelayMs: 1 });
    const e = await failure(c.postJson("/generate", {}, (j) => j));
    expect(e.message).toBe(`sglang server ${fake.url} /generate: HTTP 500 Internal Server Error: CUDA error: an illegal memory access was encountered (attempt 2)`);
    expect(e.retryable).toBe(true);
    expect(fake.seen).toHaveLength(2);
  });
});

describe("model names: the answer's model, and a server that lists none", () => {
  async function fakeVllm(data: Record<string, unknown>): Promise<string> {
    const w = new Worker(new URL("./fixtures/fake-vllm-server.mjs", import.meta.url), { workerData: data });
    workers.push(w);
    return `http://127.0.0.1:${await new Promise<number>((r) => w.once("message", r))}`;
  }
  const spec = (url: string) => ({ kind: "openai" as const, url, dialect: "vllm" as const, concurrency: 2, timeoutMs: 5000 });

  it("an answer naming another model than asked is refused (sampling and scoring)", async () => {
    const url = await fakeVllm({ model: "base", answerModel: "other-7b" });
    const s = await createOpenAIBackend(spec(url), { role: "student", model: "base" });
    try {
      const prompt = [...s.tokenizer.renderUser("look"), ...s.tokenizer.assistantPrefix()];
      let e = await failure(s.sample([{ prompt, maxTokens: 4, temperature: 1, seed: 1 }]));
      expect(e.code).toBe("TC7004");
      expect(e.message).toBe(`vllm server ${url} /v1/completions: malformed response: model: is 'other-7b', but the request asked for 'base'`);
      expect(e.hint).toMatch(/router or proxy/);
      expect(e.retryable).toBe(false);
      e = await failure(s.score([{ prompt, completion: [101], temperature: 1 }]));
      expect(e.message).toContain("model: is 'other-7b', but the request asked for 'base'");
    } finally { await s.close(); }
  });

  it("vLLM answers a request for one of its --served-model-names with the first: accepted", async () => {
    const url = await fakeVllm({ model: "qwen3-1.7b", aliases: ["Qwen/Qwen3-1.7B"] });
    const s = await createOpenAIBackend(spec(url), { role: "student", model: "Qwen/Qwen3-1.7B" });
    try {
      const prompt = [...s.tokenizer.renderUser("look"), ...s.tokenizer.assistantPrefix()];
      const [r] = await s.sample([{ prompt, maxTokens: 4, temperature: 1, seed: 1 }]);
      expect(r!.tokens).toHaveLength(3);
    } finally { await s.close(); }
  });

  it("a server whose /v1/models lists nothing stops the run at start, saying so", async () => {
    fake = await startFake((q, res) => {
      if (q.path === "/v1/models") return json(res, 200, { object: "list", data: [] });
      if (q.path === "/health") return json(res, 200, {});
      json(res, 404, { detail: "Not Found" });
    });
    const e = await failure(createOpenAIBackend(spec(fake.url), { role: "student", model: "base" }));
    expect(e.code).toBe("TC7004");
    expect(e.kind).toBe("config");
    expect(e.message).toBe(`vllm server ${fake.url} lists no models at /v1/models (its \`data\` is empty), so it cannot serve 'base'`);
    expect(e.hint).toMatch(/not finished loading its model/);
  });
});
