/**
 * Runs against an OpenAI-compatible server fail early and clearly, not mid-run (the scripted vLLM of
 * fixtures/fake-vllm-server.mjs): the model's context (max_model_len at /v1/models) against the run's
 * first prompt before step 1; finish_reason "abort" retried within the client's bounded policy;
 * sampled ids past the model's vocabulary (the trainer's /info vocab_size) refused, naming the position.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { afterAll, describe, expect, it } from "vitest";
import { composeRuntime } from "../../bin/compose.js";
import { compileFile } from "../../compiler/index.js";
import { nodeOf } from "../../plan/schema.js";
import { BackendError } from "../../runtime/backends/backend.js";
import { OpenAIClient } from "../../runtime/backends/openai/client.js";
import { createOpenAIBackend, HttpBackendError, WorkerTrainer } from "../../runtime/backends/openai/index.js";
import { EnvPool } from "../../runtime/env-pool.js";
import { createEnv } from "../../runtime/envs/registry.js";
import { checkContextLengths } from "../../runtime/preflight-context.js";

composeRuntime(); // the envs bin/ registers

const workers: Worker[] = [];
afterAll(async () => { await Promise.all(workers.map((w) => w.terminate())); });
async function fakeVllm(data: Record<string, unknown>): Promise<string> {
  const w = new Worker(new URL("./fixtures/fake-vllm-server.mjs", import.meta.url), { workerData: data });
  workers.push(w);
  return `http://127.0.0.1:${await new Promise<number>((r) => w.once("message", r))}`;
}
async function seen(url: string): Promise<{ path: string }[]> {
  return (await fetch(`${url}/_seen`)).json() as Promise<{ path: string }[]>;
}
const vllmSpec = (url: string) => ({ kind: "openai" as const, url, dialect: "vllm" as const, concurrency: 4, timeoutMs: 5000 });
async function failure(p: Promise<unknown>): Promise<HttpBackendError> {
  try { await p; } catch (e) { expect(e).toBeInstanceOf(HttpBackendError); return e as HttpBackendError; }
  throw new Error("expected a failure");
}

describe("the model's context against the run's first prompt (vLLM's max_model_len)", () => {
  const plan = (() => {
    const r = compileFile("examples/texthouse/opd.tcod", { overrides: [] });
    expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    return r.plans[0]!.plan;
  })();
  const rollout = nodeOf(plan, "Rollout")!, planner = nodeOf(plan, "EpisodePlanner")!;
  const envs = () => new Map(Object.entries(plan.resources.envs).map(([id, spec]) => [id, new EnvPool(id, 1, (instance) => createEnv(spec, { seed: 1, instance }))]));
  const setup = (s: Awaited<ReturnType<typeof createOpenAIBackend>>, maxTurns = planner.params.maxTurns) => ({
    plan, envId: rollout.params.env, agentId: rollout.params.agent, maxTurns, tokenizer: s.tokenizer,
    models: [{ name: "base", role: "student" as const, context: s.context }],
  });

  it("reads max_model_len from the model's card, shows it in the probe line, and refuses a first prompt that does not fit", async () => {
    const url = await fakeVllm({ model: "base", maxModelLen: 60 });
    const s = await createOpenAIBackend(vllmSpec(url), { role: "student", model: "base" });
    expect(s.context).toEqual({ tokens: 60, source: "vLLM's max_model_len at /v1/models (vllm serve --max-model-len)" });
    expect(s.probeLine).toMatch(/ · info no · context 60 tokens$/);
    const pools = envs();
    let e: unknown;
    try { await checkContextLengths(setup(s), pools); } catch (x) { e = x; }
    expect(e).toBeInstanceOf(BackendError);
    const b = e as BackendError;
    expect(b.code).toBe("TC7004");
    expect(b.message).toMatch(/^the student model 'base' reads at most 60 tokens \(vLLM's max_model_len at \/v1\/models \(vllm serve --max-model-len\)\), but the first prompt of task '[^']+' \(texthouse, split "train", agent '[^']+'\) has (\d+) tokens and a reply may add (\d+) more \(max_response_tokens\): \d+ > 60$/);
    expect(b.hint).toContain("vllm serve --max-model-len");
    expect(b.retryable).toBe(false);
    await Promise.all([...pools.values()].map((p) => p.close()));
    await s.close();
  });

  it("warns with the estimate where a whole episode may outgrow it, and says nothing where it fits or is unknown", async () => {
    const url = await fakeVllm({ model: "base", maxModelLen: 1500 });
    const s = await createOpenAIBackend(vllmSpec(url), { role: "student", model: "base" });
    const pools = envs();
    const long = await checkContextLengths(setup(s, 40), pools);
    expect(long).toHaveLength(1);
    expect(long[0]).toMatch(/^TC7004: the student model 'base' reads at most 1500 tokens \(.*\), but a whole episode may reach about \d+: 40 turns kept in memory \("accumulate"\) of a user message of about \d+ tokens/);
    expect(long[0]).toContain("a shorter agent memory (memory: window), or fewer max_turns");
    expect(await checkContextLengths(setup(s, 2), pools)).toEqual([]);
    expect(await checkContextLengths({ ...setup(s, 40), models: [{ name: "base", role: "student", context: undefined }] }, pools)).toEqual([]);
    await Promise.all([...pools.values()].map((p) => p.close()));
    await s.close();
  });

  it("a server that reports no context: none known, no check, the probe line as before", async () => {
    const url = await fakeVllm({ model: "base" });
    const s = await createOpenAIBackend(vllmSpec(url), { role: "student", model: "base" });
    expect(s.context).toBeUndefined();
    expect(s.probeLine).toMatch(/ · info no$/);
    await s.close();
  });
});

describe('finish_reason "abort" (vLLM: a request preempted and dropped under load)', () => {
  const prompt = [1, 100, 2];

  it("is retried within the client's bounded policy, and the answer after it is used", async () => {
    const url = await fakeVllm({ model: "base", aborts: 2 });
    const s = await createOpenAIBackend(vllmSpec(url), { role: "student", model: "base", retries: 3 });
    const before = (await seen(url)).filter((x) => x.path === "/v1/completions").length;
    const [r] = await s.sample([{ prompt, maxTokens: 8, temperature: 1, seed: 4 }]);
    expect(r!.tokens).toEqual([101, 101, 2]);
    expect((await seen(url)).filter((x) => x.path === "/v1/completions").length - before).toBe(3);
    await s.close();
  });

  it("every attempt aborted: the last one's error, retryable, with its attempt count and a hint", async () => {
    const url = await fakeVllm({ model: "base", aborts: 1000 });
    const s = await createOpenAIBackend(vllmSpec(url), { role: "student", model: "base", retries: 2 });
    const before = (await seen(url)).filter((x) => x.path === "/v1/completions").length;
    const e = await failure(s.sample([{ prompt, maxTokens: 8, temperature: 1, seed: 4 }]));
    expect(e.kind).toBe("aborted");
    expect(e.retryable).toBe(true);
    expect(e.attempts).toBe(3);
    expect(e.code).toBe("TC7004");
    expect(e.message).toBe(`vllm server ${url} /v1/completions: malformed response: choices[0].finish_reason: is "abort": the server gave up on the generation (attempt 3)`);
    expect(e.hint).toMatch(/every attempt aborted/);
    expect((await seen(url)).filter((x) => x.path === "/v1/completions").length - before).toBe(3);
    await s.close();
  });
});

describe("sampled ids against the model's vocabulary", () => {
  it("a vLLM student trained on a worker: ids at or past the trainer's vocab_size are refused, naming the position", async () => {
    const url = await fakeVllm({ model: "base", sampleIds: [101, 5000, 2] });
    const trainerUrl = await fakeVllm({ model: "base", trainer: true, trainerVocab: 5000 });
    const trainer = new WorkerTrainer(new OpenAIClient({ url: trainerUrl, label: "worker", concurrency: 1, timeoutMs: 5000 }));
    const s = await createOpenAIBackend(vllmSpec(url), { role: "student", model: "base", training: { trainer, adapterDir: mkdtempSync(join(tmpdir(), "tcod-vocab-")) } });
    const e = await failure(s.sample([{ prompt: [1, 100], maxTokens: 8, temperature: 1, seed: 4 }]));
    expect(e.kind).toBe("malformed");
    expect(e.retryable).toBe(false);
    expect(e.message).toContain("choices[0].token_ids[1]: token id 5000 is past the model's vocabulary of 5000 ids (0…4999)");
    expect(e.hint).toContain("no embedding row");
    await s.close();
  });

  it("unknown (vLLM reports no vocabulary size, no trainer): not checked", async () => {
    const url = await fakeVllm({ model: "base", sampleIds: [101, 5000, 2] });
    const s = await createOpenAIBackend(vllmSpec(url), { role: "student", model: "base" });
    const [r] = await s.sample([{ prompt: [1, 100], maxTokens: 8, temperature: 1, seed: 4 }]);
    expect(r!.tokens).toEqual([101, 5000, 2]);
    await s.close();
  });
});
