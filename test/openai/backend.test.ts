/**
 * createOpenAIBackend end to end against a scripted vLLM (fixtures/fake-vllm-server.mjs, in a worker
 * thread) and a scripted trainer (node:http in this thread): probe, tokenizer, sampling, batched
 * teacher scoring, temperature semantics, and training with the LoRA hot-load after each step.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { afterAll, describe, expect, it } from "vitest";
import { OpenAIClient } from "../../runtime/backends/openai/client.js";
import { assertSameTokenizer, createOpenAIBackend, HttpBackendError, WorkerTrainer } from "../../runtime/backends/openai/index.js";
import type { FakeServer } from "./fake-server.js";

const lp = (t: number, i: number): number => -(1 + ((t + i) % 5) / 4); // the fake model (fake-vllm-server.mjs)
const workers: Worker[] = [];
const fakes: FakeServer[] = [];
afterAll(async () => { await Promise.all([...workers.map((w) => w.terminate()), ...fakes.map((f) => f.close())]); });

async function fakeVllm(data: Record<string, unknown>): Promise<string> {
  const w = new Worker(new URL("./fixtures/fake-vllm-server.mjs", import.meta.url), { workerData: data });
  workers.push(w);
  return `http://127.0.0.1:${await new Promise<number>((r) => w.once("message", r))}`;
}
async function seen(url: string): Promise<{ path: string; body: Record<string, unknown> }[]> {
  return (await fetch(`${url}/_seen`)).json() as Promise<{ path: string; body: Record<string, unknown> }[]>;
}
const vllmSpec = (url: string) => ({ kind: "openai" as const, url, dialect: "vllm" as const, concurrency: 4, timeoutMs: 5000 });
async function failure(p: Promise<unknown>): Promise<HttpBackendError> {
  try { await p; } catch (e) { expect(e).toBeInstanceOf(HttpBackendError); return e as HttpBackendError; }
  throw new Error("expected a failure");
}

describe("createOpenAIBackend (vLLM dialect)", () => {
  it("probes a full-featured server and reports it in one line", async () => {
    const url = await fakeVllm({ model: "Qwen/Qwen3-8B", openapi: true, lora: true, devMode: true });
    const t = await createOpenAIBackend(vllmSpec(url), { role: "teacher", model: "Qwen/Qwen3-8B" });
    expect(t.probeLine).toBe(`vllm ${url}: healthy · model Qwen/Qwen3-8B served · tokenize yes · detokenize yes · lora load/unload yes/yes · prefix-cache reset yes · prompt logprobs yes · info no`);
    await t.close();
  });

  it("probes a bare server by harmless requests, and refuses a model it does not serve", async () => {
    const url = await fakeVllm({ model: "base" });
    const s = await createOpenAIBackend(vllmSpec(url), { role: "student", model: "base" });
    expect(s.probeLine).toContain("lora load/unload no/no · prefix-cache reset unknown · prompt logprobs yes");
    await s.close();
    const e = await failure(createOpenAIBackend(vllmSpec(url), { role: "student", model: "Qwen/Qwen3-1.7B" }));
    expect(e.kind).toBe("config");
    expect(e.message).toContain("does not serve model 'Qwen/Qwen3-1.7B' (it serves: base)");
  });

  it("samples token-in/token-out and refuses T≠1 against raw logprobs", async () => {
    const url = await fakeVllm({ model: "base" });
    const s = await createOpenAIBackend(vllmSpec(url), { role: "student", model: "base" });
    const prompt = [...s.tokenizer.renderUser("look"), ...s.tokenizer.assistantPrefix()];
    const [r] = await s.sample([{ prompt, maxTokens: 8, temperature: 1, seed: 4 }]);
    expect(r).toEqual({ tokens: [101, 101, 2], logprobs: [101, 101, 2].map((t, i) => lp(t, prompt.length + i)), finishReason: "stop" });
    const body = (await seen(url)).filter((x) => x.path === "/v1/completions").at(-1)!.body;
    expect(body).toMatchObject({ model: "base", prompt, seed: 4, logprobs: 0, return_token_ids: true, stop_token_ids: [2] });
    const e = await failure(s.sample([{ prompt, maxTokens: 8, temperature: 0.7, seed: 4 }]));
    expect(e.kind).toBe("unsupported");
    expect(e.hint).toContain("--logprobs-mode processed_logprobs");
    const processed = await createOpenAIBackend(vllmSpec(url), { role: "student", model: "base", logprobsMode: "processed" });
    await expect(processed.sample([{ prompt, maxTokens: 8, temperature: 0.7, seed: 4 }])).resolves.toHaveLength(1);
    await Promise.all([s.close(), processed.close()]);
  });

  it("batches concurrent teacher scoring (16 sequences per call) and reads pl[i][String(id)]", async () => {
    const url = await fakeVllm({ model: "teacher" });
    const t = await createOpenAIBackend(vllmSpec(url), { role: "teacher", model: "teacher" });
    const before = (await seen(url)).length;
    const reqs = Array.from({ length: 20 }, (_, i) => ({ prompt: [1, 100 + i], completion: [120 + i, 2], temperature: 1, topk: i % 2 ? 2 : undefined }));
    const out = await Promise.all(reqs.map((r) => t.score([r]).then((x) => x[0]!)));
    out.forEach((o, i) => {
      expect(o.logprobs).toEqual([lp(120 + i, 2), lp(2, 3)]);
      if (i % 2) expect(o.topk![0]).toEqual([{ token: 121 + i, logprob: -0.5 }, { token: 122 + i, logprob: -0.25 }].sort((a, b) => b.logprob - a.logprob));
    });
    const calls = (await seen(url)).slice(before).filter((x) => x.path === "/v1/completions");
    // two groups (topk 0 and topk 2) of 10 → one call each
    expect(calls.map((c) => (c.body.prompt as number[][]).length).sort()).toEqual([10, 10]);
    expect(calls.every((c) => c.body.max_tokens === 1)).toBe(true);
    await t.close();
  });

  it("refuses a teacher whose tokenizer differs from the student's", async () => {
    const s = await createOpenAIBackend(vllmSpec(await fakeVllm({ model: "m" })), { role: "student", model: "m" });
    const t = await createOpenAIBackend(vllmSpec(await fakeVllm({ model: "m", shift: 3 })), { role: "teacher", model: "m" });
    expect(() => assertSameTokenizer(s, t)).toThrow(/do not share a tokenizer/);
    await Promise.all([s.close(), t.close()]);
  });

  it("trains on a worker and hot-loads each new adapter: unload → load → reset, then samples from it", async () => {
    const url = await fakeVllm({ model: "base", openapi: true, lora: true, devMode: true });
    const adapterDir = mkdtempSync(join(tmpdir(), "tcod-adapters-"));
    const trainerUrl = await fakeVllm({ model: "base", trainer: true });
    const trainerClient = new OpenAIClient({ url: trainerUrl, label: "worker", concurrency: 1, timeoutMs: 5000 });
    const s = await createOpenAIBackend(vllmSpec(url), { role: "student", model: "base", training: { trainer: new WorkerTrainer(trainerClient), adapterDir } });

    const noTrainer = await createOpenAIBackend(vllmSpec(url), { role: "student", model: "base" });
    const e = await failure(noTrainer.train([], { lr: 1, lossFn: "ppo", clip: 0.2, gradClip: 1 }));
    expect(e.message).toContain("a vllm student cannot train");
    await noTrainer.close();

    const row = { tokens: [1, 100, 101, 2], mask: [0, 1, 1, 1], advantages: [0, 0.1, -0.2, 0.3], oldLogprobs: [0, -1, -1, -1], lossWeights: [0, 1 / 3, 1 / 3, 1 / 3] };
    const stats = await s.train([row], { lr: 1e-5, lossFn: "importance_sampling", clip: 0.2, gradClip: 1, logRatioClamp: 20 });
    expect(stats).toEqual({ loss: 0.5, gradNorm: 0.25, tokens: 3 });
    expect(s.version()).toBe(1);
    const trainerSeen = (await seen(trainerUrl)).filter((x) => !["/tokenize", "/detokenize", "/info"].includes(x.path));
    expect(trainerSeen.map((x) => x.path)).toEqual(["/forward_backward", "/optim_step", "/save"]);
    // The plan's clamp travels with the call (the worker clamps only when told: Tinker's loss has none).
    expect(trainerSeen[0]!.body).toMatchObject({ loss: "importance_sampling", clip: 0.2, dual_clip: 3, log_ratio_clamp: 20, rows: [{ old_logprobs: row.oldLogprobs, loss_weights: row.lossWeights }] });
    expect(trainerSeen[2]!.body).toMatchObject({ path: join(adapterDir, "step-1"), kind: "lora" });
    expect(existsSync(join(adapterDir, "step-1", "adapter_config.json"))).toBe(true);

    // Exact-KL targets (opd "topk"/"full", gkd) travel as the worker's per-token row fields.
    const q = { tokens: [100, 7], logprobs: [-0.1, -3], rest: -9 };
    const withKl = { ...row, klCoefs: [0, 1, 1, 0], teacherDistributions: [null, q, q, null] };
    await s.train([withKl], { lr: 1e-5, lossFn: "ppo", clip: 0.2, gradClip: 1 });
    const fb = (await seen(trainerUrl)).filter((x) => x.path === "/forward_backward").at(-1)!.body;
    expect(fb.rows).toEqual([{ tokens: row.tokens, mask: row.mask, advantages: row.advantages, old_logprobs: row.oldLogprobs, loss_weights: row.lossWeights,
      kl_coefs: [0, 1, 1, 0], teacher_distributions: [null, q, q, null] }]);
    await expect(s.train([{ ...withKl, klCoefs: [1] }], { lr: 1e-5, lossFn: "ppo", clip: 0.2, gradClip: 1 })).rejects.toThrow(/train row 0: klCoefs has 1 entries for 4 tokens/);
    const log = (await seen(url)).filter((x) => x.path !== "/_seen").map((x) => x.path);
    const lora = log.filter((p) => /lora|reset/.test(p));
    expect(lora).toEqual([
      "/v1/unload_lora_adapter", "/v1/load_lora_adapter", "/reset_prefix_cache",
      "/v1/unload_lora_adapter", "/v1/load_lora_adapter", "/reset_prefix_cache",
    ]);
    const loads = (await seen(url)).filter((x) => x.path === "/v1/load_lora_adapter").map((x) => x.body);
    expect(loads).toEqual([{ lora_name: "tcod-student", lora_path: join(adapterDir, "step-1") }, { lora_name: "tcod-student", lora_path: join(adapterDir, "step-2") }]);

    await s.sample([{ prompt: [1, 100], maxTokens: 3, temperature: 1, seed: 0 }]);
    const last = (await seen(url)).filter((x) => x.path === "/v1/completions").at(-1)!.body;
    expect(last.model).toBe("tcod-student");
    await s.train([row], { lr: 1e-5, lossFn: "ppo", clip: 0.2, gradClip: 1 });
    // only the last two step adapters stay on disk
    expect(["step-1", "step-2", "step-3"].map((d) => existsSync(join(adapterDir, d)))).toEqual([false, true, true]);
    await s.close();
  });

  it("refuses a trainer whose tokenizer differs from the inference server's", async () => {
    const url = await fakeVllm({ model: "base", lora: true });
    const trainerClient = new OpenAIClient({ url: await fakeVllm({ model: "base", trainer: true, template: "bracket" }), label: "worker", concurrency: 1, timeoutMs: 5000 });
    const e = await failure(createOpenAIBackend(vllmSpec(url), { role: "student", model: "base", training: { trainer: new WorkerTrainer(trainerClient), adapterDir: tmpdir() } }));
    expect(e.kind).toBe("mismatch");
    expect(e.message).toMatch(/^inference server \(http:\/\/127\.0\.0\.1:\d+\) and trainer \(http:\/\/127\.0\.0\.1:\d+\) do not share a tokenizer, so adapters trained there/);
    expect(e.message).toContain("chat template");
  });

  it("reports an unreachable server at creation with what to do", async () => {
    const { deadPort } = await import("./fake-server.js");
    const url = `http://127.0.0.1:${await deadPort()}`;
    const e = await failure(createOpenAIBackend({ ...vllmSpec(url), timeoutMs: 500 }, { role: "teacher", model: "m", retries: 1 }));
    expect(e.kind).toBe("unreachable");
    expect(e.message).toContain(`vllm server ${url} /health: unreachable (ECONNREFUSED)`);
    expect(e.hint).toContain("vllm serve");
  });

  it("reads the bearer token from the environment variable the spec names, and says when it is unset", async () => {
    const url = await fakeVllm({ model: "m" });
    const e = await failure(createOpenAIBackend({ ...vllmSpec(url), apiKeyEnv: "TCOD_TEST_KEY" }, { role: "teacher", model: "m", env: {} }));
    expect(e.message).toContain("environment variable TCOD_TEST_KEY (named by apiKeyEnv) is not set");
    const t = await createOpenAIBackend({ ...vllmSpec(url), apiKeyEnv: "TCOD_TEST_KEY" }, { role: "teacher", model: "m", env: { TCOD_TEST_KEY: "k" } });
    await t.close();
  });
});

describe("createOpenAIBackend (SGLang dialect)", () => {
  const sglangSpec = (url: string) => ({ kind: "openai" as const, url, dialect: "sglang" as const, concurrency: 4, timeoutMs: 5000 });
  const chatTemplate = { system: "<|im_start|>system\n{content}<|im_end|>\n", user: "<|im_start|>user\n{content}<|im_end|>\n", assistantPrefix: "<|im_start|>assistant\n", assistantSuffix: "<|im_end|>\n" };

  it("samples and scores through /generate, batches scoring, trains with hot-load into lora_path", async () => {
    const url = await fakeVllm({ model: "base", sglang: true, noChat: true, openapi: true, lora: true, devMode: true });
    const trainerUrl = await fakeVllm({ model: "base", trainer: true });
    const trainerClient = new OpenAIClient({ url: trainerUrl, label: "worker", concurrency: 1, timeoutMs: 5000 });
    const adapterDir = mkdtempSync(join(tmpdir(), "tcod-sgl-"));
    const s = await createOpenAIBackend(sglangSpec(url), { role: "student", model: "base", chatTemplate, sglang: { seedField: "sampling_seed" },
      training: { trainer: new WorkerTrainer(trainerClient), adapterDir, loraName: "stu" } });
    expect(s.probeLine).toBe(`sglang ${url}: healthy · model base served · tokenize yes · detokenize yes · lora load/unload yes/yes · prefix-cache reset yes · prompt logprobs yes · info no`);
    const prompt = [...s.tokenizer.renderUser("look"), ...s.tokenizer.assistantPrefix()];
    // SGLang logprobs are post-temperature, so T = 0.7 is fine
    const [r] = await s.sample([{ prompt, maxTokens: 5, temperature: 0.7, seed: 5 }]);
    expect(r).toEqual({ tokens: [102, 101, 2], logprobs: [102, 101, 2].map((t, i) => lp(t, prompt.length + i)), finishReason: "stop" });
    const scored = await Promise.all([3, 4, 5].map((k) => s.score([{ prompt: [1, 7], completion: [k, 2], temperature: 1, topk: 2 }]).then((x) => x[0]!)));
    expect(scored[1]).toEqual({ logprobs: [lp(4, 2), lp(2, 3)], topk: [[{ token: 6, logprob: -0.25 }, { token: 5, logprob: -0.5 }], [{ token: 4, logprob: -0.25 }, { token: 3, logprob: -0.5 }]] });
    const gens = (await seen(url)).filter((x) => x.path === "/generate" && x.body.logprob_start_len === 0);
    expect(gens.at(-1)!.body.input_ids).toEqual([[1, 7, 3, 2], [1, 7, 4, 2], [1, 7, 5, 2]]); // one call for three callers

    await s.train([{ tokens: [1, 100, 2], mask: [0, 1, 1], advantages: [0, 1, 1], oldLogprobs: [0, -1, -1], lossWeights: [0, 0.5, 0.5] }],
      { lr: 1e-5, lossFn: "importance_sampling", clip: 0.2, gradClip: 1 });
    const lora = (await seen(url)).filter((x) => /lora|flush/.test(x.path));
    expect(lora.map((x) => x.path)).toEqual(["/unload_lora_adapter", "/load_lora_adapter", "/flush_cache"]);
    expect(lora[1]!.body).toEqual({ lora_name: "stu", lora_path: join(adapterDir, "step-1") });
    await s.sample([{ prompt, maxTokens: 5, temperature: 1, seed: 1 }]);
    const last = (await seen(url)).filter((x) => x.path === "/generate").at(-1)!.body;
    expect(last).toMatchObject({ lora_path: "stu", sampling_params: { sampling_seed: 1 } });
    await s.close();
  });
});
