/**
 * The client against the real tcod worker process (worker/), on CPU with tiny random models built from
 * a config and a word-level vocabulary. Skipped (with the reason) only outside CI when no python with
 * torch + transformers + peft is found; in CI a missing worker is a failure.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SampleRequest, TrainRow } from "../../runtime/backends/backend.js";
import { assertSameTokenizer, createOpenAIBackend, HttpBackendError, type OpenAIStudent, type OpenAITeacher } from "../../runtime/backends/openai/index.js";
import { startWorker, startWorkerForSpec, type WorkerProcess } from "../../runtime/backends/openai/worker-process.js";
import { workerMissing } from "../helpers/worker.js";
import { topkTargetDistribution } from "../../runtime/signals/topk-target.js";

const missing = workerMissing("the worker integration tests");

const WORDS = ("go to the a kitchen bedroom desk table shelf drawer fridge cabinet sink apple bread egg knife key mug "
  + "take put in on open close use clean heat cool examine look inventory you see are is nothing arrive at your task find "
  + "and then with from 1 2 3 4 5 . , north south east west agent be brief").split(" ");

describe.skipIf(missing !== undefined)("OpenAI-compatible client against the real tcod worker (CPU, tiny models)", () => {
  let worker: WorkerProcess;
  let student: OpenAIStudent;
  let teacher: OpenAITeacher;
  let dir: string;
  const spec = (url: string) => ({ kind: "worker" as const, url, start: false, concurrency: 4, timeoutMs: 60_000 });

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "tcod-openai-int-"));
    writeFileSync(join(dir, "words.txt"), WORDS.join("\n"));
    writeFileSync(join(dir, "student.json"), JSON.stringify({ arch: "llama", hidden_size: 64, num_hidden_layers: 2, seed: 0, vocab: "words.txt" }));
    writeFileSync(join(dir, "teacher.json"), JSON.stringify({ arch: "llama", hidden_size: 64, num_hidden_layers: 2, seed: 7, vocab: "words.txt" }));
    worker = await startWorker({
      args: ["--model", join(dir, "student.json"), "--teacher", join(dir, "teacher.json"), "--served-name", "tiny-student", "--device", "cpu", "--root", dir],
      env: { OMP_NUM_THREADS: "1" },
    });
    student = await createOpenAIBackend(spec(worker.url), { role: "student", model: "tiny-student" });
    teacher = await createOpenAIBackend(spec(worker.url), { role: "teacher", model: join(dir, "teacher.json") });
  });
  afterAll(async () => {
    await student?.close();
    await teacher?.close();
    await worker?.stop();
  });

  it("probes the worker and prints one line", () => {
    expect(student.probeLine).toContain(`worker ${worker.url}: healthy · model tiny-student served · tokenize yes · detokenize yes`);
    expect(student.probeLine).toContain("lora load/unload no/no · prefix-cache reset no · prompt logprobs yes · info yes");
    expect(student.version()).toBe(0);
  });

  it("reads chat segments from the worker's template and agrees with the teacher's tokenizer", () => {
    const t = student.tokenizer;
    const [imStart, imEnd] = t.encode("<|im_start|> <|im_end|>");
    expect(t.renderUser("go to desk 1")).toEqual([imStart, ...t.encode("user go to desk 1"), imEnd]);
    expect(t.assistantPrefix()).toEqual([imStart, ...t.encode("assistant")]);
    expect(t.assistantSuffix()).toEqual([imEnd]);
    expect(t.stopTokens).toContain(imEnd);
    expect(t.decode(t.encode("open the fridge"))).toBe("open the fridge");
    expect(() => assertSameTokenizer({ tokenizer: student.tokenizer, server: student.server }, { tokenizer: teacher.tokenizer, server: teacher.server })).not.toThrow();
  });

  const prompt = (): number[] => {
    const t = student.tokenizer;
    return [...t.renderSystem("be brief"), ...t.renderUser("your task is to find the key ."), ...t.assistantPrefix()];
  };

  it("samples concurrently with per-request seeds, deterministically, with the student's own logprobs", async () => {
    const reqs: SampleRequest[] = Array.from({ length: 6 }, (_, i) => ({ prompt: prompt(), maxTokens: 6, temperature: 1, seed: 100 + (i % 3) }));
    const [a, b] = await Promise.all([student.sample(reqs.slice(0, 3)), student.sample(reqs.slice(3))]);
    expect(a).toHaveLength(3);
    for (let i = 0; i < 3; i++) expect(b![i]!.tokens).toEqual(a![i]!.tokens); // same seed → same sample
    for (const s of a!) {
      expect(s.tokens.length).toBe(s.logprobs.length);
      expect(s.tokens.every((id) => id >= 0 && id < student.tokenizer.vocabSize)).toBe(true);
      expect(s.logprobs.every((lp) => lp <= 0)).toBe(true);
    }
    // scoring the samples reproduces the sampling logprobs (T = 1, processed)
    const scored = await student.score(a!.map((s) => ({ prompt: prompt(), completion: s.tokens, temperature: 1, entropy: true })));
    scored.forEach((r, i) => r.logprobs.forEach((lp, j) => expect(lp).toBeCloseTo(a![i]!.logprobs[j]!, 4)));
    expect(scored[0]!.entropy).toHaveLength(a![0]!.tokens.length);
    // Entropy only where asked: it is a reduction over the vocabulary at every position.
    const plain = await student.score(a!.map((s) => ({ prompt: prompt(), completion: s.tokens, temperature: 1 })));
    expect(plain[0]!.entropy).toBeUndefined();
    plain.forEach((r, i) => r.logprobs.forEach((lp, j) => expect(lp).toBeCloseTo(scored[i]!.logprobs[j]!, 6)));
  });

  it("scores with the teacher beside the student, with top-k and entropy; the vLLM dialect agrees through /v1/completions", async () => {
    const completion = student.tokenizer.encode("take key from drawer 2");
    const [t] = await teacher.score([{ prompt: prompt(), completion, temperature: 1, topk: 3 }]);
    expect(t!.logprobs).toHaveLength(completion.length);
    expect(t!.topk![0]).toHaveLength(3);
    expect(t!.topk![0]![0]!.logprob).toBeGreaterThanOrEqual(t!.topk![0]![1]!.logprob);
    const [s] = await student.score([{ prompt: prompt(), completion, temperature: 1 }]);
    expect(s!.logprobs).not.toEqual(t!.logprobs); // different weights (seed 7 vs 0)

    const viaVllm = await createOpenAIBackend({ kind: "openai", url: worker.url, dialect: "vllm", concurrency: 2, timeoutMs: 60_000 },
      { role: "teacher", model: join(dir, "teacher.json") });
    try {
      const [v] = await viaVllm.score([{ prompt: prompt(), completion, temperature: 1, topk: 3 }]);
      v!.logprobs.forEach((lp, j) => expect(lp).toBeCloseTo(t!.logprobs[j]!, 4));
      expect(v!.topk![1]!.map((x) => x.token)).toEqual(t!.topk![1]!.map((x) => x.token));
      expect(viaVllm.probeLine).toContain("vllm");
    } finally {
      await viaVllm.close();
    }
  });

  it("trains (forward_backward + optim_step), bumps the version, and checkpoints round-trip", async () => {
    const p = prompt();
    const [s] = await student.sample([{ prompt: p, maxTokens: 5, temperature: 1, seed: 3 }]);
    const completion = s!.tokens;
    const [t] = await teacher.score([{ prompt: p, completion, temperature: 1 }]);
    const n = p.length + completion.length;
    const mask = [...p.map(() => 0), ...completion.map(() => 1)];
    const adv = [...p.map(() => 0), ...completion.map((_, j) => t!.logprobs[j]! - s!.logprobs[j]!)];
    const row: TrainRow = { tokens: [...p, ...completion], mask, advantages: adv, oldLogprobs: [...p.map(() => 0), ...s!.logprobs],
      lossWeights: mask.map((m) => m / completion.length) };
    expect(row.tokens).toHaveLength(n);
    const before = (await student.score([{ prompt: p, completion, temperature: 1 }]))[0]!.logprobs;
    const stats = await student.train([row], { lr: 1e-2, lossFn: "importance_sampling", clip: 0.2, gradClip: 1 });
    expect(student.version()).toBe(1);
    expect(stats.tokens).toBe(completion.length);
    expect(stats.gradNorm).toBeGreaterThan(0);
    const after1 = (await student.score([{ prompt: p, completion, temperature: 1 }]))[0]!.logprobs;
    expect(after1).not.toEqual(before);

    const ckpt = join(dir, "ckpt-1");
    await student.saveState(ckpt);
    await student.train([row], { lr: 1e-2, lossFn: "ppo", clip: 0.2, gradClip: 1 });
    expect(student.version()).toBe(2);
    await student.loadState(ckpt);
    expect(student.version()).toBe(1);
    const restored = (await student.score([{ prompt: p, completion, temperature: 1 }]))[0]!.logprobs;
    restored.forEach((lp, j) => expect(lp).toBeCloseTo(after1[j]!, 5));
  });

  it("turns the worker's 400 into a non-retryable error naming the server and its message", async () => {
    const err = await student.sample([{ prompt: [99_999], maxTokens: 2, temperature: 1, seed: 0 }]).then(() => undefined, (e: unknown) => e);
    expect(err).toBeInstanceOf(HttpBackendError);
    const e = err as HttpBackendError;
    expect(e.status).toBe(400);
    expect(e.retryable).toBe(false);
    expect(e.message).toContain(`worker server ${worker.url} /sample: HTTP 400`);
    const bad = await student.train([{ tokens: [1, 2], mask: [1, 1], advantages: [0, 0], oldLogprobs: [0, 0], lossWeights: [0, 1] }],
      { lr: 1e-3, lossFn: "importance_sampling", clip: 0.2, gradClip: 1 }).then(() => undefined, (x: unknown) => x);
    expect((bad as HttpBackendError).message).toMatch(/mask\[0\]/);
  });

  it("starts a worker for a `start: true` spec on the spec's port, with a bearer token from tokenEnv", async () => {
    const { createServer } = await import("node:net");
    const port = await new Promise<number>((r) => { const s = createServer().listen(0, "127.0.0.1", () => { const p = (s.address() as { port: number }).port; s.close(() => r(p)); }); });
    process.env.TCOD_TEST_WORKER_TOKEN = "tok-123";
    const wspec = { kind: "worker" as const, url: `http://127.0.0.1:${port}`, start: true, tokenEnv: "TCOD_TEST_WORKER_TOKEN", concurrency: 2, timeoutMs: 60_000 };
    const w = await startWorkerForSpec(wspec, { student: join(dir, "student.json"), extraArgs: ["--device", "cpu"], env: { OMP_NUM_THREADS: "1" } });
    try {
      expect(w.url).toBe(`http://127.0.0.1:${port}`);
      const unauth = await fetch(`${w.url}/info`);
      expect(unauth.status).toBe(401);
      const s = await createOpenAIBackend(wspec, { role: "student", model: join(dir, "student.json") });
      expect(s.probeLine).toContain("healthy");
      await s.close();
    } finally {
      await w.stop();
      delete process.env.TCOD_TEST_WORKER_TOKEN;
    }
  });

  it("starts a `start: true` worker without tokenEnv behind a fresh token per run, confined to its roots", async () => {
    const wspec = { kind: "worker" as const, url: "http://127.0.0.1:0", start: true, concurrency: 2, timeoutMs: 60_000 };
    const w = await startWorkerForSpec(wspec, { student: join(dir, "student.json"), extraArgs: ["--device", "cpu"], env: { OMP_NUM_THREADS: "1" }, roots: [join(dir, "run")] });
    try {
      expect(w.token).toMatch(/^[0-9a-f]{64}$/);
      expect((await fetch(`${w.url}/info`)).status).toBe(401);
      const auth = { authorization: `Bearer ${w.token}`, "content-type": "application/json" };
      expect((await fetch(`${w.url}/info`, { headers: auth })).status).toBe(200);
      const save = await fetch(`${w.url}/save`, { method: "POST", headers: auth, body: JSON.stringify({ path: join(dir, "elsewhere"), kind: "full" }) });
      expect(save.status).toBe(400);
      expect(await save.text()).toContain("outside this worker's roots");
    } finally {
      await w.stop();
    }
  });

  it("takes top-k targets whose tail spreads over a padded output layer (outputSize), and trains self-scored rows", async () => {
    writeFileSync(join(dir, "padded.json"), JSON.stringify({ arch: "llama", hidden_size: 64, num_hidden_layers: 2, seed: 0, vocab: "words.txt", pad_vocab_to: 64 }));
    const padded = await startWorker({ args: ["--model", join(dir, "padded.json"), "--device", "cpu", "--root", dir], env: { OMP_NUM_THREADS: "1" } });
    const s = await createOpenAIBackend(spec(padded.url), { role: "student", model: join(dir, "padded.json") });
    try {
      const V = s.tokenizer.vocabSize;
      expect(s.outputSize).toBe(Math.ceil(V / 64) * 64);
      expect(s.outputSize).toBeGreaterThan(V);
      const p = s.tokenizer.encode("go to the desk 1"), completion = s.tokenizer.encode("take the apple");
      const mask = [...p.map(() => 0), ...completion.map(() => 1)];
      // The teacher sure of nothing (a 0.3 listed mass): a large tail, where the two sizes disagree most.
      const target = (size: number) => [...p.map(() => null), ...completion.map((tok) => topkTargetDistribution([{ token: 0, logprob: Math.log(0.2) }], { token: tok, logprob: Math.log(0.1) }, size))];
      const row = (size: number): TrainRow => ({ tokens: [...p, ...completion], mask, advantages: mask.map(() => 0), oldLogprobs: null,
        lossWeights: mask.map((m) => m / completion.length), klCoefs: mask.map((m) => m), teacherDistributions: target(size) });
      const st = await s.train([row(s.outputSize!)], { lr: 0, lossFn: "importance_sampling", clip: 0.2, gradClip: 1 });
      expect(st.selfScored?.tokens).toBe(completion.length);
      expect(st.selfScored!.nll).toBeGreaterThan(0);
      // Spread over the tokenizer's vocabulary alone, the target does not sum to 1 over the worker's rows.
      await expect(s.train([row(V)], { lr: 0, lossFn: "importance_sampling", clip: 0.2, gradClip: 1 })).rejects.toThrow(/sums to/);
    } finally {
      await s.close();
      await padded.stop();
    }
  });

  it("refuses a model the worker does not serve", async () => {
    const e = await createOpenAIBackend(spec(worker.url), { role: "student", model: "gpt-9" }).then(() => undefined, (x: unknown) => x);
    expect((e as HttpBackendError).message).toContain("does not serve model 'gpt-9'");
  });
});
