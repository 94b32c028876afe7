import { TexthouseEnv } from "../../runtime/envs/texthouse/adapter.js";
import { mkdtempSync, readFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runPlan, type RunOptions } from "../../runtime/engine.js";
import { readMetrics, type TrainRowMetrics } from "../../runtime/metrics.js";
import type { Plan } from "../../plan/schema.js";
import type { ScoreRequest, TrainRow, TrainStats } from "../../runtime/backends/backend.js";
import type { EnvAdapter } from "../../runtime/envs/env.js";
import { CounterEnv, END, ScriptedStudent, ScriptedTeacher } from "./doubles.js";
import { testPlan } from "./plans.js";
import { nextAdaptiveCap } from "../../runtime/adaptive-depth.js";
import { composeRuntime } from "../../bin/compose.js";
import { actionRates } from "../../runtime/action-rates.js";
import type { EpisodeRecord } from "../../runtime/rollout.js";

composeRuntime(); // the backends and envs bin/ registers for `tcod run`

const tmp = () => mkdtempSync(join(tmpdir(), "tcod-engine-"));

function harness(plan: Plan, extra: Partial<RunOptions> = {}, env: () => EnvAdapter = () => new CounterEnv(), student = new ScriptedStudent()) {
  const teacher = new ScriptedTeacher();
  const runDir = extra.runDir ?? tmp();
  const opts: RunOptions = {
    runDir, faults: { maxRetries: 2, backoffMs: 0 },
    models: async () => ({ student, teacher, tokenizer: student.tokenizer }),
    envFactory: () => env(),
    ...extra,
  };
  return { student, teacher, runDir, run: () => runPlan(plan, opts) };
}
const trainRows = (dir: string) => readMetrics(join(dir, "metrics.jsonl")).filter((r): r is TrainRowMetrics => r.kind === "train");
const withoutTime = (dir: string) => readMetrics(join(dir, "metrics.jsonl")).map(({ time: _t, ...rest }) => rest);

