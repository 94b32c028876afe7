import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import type { ScoreRequest } from "../../runtime/backends/backend.js";
import { MalformedResponse, UnsupportedRequest } from "../../runtime/backends/openai/errors.js";
import { scoreGroupKey } from "../../runtime/backends/openai/dialects/dialect.js";
import { parseVllmSample, parseVllmScore, vllmDialect } from "../../runtime/backends/openai/dialects/vllm.js";
import { parseSglangSample, parseSglangScore, sglangDialect } from "../../runtime/backends/openai/dialects/sglang.js";
import { workerDialect } from "../../runtime/backends/openai/dialects/worker.js";

const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`./fixtures/${name}`, import.meta.url), "utf8"));
const sampleReq = { prompt: [151644, 872, 198], maxTokens: 8, temperature: 1, seed: 7 };

function unsupportedHint(f: () => unknown): string {
  try { f(); } catch (e) { if (e instanceof UnsupportedRequest) return e.hint; throw e; }
  throw new Error("expected UnsupportedRequest");
}

function malformedField(f: () => unknown): string {
  try { f(); } catch (e) { if (e instanceof MalformedResponse) return e.field; throw e; }
  throw new Error("expected MalformedResponse");
}

describe("vLLM dialect (docs/REFERENCES.md#vllm)", () => {
  const d = vllmDialect({ model: "Qwen/Qwen3-8B", stopTokenIds: [151645] });

  it("builds a token-in/token-out sampling body", () => {
    const call = d.buildSample([sampleReq]);
    expect(call.path).toBe("/v1/completions");
    expect(call.body).toEqual({
      model: "Qwen/Qwen3-8B", prompt: [151644, 872, 198], max_tokens: 8, temperature: 1, seed: 7, logprobs: 0,
      return_token_ids: true, return_tokens_as_token_ids: true, skip_special_tokens: false, stop_token_ids: [151645],
    });
  });

  it("parses sampled ids from token_ids and logprobs from token_logprobs", () => {
    expect(parseVllmSample(fixture("vllm-sample.json"), sampleReq)).toEqual({
      tokens: [3346, 10411, 151645], logprobs: [-0.5108, -1.2039, -0.0513], finishReason: "stop",
    });
  });

  it("falls back to token_id:N strings on servers without return_token_ids", () => {
    expect(parseVllmSample(fixture("vllm-sample-legacy.json"), sampleReq)).toEqual({
      tokens: [2508, 6006], logprobs: [-2.0, -0.25], finishReason: "length",
    });
  });

  it("names the field of a malformed sample body", () => {
    const body = fixture("vllm-sample.json") as { choices: { logprobs: { token_logprobs: unknown[] } }[] };
    body.choices[0]!.logprobs.token_logprobs[1] = null;
    expect(malformedField(() => parseVllmSample(body, sampleReq))).toBe("choices[0].logprobs.token_logprobs[1]");
    expect(malformedField(() => parseVllmSample({ choices: [] }, sampleReq))).toBe("choices");
    const legacy = fixture("vllm-sample-legacy.json") as { choices: { logprobs: { tokens: string[] } }[] };
    legacy.choices[0]!.logprobs.tokens[0] = "open";
    expect(malformedField(() => parseVllmSample(legacy, sampleReq))).toBe("choices[0].logprobs.tokens[0]");
    const aborted = fixture("vllm-sample.json") as { choices: { finish_reason: string }[] };
    aborted.choices[0]!.finish_reason = "abort";
    expect(malformedField(() => parseVllmSample(aborted, sampleReq))).toBe("choices[0].finish_reason");
  });

  const scoreReqs: ScoreRequest[] = [
    { prompt: [10, 11], completion: [13, 14], temperature: 1, topk: 1 },
    { prompt: [19], completion: [20, 30], temperature: 1, topk: 1 },
  ];

  it("batches many sequences into one scoring body with max_tokens 1 and prompt_logprobs k", () => {
    const call = d.buildScore(scoreReqs);
    expect(call.body).toEqual({ model: "Qwen/Qwen3-8B", prompt: [[10, 11, 13, 14], [19, 20, 30]], max_tokens: 1, temperature: 1, prompt_logprobs: 1 });
    expect(scoreGroupKey(scoreReqs[0]!)).toBe(scoreGroupKey(scoreReqs[1]!));
  });

  it("reads pl[i][String(id)].logprob for completion positions, ordered by choice index", () => {
    const out = parseVllmScore(fixture("vllm-score.json"), scoreReqs);
    // request 0 is choices[1] (index 0): positions 2, 3 → ids 13, 14
    expect(out[0]!.logprobs).toEqual([-0.05, -4.25]);
    // the actual token 14 ranks 9th, so the top-1 alternative is 15
    expect(out[0]!.topk).toEqual([[{ token: 13, logprob: -0.05 }], [{ token: 15, logprob: -0.3 }]]);
    // request 1 is choices[0] (index 1): positions 1, 2 → ids 20, 30
    expect(out[1]!.logprobs).toEqual([-3.0, -0.7]);
    expect(out[1]!.topk).toEqual([[{ token: 21, logprob: -0.1 }], [{ token: 30, logprob: -0.7 }]]);
  });

  it("rejects a prompt_logprobs entry without the scored token (re-tokenized prompt)", () => {
    const bad: ScoreRequest[] = [{ prompt: [10, 11], completion: [99, 14], temperature: 1 }, scoreReqs[1]!];
    expect(malformedField(() => parseVllmScore(fixture("vllm-score.json"), bad))).toBe("choices[1].prompt_logprobs[2]");
    const short: ScoreRequest[] = [{ prompt: [10, 11, 13, 14], completion: [1], temperature: 1 }, scoreReqs[1]!];
    expect(malformedField(() => parseVllmScore(fixture("vllm-score.json"), short))).toBe("choices[1].prompt_logprobs");
  });

  it("refuses temperatures that raw logprobs cannot honour, and top-k above --max-logprobs", () => {
    expect(() => d.buildSample([{ ...sampleReq, temperature: 0.7 }])).toThrow(UnsupportedRequest);
    expect(() => d.buildSample([{ ...sampleReq, temperature: 0 }])).not.toThrow();
    expect(() => d.buildScore([{ ...scoreReqs[0]!, temperature: 2 }])).toThrow(/raw \(pre-temperature\)/);
    expect(unsupportedHint(() => d.buildScore([{ ...scoreReqs[0]!, topk: 21 }]))).toMatch(/--max-logprobs/);
    expect(() => d.buildScore([{ prompt: [], completion: [1], temperature: 1 }])).toThrow(/empty prompt/);
    const processed = vllmDialect({ model: "m", logprobsMode: "processed" });
    expect((processed.buildScore([{ ...scoreReqs[0]!, temperature: 0.5 }]).body as { temperature: number }).temperature).toBe(0.5);
    expect(() => processed.buildSample([{ ...sampleReq, temperature: 0.7 }])).not.toThrow();
  });
});

