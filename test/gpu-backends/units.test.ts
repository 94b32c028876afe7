/**
 * The pieces of `tcod run` on served models that need no worker process: the vocabulary file for
 * config-built workers, the wait meter, request coalescing, which worker processes a run starts, and
 * the errors given before anything starts.
 */
import { describe, expect, it } from "vitest";
import type { AgentFormat, ModelSpec } from "../../plan/schema.js";
import { BackendError } from "../../runtime/backends/backend.js";
import { createRemoteModels, isConfigModel, workerLaunches } from "../../runtime/backends/openai/models.js";
import { Coalescer } from "../../runtime/backends/openai/coalescer.js";
import { WaitMeter } from "../../runtime/backends/openai/wait-meter.js";
import { workerVocabulary, workerWords } from "../../runtime/backends/openai/worker-vocab.js";

const worker = (url: string, start: boolean): ModelSpec["backend"] => ({ kind: "worker", url, start, concurrency: 8, timeoutMs: 60_000 });
const model = (path: string, backend: ModelSpec["backend"]): ModelSpec => ({ path, backend });

describe("worker vocabulary", () => {
  it("splits like the worker's pre-tokeniser: whitespace, then each ASCII punctuation character, lowercased", () => {
    expect(workerWords("Go to Desk_1, then <action>open it</action>!")).toEqual(
      ["go", "to", "desk", "_", "1", ",", "then", "<", "action", ">", "open", "it", "<", "/", "action", ">", "!"]);
  });
  it("holds the env words, the agent format's texts and numbers, each once", () => {
    const agent = { system: "You are an agent.", template: "task: {task}\nobservation: {observation}", templateNoHistory: "{task}",
      historyEntry: "", onInvalid: { kind: "feedback", text: "Invalid Action." }, parser: { kind: "tags", tag: "act", think: false } } as unknown as AgentFormat;
    const v = workerVocabulary(["mug", "desk", "Mug"], agent);
    expect(new Set(v).size).toBe(v.length);
    for (const w of ["mug", "desk", "you", "agent", ".", "task", ":", "observation", "invalid", "<", "act", ">", "/", "0", "999"]) expect(v).toContain(w);
    expect(v).not.toContain("{task}");
    expect(v).not.toContain("Mug");
  });
});

describe("wait meter", () => {
  it("counts concurrent calls once in busy time, per kind and in total", async () => {
    let now = 0;
    const m = new WaitMeter(undefined, () => now);
    let finishA!: () => void, finishB!: () => void;
    const a = m.time("sample", () => new Promise<number[]>((r) => { finishA = () => r([1, 2, 3]); }), (x) => x.length);
    now = 10;
    const b = m.time("teacher", () => new Promise<number[]>((r) => { finishB = () => r([1]); }), (x) => x.length);
    now = 30; finishA(); await a;
    now = 50; finishB(); await b;
    now = 70;
    m.timeSync("tokenize", () => { now = 75; });
    const s = m.snapshot();
    expect(s.busyMs).toBe(55); // [0, 50] ∪ [70, 75]
    expect(s.busyKindMs).toMatchObject({ sample: 30, teacher: 40, tokenize: 5 });
    expect(s.tokens).toMatchObject({ sample: 3, teacher: 1 });
    expect(s.calls).toMatchObject({ sample: 1, teacher: 1, tokenize: 1 });
  });
  it("a failed call counts its time but no tokens", async () => {
    let now = 0;
    const m = new WaitMeter(undefined, () => now);
    await expect(m.time("train", async () => { now = 7; throw new Error("boom"); }, () => 99)).rejects.toThrow("boom");
    expect(m.snapshot()).toMatchObject({ busyMs: 7, tokens: { train: 0 }, calls: { train: 1 } });
  });
});

describe("coalescer", () => {
  it("sends what arrives during an outstanding call as one next call, in order", async () => {
    const calls: number[][] = [];
    const gates: (() => void)[] = [];
    const c = new Coalescer<number, number>((reqs) => { calls.push(reqs); return new Promise((r) => gates.push(() => r(reqs.map((x) => x * 10)))); });
    const first = c.submit([1]);
    await new Promise((r) => setImmediate(r));
    const later = [c.submit([2]), c.submit([3, 4])];
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual([[1]]); // held while [1] is in flight
    gates[0]!();
    expect(await first).toEqual([10]);
    await new Promise((r) => setImmediate(r));
    expect(calls).toEqual([[1], [2, 3, 4]]);
    gates[1]!();
    expect(await Promise.all(later)).toEqual([[20], [30, 40]]);
  });
  it("rejects every request of a failed call and keeps serving", async () => {
    let fail = true;
    const c = new Coalescer<number, number>(async (reqs) => { if (fail) throw new Error("server 500"); return reqs; });
    await expect(Promise.all([c.submit([1]), c.submit([2])])).rejects.toThrow("server 500");
    fail = false;
    expect(await c.submit([3])).toEqual([3]);
  });
});

describe("which workers a run starts", () => {
  it("one process holding the student and, beside it, a teacher at the same URL", () => {
    const l = workerLaunches(model("s.json", worker("http://127.0.0.1:9001", true)), model("runs/t/checkpoint/student", worker("http://127.0.0.1:9001", true)));
    expect(l).toEqual([{ spec: worker("http://127.0.0.1:9001", true), model: "s.json", teacher: "runs/t/checkpoint/student" }]);
  });
  it("the same path for both is one model; separate URLs are separate processes; start: false starts nothing", () => {
    expect(workerLaunches(model("m.json", worker("http://h:1", true)), model("m.json", worker("http://h:1", true)))).toEqual([{ spec: worker("http://h:1", true), model: "m.json" }]);
    expect(workerLaunches(model("s", worker("http://h:1", true)), model("t", worker("http://h:2", true))).map((x) => x.model)).toEqual(["s", "t"]);
    expect(workerLaunches(model("s", worker("http://h:1", false)), model("t", worker("http://h:2", false)))).toEqual([]);
  });
  it("refuses one URL where only one model says start: true", () => {
    expect(() => workerLaunches(model("s", worker("http://h:1", true)), model("t", worker("http://h:1", false)))).toThrow(/only one of them says start: true/);
  });
  it("knows config models from checkpoints", () => {
    expect(["config:tiny", "a/student.json"].map(isConfigModel)).toEqual([true, true]);
    expect(isConfigModel("runs/t/checkpoint/student")).toBe(false);
  });
});

describe("errors before anything starts", () => {
  const agent = { system: "", template: "{observation}", templateNoHistory: "{observation}", historyEntry: "", onInvalid: { kind: "pass" }, parser: { kind: "raw" } } as unknown as AgentFormat;
  it("a config-built worker on an env without a vocabulary", async () => {
    const s = model("config:tiny", worker("http://127.0.0.1:9", true));
    const e = await createRemoteModels({ student: s, teacher: s, agent, seed: 0 }, { log: () => {} }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(BackendError);
    expect((e as BackendError).message).toMatch(/needs a vocabulary, but this env declares none/);
    expect((e as BackendError).hint).toMatch(/--vocab/);
  });
  it("a vLLM student with nothing to train it", async () => {
    const s = model("Qwen/Qwen3-1.7B", { kind: "openai", url: "http://127.0.0.1:9", dialect: "vllm", concurrency: 4, timeoutMs: 1000 });
    const e = await createRemoteModels({ student: s, teacher: s, agent, seed: 0 }, { log: () => {} }).catch((x: unknown) => x);
    expect((e as BackendError).message).toMatch(/samples but cannot train/);
    expect((e as BackendError).hint).toMatch(/TCOD_TRAINER_URL/);
  });
});