describe("engine", () => {
  it("f2b: the horizon in force is min(1 + floor(t/k), Hmax); capped episodes are truncated", async () => {
    const h = harness(testPlan({ horizon: "f2b", k: 2, steps: 6, maxTurns: 8 }));
    const res = await h.run();
    expect(res.status).toBe("completed");
    const rows = trainRows(h.runDir);
    expect(rows.map((r) => r.step)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(rows.map((r) => r.horizon)).toEqual([1, 2, 2, 3, 3, 4]);
    // tasks count-2..count-7 need ≥ 2 turns: at horizon 1 nobody succeeds
    expect(rows[0]!.successRate).toBe(0);
    expect(rows[0]!.turns).toBe(3);
    expect(rows[0]!.meanReward).toBe(0);
  });

  it("b2f: prefix p = clamp(L−1−floor(t/k), 0, L−1) per episode; the student gets Hmax − p turns", async () => {
    const h = harness(testPlan({ prefix: "b2f", k: 2, steps: 3, tasksPerStep: 6, maxTurns: 8 }));
    await h.run();
    const rows = trainRows(h.runDir);
    // L = 2..7 over the 6 tasks of the epoch; p(t) = max(0, L − 1 − floor(t/2))
    const expected = (t: number) => [2, 3, 4, 5, 6, 7].map((L) => Math.max(0, L - 1 - Math.floor(t / 2)));
    for (const r of rows) {
      const ps = expected(r.step);
      expect(r.prefix).toBeCloseTo(ps.reduce((a, b) => a + b, 0) / 6, 12);
      expect(r.studentTurns).toBeCloseTo(ps.reduce((a, p) => a + (8 - p), 0) / 6, 12);
      // the student always finishes (it plays "inc"), taking L − p turns per episode
      expect(r.turns).toBe([2, 3, 4, 5, 6, 7].reduce((a, L, i) => a + L - ps[i]!, 0));
      expect(r.noExperience).toBe(0);
    }
  });

  it("rollouts in lockstep (a backend that answers one call at a time): one call a turn round, the same run", async () => {
    const run = async (lockstepSampling: boolean) => {
      const student = new ScriptedStudent();
      Object.assign(student, { lockstepSampling });
      const h = harness(testPlan({ steps: 2, tasksPerStep: 2, maxTurns: 8 }), {}, undefined, student);
      expect((await h.run()).status).toBe("completed");
      return { student, metrics: withoutTime(h.runDir), rows: student.trained };
    };
    const alone = await run(false), lockstep = await run(true);
    expect(lockstep.metrics).toEqual(alone.metrics);
    expect(lockstep.rows).toEqual(alone.rows);
    expect(alone.student.sampleCalls.every((n) => n === 1)).toBe(true);
    // Every turn round is one call of the episodes still playing: as many calls as the longest episode's turns a step.
    expect(lockstep.student.sampleCalls.reduce((a, b) => a + b, 0)).toBe(alone.student.sampleCalls.length);
    expect(lockstep.student.sampleCalls.length).toBeLessThan(alone.student.sampleCalls.length);
  });

  it("OPD signals: k1 KL per token, advantages c·(log p_T − log p_S), loss weights summing to 1 per update", async () => {
    const h = harness(testPlan({ steps: 2, tasksPerStep: 2 }));
    await h.run();
    const rows = trainRows(h.runDir);
    expect(rows[0]!.kl.mean).toBeCloseTo(-0.25, 12);
    expect(rows[0]!.kl.perTurn.every((k) => k !== null && Math.abs(k + 0.25) < 1e-12)).toBe(true);
    expect(h.student.trained).toHaveLength(2);
    for (const batch of h.student.trained) {
      let w = 0;
      for (const r of batch) r.mask.forEach((m, i) => {
        if (m) { expect(r.advantages[i]).toBeCloseTo(0.25, 12); w += r.lossWeights[i]!; } else expect(r.advantages[i]).toBe(0);
      });
      expect(w).toBeCloseTo(1, 12);
    }
  });

  it("trainBatchTurns splits a step into several optimiser updates", async () => {
    const h = harness(testPlan({ steps: 1, tasksPerStep: 2, trainBatchTurns: 2 }));
    await h.run();
    const turns = trainRows(h.runDir)[0]!.turns;
    expect(h.student.trained.length).toBe(Math.ceil(turns / 2));
    expect(trainRows(h.runDir)[0]!.updates).toBe(Math.ceil(turns / 2));
  });

  it("staleness 0 samples with the policy after update t − 1; staleness 2 runs two steps ahead and drains", async () => {
    const sync = harness(testPlan({ steps: 5 }));
    await sync.run();
    expect(trainRows(sync.runDir).map((r) => r.policyStep)).toEqual([0, 1, 2, 3, 4]);
    const lag = harness(testPlan({ steps: 5, staleness: 2 }));
    await lag.run();
    const rows = trainRows(lag.runDir);
    expect(rows.map((r) => r.step)).toEqual([1, 2, 3, 4, 5]);
    expect(rows.map((r) => r.policyStep)).toEqual([0, 0, 0, 1, 2]);
    expect(rows.every((r) => r.droppedStale === 0)).toBe(true);
    expect(lag.student.trained).toHaveLength(5);
  });

  it("evaluates at start and every k steps, uncapped, on the eval split", async () => {
    const h = harness(testPlan({ horizon: "f2b", k: 100, steps: 4, evalEvery: 2, maxTurns: 8 }));
    await h.run();
    const evals = readMetrics(join(h.runDir, "metrics.jsonl")).filter((r) => r.kind === "eval");
    expect(evals.map((r) => r.step)).toEqual([0, 2, 4]);
    // horizon 1 in training, but evaluation is never capped: the scripted student always wins
    expect(evals.every((r) => r.kind === "eval" && r.successRate === 1)).toBe(true);
    // … with listed actions only, never repeating one that made nothing happen
    expect(evals.map((r) => r.kind === "eval" && [r.admissibleRate, r.repeatRate])).toEqual([[1, 0], [1, 0], [1, 0]]);
  });

  it("evaluate(from:): every k steps only from that step on, and still at the start and the last step", async () => {
    const h = harness(testPlan({ horizon: "f2b", k: 100, steps: 9, evalEvery: 2, evalFrom: 5, maxTurns: 8 }));
    await h.run();
    const evals = readMetrics(join(h.runDir, "metrics.jsonl")).filter((r) => r.kind === "eval");
    expect(evals.map((r) => r.step)).toEqual([0, 6, 8, 9]);
  });

  it("eval action rates: the share of listed actions, and of repeats of an unlisted one (hand-counted)", () => {
    const listed = ["go to a", "open a", "take x from a"];
    const ep = (actions: (string | null)[]): EpisodeRecord =>
      ({ turns: actions.map((action) => ({ action, context: { admissible: listed } })) }) as unknown as EpisodeRecord;
    // turns: 4 + 3 = 7; listed: go, open (ep 1) + go (ep 2) = 3;
    // repeats of an unlisted action: ep 1 turn 3 (take y after take y); ep 2 turn 2 (jump after jump). A repeat of
    // a listed action (none here) or of an unparsed reply (null) is not one.
    const rates = actionRates([ep(["go to a", "take y from a", "take y from a", "open a"]), ep(["jump", "jump", "go to a"])]);
    expect(rates.admissibleRate).toBeCloseTo(3 / 7, 12);
    expect(rates.repeatRate).toBeCloseTo(2 / 7, 12);
    expect(actionRates([ep(["go to a", "go to a", null, null])])).toEqual({ admissibleRate: 0.5, repeatRate: 0 });
    expect(actionRates([])).toEqual({ admissibleRate: 0, repeatRate: 0 });
  });

  it("determinism: two runs with the same seed write identical metrics (wall times aside)", async () => {
    const a = harness(testPlan({ horizon: "f2b", steps: 4, grpo: true, rolloutsPerTask: 2 }));
    const b = harness(testPlan({ horizon: "f2b", steps: 4, grpo: true, rolloutsPerTask: 2 }));
    await a.run();
    await b.run();
    expect(withoutTime(a.runDir)).toEqual(withoutTime(b.runDir));
    expect(a.student.weight).toBe(b.student.weight);
  });

  it("resume: stopping at step k and resuming equals an uninterrupted run (metrics and weights)", async () => {
    for (const staleness of [0, 2]) {
      const plan = testPlan({ horizon: "f2b", steps: 6, staleness, evalEvery: 2 });
      const full = harness(plan);
      await full.run();
      const dir = tmp();
      const first = harness(plan, { runDir: dir, stopAfter: 3 });
      expect((await first.run()).status).toBe("stopped");
      const second = harness(plan, { runDir: dir, resume: true });
      expect((await second.run()).status).toBe("completed");
      expect(withoutTime(dir)).toEqual(withoutTime(full.runDir));
      expect(second.student.weight).toBe(full.student.weight);
      expect(second.student.version()).toBe(full.student.version());
    }
  });

  it("Ctrl-C (abort) checkpoints after the current step; resume completes identically", async () => {
    const plan = testPlan({ steps: 5 });
    const full = harness(plan);
    await full.run();
    const ac = new AbortController();
    const dir = tmp();
    const first = harness(plan, { runDir: dir, signal: ac.signal, onRow: (r) => { if (r.kind === "train" && r.step === 2) ac.abort(); } });
    const res = await first.run();
    expect(res.status).toBe("interrupted");
    expect(res.step).toBe(2);
    expect(res.message).toContain("--resume");
    await harness(plan, { runDir: dir, resume: true }).run();
    expect(withoutTime(dir)).toEqual(withoutTime(full.runDir));
  });

  it("faults: a failing episode is dropped, counted and retried; the run completes", async () => {
    const failures = { left: 1 };
    const h = harness(testPlan({ steps: 2, tasksPerStep: 6 }), {}, () => new CounterEnv({ failOn: new Set(["count-4"]), failures }));
    const res = await h.run();
    expect(res.status).toBe("completed");
    const rows = trainRows(h.runDir);
    expect(rows.reduce((a, r) => a + r.droppedFailed, 0)).toBe(1);
    expect(rows.every((r) => r.episodes === 6)).toBe(true);
  });

  it("faults: persistent failures stop the run cleanly with a checkpoint and a clear message; resume continues", async () => {
    const failures = { left: 1000 };
    const plan = testPlan({ steps: 3, tasksPerStep: 6 });
    const dir = tmp();
    const h = harness(plan, { runDir: dir }, () => new CounterEnv({ failOn: new Set(["count-4"]), failures }));
    const res = await h.run();
    expect(res.status).toBe("failed");
    expect(res.message).toMatch(/task count-4.*failed 3 times.*env counter.*giving up after 2 retries/);
    expect(res.message).toContain(`--resume ${dir}`);
    expect(existsSync(join(dir, "checkpoint", "state.json"))).toBe(true);
    failures.left = 0;
    const again = harness(plan, { runDir: dir, resume: true }, () => new CounterEnv({ failOn: new Set(["count-4"]), failures }));
    expect((await again.run()).status).toBe("completed");
    const full = harness(plan);
    await full.run();
    const strip = (d: string) => withoutTime(d).map((r) => ({ ...r, droppedFailed: 0 }));
    expect(strip(dir)).toEqual(strip(full.runDir));
  });

  it("sft: expert demonstrations through the agent format, advantage c on their tokens, OPD 0 there", async () => {
    const h = harness(testPlan({ steps: 1, tasksPerStep: 2, sft: 0.7 }));
    await h.run();
    const rows = h.student.trained[0]!;
    const tok = h.student.tokenizer;
    const demo = rows.filter((r) => r.advantages.some((a, i) => r.mask[i] === 1 && Math.abs(a - 0.7) < 1e-12));
    // tasks count-2.. of the epoch: L = target, one demo row per expert turn
    const lengths = [...new Set(h.student.samples.map((s) => tok.decode(s.prompt).match(/reach (\d+)/)![1]))].map(Number);
    expect(demo.length).toBe(lengths.reduce((a, b) => a + b, 0));
    for (const r of demo) {
      const resp = r.tokens.filter((_, i) => r.mask[i] === 1);
      expect(tok.decode(resp)).toBe("<action>inc</action>");
      expect(resp[resp.length - 1]).toBe(END);
    }
    // student rows keep the OPD advantage only
    const student = rows.filter((r) => !demo.includes(r));
    for (const r of student) r.mask.forEach((m, i) => { if (m) expect(r.advantages[i]).toBeCloseTo(0.25, 12); });
    const w = rows.reduce((a, r) => a + r.lossWeights.reduce((x, y) => x + y, 0), 0);
    expect(w).toBeCloseTo(1, 12);
    // KL metrics cover student turns only
    expect(trainRows(h.runDir)[0]!.kl.mean).toBeCloseTo(-0.25, 12);
    expect(trainRows(h.runDir)[0]!.coefs).toEqual({ opd: 1, sft: 0.7 });
  });

  it("sft on whole trajectories: one demonstration row per task, scored by one request over the episode", async () => {
    const h = harness(testPlan({ steps: 1, tasksPerStep: 2, sft: 0.7 }), { rows: "trajectory" });
    Object.assign(h.student, { scoresSequences: true });
    const scored: ScoreRequest[] = [];
    const score = h.student.score.bind(h.student);
    h.student.score = async (reqs) => { scored.push(...reqs); return score(reqs); };
    await h.run();
    const rows = h.student.trained[0]!;
    const tok = h.student.tokenizer;
    const demo = rows.filter((r) => r.advantages.some((a, i) => r.mask[i] === 1 && Math.abs(a - 0.7) < 1e-12));
    const lengths = [...new Set(h.student.samples.map((s) => tok.decode(s.prompt).match(/reach (\d+)/)![1]))].map(Number);
    expect(demo).toHaveLength(2);
    expect(scored).toHaveLength(2); // one request per demonstration, not one per turn
    for (const r of demo) {
      // every expert turn's response under the mask, the observations between them not
      const ends = r.tokens.filter((t, i) => r.mask[i] === 1 && t === END).length;
      expect(lengths).toContain(ends);
      expect(r.advantages.filter((a, i) => r.mask[i] === 1 && a !== 0.7)).toEqual([]);
    }
    expect(demo.reduce((a, r) => a + r.tokens.filter((t, i) => r.mask[i] === 1 && t === END).length, 0)).toBe(lengths.reduce((a, b) => a + b, 0));
  });

  it("sft with DART noise: a random command is context, not a target; the expert recovers; the draws repeat", async () => {
    const plan = testPlan({ steps: 2, tasksPerStep: 3, sft: 1, sftNoise: 0.5, maxTurns: 30 });
    const demosOf = async () => {
      const h = harness(plan, { rows: "trajectory" });
      Object.assign(h.student, { scoresSequences: true });
      await h.run();
      const tok = h.student.tokenizer;
      return h.student.trained.flatMap((rows) => rows.filter((r) => r.advantages.some((a, i) => r.mask[i] === 1 && a === 1)))
        .map((r) => ({ text: tok.decode(r.tokens), targets: tok.decode(r.tokens.filter((_, i) => r.mask[i] === 1)) }));
    };
    const demos = await demosOf();
    expect(demos.length).toBe(6);
    // every training target is the expert's command (the counter never passes its target: "inc") …
    for (const d of demos) expect(d.targets).toMatch(/^(<action>inc<\/action>)+$/);
    // … while the noise ran in the episodes: its "dec" commands are context only
    expect(demos.filter((d) => d.text.includes("<action>dec</action>")).length).toBeGreaterThan(0);
    // … and the draws come from the seed and the step alone
    expect(await demosOf()).toEqual(demos);
  });

  it("sft with noise from the student: its own replies, inadmissible ones included, are context; the expert recovers; the samples repeat", async () => {
    const plan = testPlan({ steps: 2, tasksPerStep: 3, rolloutsPerTask: 0, sft: 1, noOpd: true, sftNoise: 0.5, sftNoiseFrom: "student", maxTurns: 30 });
    expect(plan.graph.nodes.find((n) => n.kind === "Demonstrations")!.params).toMatchObject({ noise: 0.5, noiseFrom: "student" });
    const demosOf = async (lockstepSampling = false) => {
      // A student that errs: a command the env does not offer on odd seeds, a step back on even ones.
      const student = new ScriptedStudent((_, seed) => (seed % 2 ? "<action>jump</action>" : "<action>dec</action>"));
      const h = harness(plan, { rows: "trajectory" }, undefined, student);
      Object.assign(student, { scoresSequences: true, lockstepSampling });
      expect((await h.run()).status).toBe("completed");
      const tok = student.tokenizer;
      // No rollouts: every sample is a noise turn of a demonstration, sampled as a rollout would be.
      expect(student.samples.length).toBeGreaterThan(0);
      expect(student.samples.every((s) => s.temperature === 1)).toBe(true);
      if (lockstepSampling) {
        // In lockstep a call carries every demonstration still playing that waits for a noise reply:
        // fewer calls than replies, and never more calls a step than the most noise turns of one demonstration.
        expect(student.sampleCalls.length).toBeLessThan(student.samples.length);
        expect(Math.max(...student.sampleCalls)).toBeGreaterThan(1);
      } else {
        expect(student.sampleCalls.every((n) => n === 1)).toBe(true);
      }
      return student.trained.flat().map((r) => ({ text: tok.decode(r.tokens), targets: tok.decode(r.tokens.filter((_, i) => r.mask[i] === 1)) }));
    };
    const demos = await demosOf();
    // Sampling in lockstep groups the requests, and changes no demonstration: each reply's seed is its turn's.
    expect(await demosOf(true)).toEqual(demos);
    expect(demos.length).toBe(6);
    // every training target is the expert's command (it recovers with "inc" from wherever the noise left it) …
    for (const d of demos) expect(d.targets).toMatch(/^(<action>inc<\/action>)+$/);
    // … and the student's replies ran as context: the inadmissible one too, which uniform DART noise never draws
    expect(demos.some((d) => d.text.includes("<action>jump</action>"))).toBe(true);
    expect(demos.some((d) => d.text.includes("<action>dec</action>"))).toBe(true);
    // … with seeds from the run seed, the step and the task, so a second run samples the same
    expect(await demosOf()).toEqual(demos);
  });

  it("sft with stale noise: a command offered at an earlier turn and not now runs as context (Nothing happens.); no model call; the expert's commands are the targets", async () => {
    const plan = testPlan({ steps: 2, tasksPerStep: 3, rolloutsPerTask: 0, sft: 1, noOpd: true, sftNoise: 0.3, sftNoiseFrom: "stale", maxTurns: 30 });
    expect(plan.graph.nodes.find((n) => n.kind === "Demonstrations")!.params).toMatchObject({ noise: 0.3, noiseFrom: "stale" });
    const demosOf = async () => {
      const student = new ScriptedStudent();
      const h = harness(plan, { rows: "trajectory" }, () => new TexthouseEnv(), student);
      Object.assign(student, { scoresSequences: true });
      expect((await h.run()).status).toBe("completed");
      expect(student.samples).toEqual([]);
      const tok = student.tokenizer;
      return student.trained.flat().map((r) => ({ text: tok.decode(r.tokens), targets: tok.decode(r.tokens.filter((_, i) => r.mask[i] === 1)) }));
    };
    const demos = await demosOf();
    expect(demos.length).toBe(6);
    const count = (s: string, what: string) => s.split(what).length - 1;
    // The observation after a command ("Now: …" in this agent format; earlier ones repeat in the history window).
    const nothing = "Now: Nothing happens.";
    expect(demos.reduce((n, d) => n + count(d.text, nothing), 0)).toBeGreaterThan(0);
    // Every command that made nothing happen is a noise turn, context only; every other one is the expert's, a target.
    for (const d of demos) expect(count(d.targets, "<action>")).toBe(count(d.text, "<action>") - count(d.text, nothing));
    expect(await demosOf()).toEqual(demos);
  });

  it("sft with guess noise: a take of a goal-type object the receptacle at hand does not hold runs as context (Nothing happens.); no model call; the expert's commands are the targets", async () => {
    const plan = testPlan({ steps: 2, tasksPerStep: 3, rolloutsPerTask: 0, sft: 1, noOpd: true, sftNoise: 0.5, sftNoiseFrom: "guess", maxTurns: 30 });
    expect(plan.graph.nodes.find((n) => n.kind === "Demonstrations")!.params).toMatchObject({ noise: 0.5, noiseFrom: "guess" });
    const demosOf = async (env: () => TexthouseEnv = () => new TexthouseEnv()) => {
      const student = new ScriptedStudent();
      const h = harness(plan, { rows: "trajectory" }, env, student);
      Object.assign(student, { scoresSequences: true });
      const result = await h.run();
      expect(student.samples).toEqual([]);
      const tok = student.tokenizer;
      return { result, demos: student.trained.flat().map((r) => ({ text: tok.decode(r.tokens), targets: tok.decode(r.tokens.filter((_, i) => r.mask[i] === 1)) })) };
    };
    const { result, demos } = await demosOf();
    expect(result.status).toBe("completed");
    expect(demos.length).toBe(6);
    const count = (s: string, what: string) => s.split(what).length - 1;
    const nothing = "Now: Nothing happens.";
    expect(demos.reduce((n, d) => n + count(d.text, nothing), 0)).toBeGreaterThan(0);
    for (const d of demos) {
      // Every command that made nothing happen is a guessed take, context only; every other one is the expert's, a target.
      expect(count(d.targets, "<action>")).toBe(count(d.text, "<action>") - count(d.text, nothing));
      for (const m of d.text.matchAll(/<action>([^<]*)<\/action>\s*Now: Nothing happens\./g)) expect(m[1]).toMatch(/^take \S+ \d+ from \S+ \d+$/);
    }
    expect((await demosOf()).demos).toEqual(demos);
    // An env that cannot name guesses stops the run with the env's config error, not a crash.
    const blind = () => Object.assign(new TexthouseEnv(), { guessedActions: undefined });
    await expect(demosOf(blind)).rejects.toThrow(/^sft\(noise_from: "guess"\) needs an env that can name an agent's guesses; texthouse cannot$/);
  });

  it("sft alone with 0 rollouts per task: no student episode is sampled; the demonstrations train", async () => {
    const h = harness(testPlan({ steps: 2, tasksPerStep: 3, rolloutsPerTask: 0, sft: 1, noOpd: true }));
    const calls: number[] = [];
    const score = h.student.score.bind(h.student);
    h.student.score = async (reqs) => { calls.push(reqs.length); return score(reqs); };
    expect((await h.run()).status).toBe("completed");
    expect(h.student.samples).toEqual([]);
    // A step's demonstrations are scored together, in one call (a served worker answers one call at a time).
    expect(calls).toHaveLength(2);
    const tok = h.student.tokenizer;
    expect(h.student.trained).toHaveLength(2);
    for (const rows of h.student.trained) {
      expect(rows.length).toBeGreaterThan(0);
      for (const r of rows) expect(tok.decode(r.tokens.filter((_, i) => r.mask[i] === 1))).toMatch(/^(<action>inc<\/action>)+$/);
    }
    const train = trainRows(h.runDir);
    expect(train.map((r) => [r.step, r.episodes, r.turns])).toEqual([[1, 0, 0], [2, 0, 0]]);
    expect(train.every((r) => r.demoNll !== null && r.demoNll! > 0)).toBe(true);
  });

  it("sft on a student that scores rows in its update (a worker): no scoring call for demonstrations, old log-probabilities null, its NLL is demoNll", async () => {
    class SelfScoringStudent extends ScriptedStudent {
      readonly trainsSelfScored = true;
      readonly scored: ScoreRequest[][] = [];
      override async score(reqs: ScoreRequest[]) { this.scored.push(reqs); return super.score(reqs); }
      override async train(rows: TrainRow[], opt: { lr: number }): Promise<TrainStats> {
        const st = await super.train(rows, opt);
        const tokens = rows.filter((r) => r.oldLogprobs === null).reduce((n, r) => n + r.mask.filter((m) => m === 1).length, 0);
        return { ...st, selfScored: { nll: 0.125, tokens } };
      }
    }
    // OPD beside sft, on the per-turn rows of the scripted student: student rows keep their scores.
    const h = harness(testPlan({ steps: 2, tasksPerStep: 2, sft: 0.7 }), {}, undefined, new SelfScoringStudent());
    const student = h.student as SelfScoringStudent;
    expect((await h.run()).status).toBe("completed");
    const rows = student.trained.flat();
    const demo = rows.filter((r) => r.oldLogprobs === null);
    expect(demo.length).toBeGreaterThan(0);
    for (const r of demo) {
      expect(student.tokenizer.decode(r.tokens.filter((_, i) => r.mask[i] === 1))).toMatch(/^(<action>inc<\/action>)+$/);
      r.mask.forEach((m, i) => { if (m) expect(r.advantages[i]).toBeCloseTo(0.7, 12); });
    }
    // Student rows still carry the sampler's log-probabilities and the OPD advantage.
    for (const r of rows.filter((r) => r.oldLogprobs !== null)) r.mask.forEach((m, i) => { if (m) { expect(r.oldLogprobs![i]).toBe(-0.5); expect(r.advantages[i]).toBeCloseTo(0.25, 12); } });
    // Student rows keep the sampler's log-probabilities in this plan, so any score call would be a demonstration's.
    expect(student.scored).toEqual([]);
    expect(trainRows(h.runDir).map((r) => r.demoNll)).toEqual([0.125, 0.125]);
  });

  it.each([
    ["the tokenizer's vocabulary", undefined],
    ["a padded output layer (outputSize)", 4096],
  ])("topk estimator: the exact KL to the teacher's top-k with its tail spread evenly over %s, as exact-KL targets; refused without a student that trains on them", async (_, outputSize) => {
    class KlStudent extends ScriptedStudent { readonly exactKlTargets = true; readonly outputSize = outputSize; }
    const h = harness(testPlan({ steps: 1, tasksPerStep: 1, estimator: "topk", topk: 2 }), {}, undefined, new KlStudent());
    await h.run();
    const V = outputSize ?? h.student.tokenizer.vocabSize;
    // The teacher lists the sampled token at −0.25 and token 0 at −2 (nothing on END); the unlisted
    // tokens share what is left: 1 − e^−0.25 − e^−2, or 1 − e^−0.25 on END (only the sampled token is known).
    const restOf = (listedMass: number, listed: number) => Math.log((1 - listedMass) / (V - listed));
    let positions = 0;
    for (const r of h.student.trained[0]!) r.mask.forEach((m, i) => {
      expect(r.advantages[i]).toBe(0);
      if (!m) { expect(r.teacherDistributions![i]).toBeNull(); return; }
      positions++;
      expect(r.klCoefs![i]).toBe(1);
      const q = r.teacherDistributions![i]!;
      if (r.tokens[i] === END) {
        expect(q.tokens).toEqual([END]);
        expect(q.logprobs[0]).toBeCloseTo(-0.25, 12);
        expect(q.rest).toBeCloseTo(restOf(Math.exp(-0.25), 1), 12);
      } else {
        expect(q.tokens).toEqual([r.tokens[i], 0]);
        expect(q.logprobs[0]).toBeCloseTo(-0.25, 12);
        expect(q.logprobs[1]).toBeCloseTo(-2, 12);
        expect(q.rest).toBeCloseTo(restOf(Math.exp(-0.25) + Math.exp(-2), 2), 12);
      }
    });
    expect(positions).toBeGreaterThan(0);
    // refused when the plan is loaded: the graph check ties the estimator to the TeacherScore node
    expect(() => testPlan({ steps: 1, estimator: "topk", topk: 0 })).toThrow(/TeacherScore topk ≥ 1 \(node "teacher" has topk 0\)/);
    // a student that cannot train on exact-KL targets is refused at step 1, as full is
    await expect(harness(testPlan({ steps: 1, estimator: "topk", topk: 2 })).run()).rejects.toThrow(/"topk" cannot run here: the student backend does not train on exact-KL targets/);
    // full needs backends with distributions / exact-KL training; these doubles have neither
    await expect(harness(testPlan({ steps: 1, estimator: "full" })).run()).rejects.toThrow(/"full" cannot run here: the teacher backend does not return full next-token distributions; the student backend does not train on exact-KL targets/);
  });

  it("whole-trajectory rows (tinker): one row per episode, env tokens masked, same KL and advantages", async () => {
    const h = harness(testPlan({ steps: 1, tasksPerStep: 2 }), { rows: "trajectory" });
    await h.run();
    const rows = h.student.trained[0]!;
    expect(rows).toHaveLength(2);
    const turns = trainRows(h.runDir)[0]!.turns;
    for (const r of rows) r.mask.forEach((m, i) => { if (m) expect(r.advantages[i]).toBeCloseTo(0.25, 12); else expect(r.advantages[i]).toBe(0); });
    const ends = rows.reduce((a, r) => a + r.tokens.filter((t, i) => r.mask[i] === 1 && t === END).length, 0);
    expect(ends).toBe(turns); // every turn's response (ending in END) is unmasked, nothing else ends in END under the mask
    expect(trainRows(h.runDir)[0]!.kl.mean).toBeCloseTo(-0.25, 12);
  });

  it("TurnOPD adaptive depth: probes every k steps move the cap by the rule; the cap is the horizon in force", async () => {
    const adaptive = { probeEvery: 2, probeEpisodes: 6, rule: { kind: "coverage" as const, keep: 0.6 }, initial: 2, min: 1 };
    const h = harness(testPlan({ steps: 6, maxTurns: 8, adaptive }));
    await h.run();
    const state = JSON.parse(readFileSync(join(h.runDir, "checkpoint", "state.json"), "utf8"));
    const probes = state.curriculum.probes as { step: number; cap: number; profile: { running: number[]; kl: number[] } }[];
    expect(probes.map((p) => p.step)).toEqual([2, 4, 6]);
    let last = adaptive.initial;
    for (const p of probes) {
      // the scripted student always finishes: running shares fall as tasks (count-L) end at turn L
      expect(p.profile.running[0]).toBe(1);
      expect(p.cap).toBe(nextAdaptiveCap(adaptive, p.profile, last, 8));
      last = p.cap;
    }
    const rows = trainRows(h.runDir);
    const capAt = (t: number) => [...probes].reverse().find((p) => p.step <= t)?.cap ?? adaptive.initial;
    expect(rows.map((r) => r.horizon)).toEqual(rows.map((r) => capAt(r.step)));
    expect(rows.map((r) => r.adaptiveCap)).toEqual(rows.map((r) => capAt(r.step)));
    expect(new Set(rows.map((r) => r.horizon)).size).toBeGreaterThan(1);
  });

  it("writes the plan beside the metrics", async () => {
    const h = harness(testPlan({ steps: 1 }));
    await h.run();
    expect(JSON.parse(readFileSync(join(h.runDir, "plan.json"), "utf8")).name).toBe("test-run");
  });
});