describe("SGLang dialect (docs/REFERENCES.md#sglang)", () => {
  const d = sglangDialect({ model: "base", loraName: "student", stopTokenIds: [2] });

  it("builds /generate sampling with input_ids and return_logprob", () => {
    expect(d.logprobsMode).toBe("processed");
    expect(d.buildSample([{ ...sampleReq, temperature: 0.7 }])).toEqual({
      path: "/generate",
      body: {
        input_ids: [151644, 872, 198],
        sampling_params: { max_new_tokens: 8, temperature: 0.7, skip_special_tokens: false, no_stop_trim: true, stop_token_ids: [2] },
        return_logprob: true, lora_path: "student",
      },
    });
    const seeded = sglangDialect({ model: "base", seedField: "sampling_seed" }).buildSample([sampleReq]).body as { sampling_params: Record<string, unknown> };
    expect(seeded.sampling_params.sampling_seed).toBe(7);
  });

  it("parses [logprob, id, text] triples of output_token_logprobs", () => {
    expect(parseSglangSample(fixture("sglang-sample.json"), sampleReq)).toEqual({ tokens: [1522, 1401], logprobs: [-0.693, -1.609], finishReason: "length" });
    expect(parseSglangSample([fixture("sglang-sample.json")], sampleReq).tokens).toEqual([1522, 1401]);
  });

  it("flags output_ids that disagree with the logprob triples", () => {
    const body = fixture("sglang-sample.json") as { output_ids: number[] };
    body.output_ids[1] = 5;
    expect(malformedField(() => parseSglangSample(body, sampleReq))).toBe("output_ids");
  });

  const scoreReqs: ScoreRequest[] = [
    { prompt: [1, 7], completion: [8], temperature: 1, topk: 2 },
    { prompt: [1], completion: [4, 5, 6], temperature: 1, topk: 2 },
  ];

  it("builds batched scoring with logprob_start_len 0", () => {
    expect(d.buildScore(scoreReqs).body).toEqual({
      input_ids: [[1, 7, 8], [1, 4, 5, 6]], sampling_params: { max_new_tokens: 1, temperature: 1 },
      return_logprob: true, logprob_start_len: 0, top_logprobs_num: 2, lora_path: "student",
    });
  });

  it("reads input_token_logprobs[i][0] and input_top_logprobs[i] for completion positions", () => {
    const out = parseSglangScore(fixture("sglang-score.json"), scoreReqs);
    expect(out[0]).toEqual({ logprobs: [-0.125], topk: [[{ token: 8, logprob: -0.125 }, { token: 2, logprob: -3.0 }]] });
    expect(out[1]!.logprobs).toEqual([-1.0, -0.5, -0.75]);
    expect(out[1]!.topk![0]).toEqual([{ token: 9, logprob: -0.4 }, { token: 4, logprob: -1.0 }]);
  });

  it("rejects input ids that differ from the scored sequence; a null inside the completion is SGLang's -inf, all of it null a NaN", () => {
    expect(malformedField(() => parseSglangScore(fixture("sglang-score.json"), [{ prompt: [1, 7], completion: [9], temperature: 1 }, scoreReqs[1]!])))
      .toBe("[0].meta_info.input_token_logprobs[2][1]");
    const nulled = fixture("sglang-score.json") as { meta_info: { input_token_logprobs: unknown[][] } }[];
    nulled[0]!.meta_info.input_token_logprobs[1]![0] = null;
    const reqs = [{ prompt: [1], completion: [7, 8], temperature: 1 }, scoreReqs[1]!];
    expect(parseSglangScore(nulled, reqs)[0]!.logprobs[0]).toBe(-9999);
    nulled[0]!.meta_info.input_token_logprobs[2]![0] = null;
    expect(malformedField(() => parseSglangScore(nulled, reqs))).toBe("[0].meta_info.input_token_logprobs");
  });

  it("scores at the requested temperature (processed logprobs) unless told the server is raw", () => {
    expect((d.buildScore([{ ...scoreReqs[0]!, temperature: 0.5 }]).body as { sampling_params: { temperature: number } }).sampling_params.temperature).toBe(0.5);
    expect(unsupportedHint(() => sglangDialect({ model: "m", logprobsMode: "raw" }).buildScore([{ ...scoreReqs[0]!, temperature: 0.5 }]))).toMatch(/SGLANG_RETURN_ORIGINAL_LOGPROB/);
  });
});

describe("worker dialect: the entropy is computed only where a request asks for it", () => {
  const reqs: ScoreRequest[] = [
    { prompt: [1, 2], completion: [3, 4], temperature: 1 },
    { prompt: [5], completion: [6], temperature: 1 },
  ];
  it("asks /score for the entropy when the requests do (T-DUR's turn.entropy), or the option forces it", () => {
    const d = workerDialect({ model: "m", role: "student" });
    expect((d.buildScore(reqs).body as { entropy: boolean }).entropy).toBe(false);
    const asked = reqs.map((r) => ({ ...r, entropy: true }));
    expect((d.buildScore(asked).body as { entropy: boolean }).entropy).toBe(true);
    const forced = workerDialect({ model: "m", role: "teacher", entropy: true });
    expect((forced.buildScore(reqs).body as { entropy: boolean }).entropy).toBe(true);
  });
  it("never batches a request that asks for the entropy with one that does not", () => {
    expect(scoreGroupKey(reqs[0]!)).toBe(scoreGroupKey(reqs[1]!));
    expect(scoreGroupKey({ ...reqs[0]!, entropy: true })).not.toBe(scoreGroupKey(reqs[1]!));
  });
});
