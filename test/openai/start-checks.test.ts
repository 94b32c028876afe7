/**
 * Runs against an OpenAI-compatible server fail early and clearly, not mid-run (the scripted vLLM of
 * fixtures/fake-vllm-server.mjs): the model's context (max_model_len at /v1/models) against the run's
 * first prompt before step 1; finish_reason "abort" retried within the client's bounded policy;
 * sampled ids past the model's vocabulary (the trainer's /info vocab_size) refused, naming the position.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
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
import { createRemoteModels } from "../../runtime/backends/openai/models.js";
import { EnvPool } from "../../runtime/env-pool.js";
import { createEnv } from "../../runtime/envs/registry.js";
import { runGraph } from "../../runtime/graph.js";
import { checkContextLengths, contextPlays, episodeEstimate, longestPrefix, PLAYED_TURNS } from "../../runtime/preflight-context.js";
import { firstTurnPrompt, turnUserLengths } from "../../runtime/rollout.js";

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
  const setup = (s: Awaited<ReturnType<typeof createOpenAIBackend>>, maxTurns = planner.params.maxTurns, known = true) => ({
    plan, tokenizer: s.tokenizer,
    plays: [{ what: "training", envId: rollout.params.env, agentId: rollout.params.agent, maxTurns, prefix: true, models: [{ name: "base", role: "student" as const, context: known ? s.context : undefined }] }],
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
    expect(long[0]).toMatch(/^TC7004: the student model 'base' reads at most 1500 tokens \(.*\), but a whole episode may reach about \d+: 40 turns kept in memory \("accumulate"\) of user messages of (about \d+|\d+–\d+) tokens \(the first 4 played with the expert's actions, later ones as long as the longest, none shorter than the first\)/);
    expect(long[0]).toContain("a shorter agent memory (memory: window), or fewer max_turns");
    expect(await checkContextLengths(setup(s, 2), pools)).toEqual([]);
    expect(await checkContextLengths(setup(s, 40, false), pools)).toEqual([]);
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

describe("the context check sees every prompt the run sends: an expert prefix's history, evaluation's and the probe's max_turns", () => {
  const compiled = (file: string) => {
    const r = compileFile(file, { overrides: [] });
    expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    return r.plans[0]!.plan;
  };
  const poolsOf = (plan: ReturnType<typeof compiled>) =>
    new Map(Object.entries(plan.resources.envs).map(([id, spec]) => [id, new EnvPool(id, 1, (instance) => createEnv(spec, { seed: 1, instance }))]));
  const ctx = (tokens: number) => ({ tokens, source: "a test's" });
  const dir = mkdtempSync(join(tmpdir(), "tcod-ctx-plays-"));
  writeFileSync(join(dir, "package.json"), "{}");
  /** A texthouse curriculum with `fields` added, written to this test's own folder. */
  const source = (name: string, fields: string, agent: string) => {
    writeFileSync(join(dir, name), `import { opd } from "std/loss"
import { b2f } from "std/tcod"
import { texthouse } from "std/envs"
import { raw_format, tcod_format } from "std/agent"
let agent = ${agent}
model t { path: "oracle" serve: embedded(smoothing: 0.1) }
model s { path: "loglinear" serve: embedded(features: 64) }
curriculum c {
  teacher: t
  student: s
  env: texthouse(split: "train", agent: agent)
  steps: 4
  batch: 1 tasks × 1 rollouts
  loss: opd(coef: 1)
  ${fields}
}
`);
    return join(dir, name);
  };
  async function refusal(p: Promise<unknown>): Promise<BackendError> {
    try { await p; } catch (e) { expect(e).toBeInstanceOf(BackendError); return e as BackendError; }
    throw new Error("expected a refusal");
  }

  it("TCOD-b2f: the longest prefix the schedule replays (its peak, L − 1 at step 1) is in the first prompt, as history", async () => {
    const plan = compiled(source("b2f.tcod", "max_turns: 10 turns\n  prefix: b2f(every: 2 steps)", 'tcod_format(memory: "accumulate")'));
    const g = runGraph(plan);
    expect(longestPrefix(plan, 6)).toBe(5); // b2f: L − 1 at step 1
    expect(longestPrefix(plan, 0)).toBe(0);
    expect(longestPrefix(plan, 99)).toBe(9); // the student keeps one of the 10 turns
    const url = await fakeVllm({ model: "base" });
    const s = await createOpenAIBackend(vllmSpec(url), { role: "student", model: "base" });
    const pools = poolsOf(plan);
    try {
      const [train] = contextPlays(plan, g, { name: "loglinear", role: "student", context: undefined }, { name: "oracle", role: "teacher", context: undefined });
      const agent = plan.resources.agents[train!.agentId]!, spec = plan.resources.envs[train!.envId]!, pool = pools.get(train!.envId)!;
      const task = (await pool.tasks(spec.split))[0]!;
      const bare = (await pool.with((env) => firstTurnPrompt(env, agent, s.tokenizer, task)))!;
      // A context the first prompt without its prefix fits, with a reply: only the prefix's history passes it.
      const tokens = bare.prompt.length + agent.maxResponseTokens;
      const play = { ...train!, models: [{ name: "loglinear", role: "student" as const, context: ctx(tokens) }] };
      const e = await refusal(checkContextLengths({ plan, tokenizer: s.tokenizer, plays: [play] }, pools));
      expect(e.code).toBe("TC7004");
      const m = new RegExp(`^the student model 'loglinear' reads at most ${tokens} tokens \\(a test's\\), but the first prompt of task '${task.id}' \\(texthouse, split "train", agent '[^']+'\\), after the longest expert prefix the curriculum replays for it \\((\\d+) actions, shown as history\\), has (\\d+) tokens`).exec(e.message);
      expect(m, e.message).not.toBeNull();
      expect(Number(m![1])).toBeGreaterThan(0);
      expect(e.hint).toContain("a shorter expert prefix (prefix:)");
      // Without the planner's prefix (evaluation, the probe), the same first prompt fits (a whole episode may not: a warning).
      const w = await checkContextLengths({ plan, tokenizer: s.tokenizer, plays: [{ ...play, prefix: false }] }, pools);
      expect(w.every((x) => x.includes("but a whole episode may reach about"))).toBe(true);
    } finally {
      await Promise.all([...pools.values()].map((p) => p.close()));
      await s.close();
    }
  });

  it("a format that shows history: the whole-episode estimate measures the growing user messages, not the first's alone", async () => {
    const plan = compiled(source("hist.tcod", "max_turns: 12 turns", 'tcod_format(memory: "accumulate")'));
    const g = runGraph(plan);
    const url = await fakeVllm({ model: "base" });
    const s = await createOpenAIBackend(vllmSpec(url), { role: "student", model: "base" });
    const pools = poolsOf(plan);
    try {
      const [train] = contextPlays(plan, g, { name: "loglinear", role: "student", context: undefined }, { name: "oracle", role: "teacher", context: undefined });
      const agent = plan.resources.agents[train!.agentId]!, spec = plan.resources.envs[train!.envId]!, pool = pools.get(train!.envId)!;
      expect(agent.historyWindow).toBe(2);
      const task = (await pool.tasks(spec.split))[0]!;
      const first = (await pool.with((env) => firstTurnPrompt(env, agent, s.tokenizer, task)))!;
      const expert = await pool.with((env) => env.expertPath!(task));
      const users = (await pool.with((env) => turnUserLengths(env, agent, s.tokenizer, task, [], expert, PLAYED_TURNS)))!;
      // Turns 0 and 1 have fewer than 2 earlier steps (the history-free template); from turn 2 on two are shown.
      expect(users.how).toBe("expert");
      expect(users.played[0]).toBe(first.user);
      expect(users.played[2]!).toBeGreaterThan(users.played[1]! + 20);
      expect(users.later).toBeGreaterThanOrEqual(users.played[2]!);
      // Every user message as long as the first (the estimate before): a context just that large
      // was taken to fit, but the turns that show history pass it.
      const R = agent.maxResponseTokens, turn = first.user + first.assistantPrefix + R + first.assistantSuffix;
      const asFirst = first.prompt.length + 11 * turn + R;
      const estimate = episodeEstimate(first, users, agent, 12);
      expect(estimate.tokens).toBeGreaterThan(asFirst + 9 * 20);
      const play = { ...train!, models: [{ name: "loglinear", role: "student" as const, context: ctx(asFirst) }] };
      const w = await checkContextLengths({ plan, tokenizer: s.tokenizer, plays: [play] }, pools);
      expect(w).toHaveLength(1);
      expect(w[0]).toContain(`but a whole episode may reach about ${estimate.tokens}: 12 turns kept in memory ("accumulate") of user messages of ${Math.min(...estimate.users)}–${Math.max(...estimate.users)} tokens ` +
        "(the first 4 played with the expert's actions, later ones as long as the longest showing the last 2 steps (history_window), none shorter than the first)");
      // A window of 2 kept turns: three user messages in the last prompt, the growth still counted.
      const windowed = { ...agent, memory: { kind: "window" as const, turns: 2 } };
      expect(episodeEstimate(first, users, windowed, 12)).toMatchObject({ turns: 3, users: [users.later, users.later, users.later] });
      expect(await checkContextLengths({ plan, tokenizer: s.tokenizer, plays: [{ ...play, models: [{ ...play.models[0]!, context: ctx(estimate.tokens) }] }] }, pools)).toEqual([]);
    } finally {
      await Promise.all([...pools.values()].map((p) => p.close()));
      await s.close();
    }
  });

  it("the TurnOPD probe plays full episodes of its own max_turns, read by student and teacher", () => {
    const plan = compiled("examples/texthouse/turnopd.tcod");
    const plays = contextPlays(plan, runGraph(plan), { name: "s", role: "student", context: undefined }, { name: "t", role: "teacher", context: undefined });
    const probe = plays.find((p) => p.what === "the TurnOPD probe");
    expect(probe).toMatchObject({ maxTurns: nodeOf(plan, "Probe")!.params.maxTurns, prefix: false });
    expect(probe!.models.map((m) => m.role)).toEqual(["student", "teacher"]);
    expect(plays.filter((p) => p.what.startsWith("evaluation")).every((p) => p.models.length === 1 && p.models[0]!.role === "student")).toBe(true);
  });

  it("an evaluation whose max_turns exceed training's is estimated at its own: a warning naming it", async () => {
    const plan = compiled(source("ev.tcod", "max_turns: 2 turns\n  eval: [ evaluate(every: 1 steps, env: texthouse(split: \"valid_seen\", agent: agent), tasks: 1 tasks, name: \"long\", max_turns: 60 turns) ]", 'raw_format(memory: "accumulate")'));
    const g = runGraph(plan);
    const url = await fakeVllm({ model: "base", maxModelLen: 1500 });
    const s = await createOpenAIBackend(vllmSpec(url), { role: "student", model: "base" });
    const pools = poolsOf(plan);
    try {
      const plays = contextPlays(plan, g, { name: "loglinear", role: "student", context: s.context }, { name: "oracle", role: "teacher", context: undefined });
      expect(plays.map((p) => [p.what, p.maxTurns])).toEqual([["training", 2], ["evaluation 'long'", 60]]);
      const warnings = await checkContextLengths({ plan, tokenizer: s.tokenizer, plays }, pools);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatch(/^TC7004: the student model 'loglinear' reads at most 1500 tokens \(.*\), but a whole evaluation 'long' episode \(max_turns 60\) may reach about \d+: 60 turns kept in memory \("accumulate"\)/);
    } finally {
      await Promise.all([...pools.values()].map((p) => p.close()));
      await s.close();
    }
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

  it("a vLLM teacher's top-k ids are checked against the student's vocabulary (its trainer's rows): TC7004 naming server, endpoint and field", async () => {
    const url = await fakeVllm({ model: "base" });
    const trainerUrl = await fakeVllm({ model: "base", trainer: true, trainerVocab: 103 });
    const teacherUrl = await fakeVllm({ model: "big" });
    const runDir = mkdtempSync(join(tmpdir(), "tcod-teacher-vocab-"));
    const models = await createRemoteModels({
      student: { path: "base", backend: vllmSpec(url) }, teacher: { path: "big", backend: vllmSpec(teacherUrl) }, agent: {} as never, seed: 1, runDir,
    }, { trainerUrl, log: () => {} });
    try {
      // The student's rows reach the topk estimator too (a vLLM tokenizer reports no size).
      expect(models.student.outputSize).toBe(103);
      // The fake lists t+1 … t+k after each scored token t: 102 passes, 103 is past the student's 103 rows.
      const ok = await models.teacher.score([{ prompt: [1, 100], completion: [101], temperature: 1, topk: 1 }]);
      expect(ok[0]!.topk![0]!.map((a) => a.token)).toContain(102);
      const e = await failure(models.teacher.score([{ prompt: [1, 100], completion: [101, 2], temperature: 1, topk: 2 }]));
      expect(e.code).toBe("TC7004");
      expect(e.retryable).toBe(false);
      expect(e.message).toBe(`vllm server ${teacherUrl} /v1/completions: malformed response: choices[0].prompt_logprobs[2]["103"]: token id 103 is past the student's vocabulary of 103 ids (0…102)`);
      expect(e.hint).toContain("no output row");
    } finally {
      await models.student.close();
      await models.teacher.close();
    }
  });

  it("unknown (vLLM reports no vocabulary size, no trainer): not checked", async () => {
    const url = await fakeVllm({ model: "base", sampleIds: [101, 5000, 2] });
    const s = await createOpenAIBackend(vllmSpec(url), { role: "student", model: "base" });
    const [r] = await s.sample([{ prompt: [1, 100], maxTokens: 8, temperature: 1, seed: 4 }]);
    expect(r!.tokens).toEqual([101, 5000, 2]);
    await s.close();
  });
});
