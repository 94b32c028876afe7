/** A TCOD-b2f curriculum on the real TextWorldExpress through the engine and the embedded backend. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";
import { runPlan } from "../../runtime/engine.js";
import { readMetrics } from "../../runtime/metrics.js";
import { createEnv } from "../../runtime/envs/registry.js";
import type { BridgeEnv } from "../../runtime/envs/bridge/adapter.js";
import type { EnvAdapter } from "../../runtime/envs/env.js";
import { missing } from "./requirements.js";
import { composeRuntime } from "../../bin/compose.js";

composeRuntime(); // the backends and envs bin/ registers for `tcod run`

const skip = missing("textworld_express") !== undefined;

describe.skipIf(skip)("a curriculum on the real TextWorldExpress (embedded backend)", () => {
  function compileCurriculum() {
    const dir = mkdtempSync(join(tmpdir(), "tcod-twx-"));
    const src = join(dir, "twx.tcod");
    writeFileSync(src, `import { opd } from "std/loss"
import { b2f } from "std/tcod"
import { textworld_express } from "std/envs"
import { raw_format } from "std/agent"
model teacher { path: "oracle"  serve: embedded(smoothing: 0.1) }
model student { path: "loglinear"  serve: embedded(features: 1024) }
curriculum twx_b2f {
  teacher: teacher
  student: student
  env: textworld_express(game: "coin", params: "numLocations=4,includeDoors=1", split: "train", max_turns: 20 turns, pool: 2, agent: raw_format())
  steps: 4
  batch: 4 tasks × 1 rollout
  prefix: b2f(every: 1 steps)
  loss: opd(coef: 1.0)
  optimizer: adam(lr: 0.05, loss_fn: "importance_sampling")
  staleness: 0 steps
}
`);
    const r = compileFile(src, {});
    expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    return { plan: r.plans[0]!.plan, dir };
  }

  it("b2f prefixes come from the package's gold paths and shrink; every episode is played, none dropped", async () => {
    const { plan, dir } = compileCurriculum();
    const run = join(dir, "run");
    // Each episode's own gold length L, as the planner reads it from the env (one call per task, in
    // planning order: 4 tasks a step, steps in turn with staleness 0).
    const golds: number[] = [];
    const envFactory = (spec: Parameters<typeof createEnv>[0], opts: { seed: number; instance: number }): EnvAdapter => {
      const env = createEnv(spec, opts);
      const expertPath = env.expertPath!.bind(env);
      env.expertPath = async (task) => {
        const path = await expertPath(task);
        golds.push(path.length);
        return path;
      };
      return env;
    };
    expect((await runPlan(plan, { runDir: run, envFactory })).status).toBe("completed");
    const train = readMetrics(join(run, "metrics.jsonl")).filter((m) => m.kind === "train") as unknown as
      { step: number; prefix: number; expertLength: number; episodes: number; droppedFailed: number }[];
    expect(train).toHaveLength(4);
    expect(golds).toHaveLength(16);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    train.forEach((m, i) => {
      const L = golds.slice(4 * i, 4 * i + 4);
      expect(m.step).toBe(i + 1);
      expect(m.episodes).toBe(4);
      expect(m.droppedFailed).toBe(0);
      // The gold paths the planner read are the step's expert lengths…
      expect(L.every((l) => l >= 1)).toBe(true);
      expect(m.expertLength).toBe(mean(L));
      expect(m.expertLength).toBeGreaterThan(1);
      // …and each episode's prefix is b2f(every: 1 step) of its own L: p = clamp(L − 1 − step, 0, L − 1).
      // (Comparing the mean prefix of two steps instead compared two different draws of tasks.)
      expect(m.prefix).toBe(mean(L.map((l) => Math.max(0, l - 1 - m.step))));
    });
    // The run exercises the replay: some episode starts from an expert prefix.
    expect(train.some((m) => m.prefix > 0)).toBe(true);
  }, 300_000);

  it("a JVM killed mid-episode: the engine drops the episode, counts it, retries, and the run completes", async () => {
    const { plan, dir } = compileCurriculum();
    let killed = 0;
    const envFactory = (spec: Parameters<typeof createEnv>[0], opts: { seed: number; instance: number }): EnvAdapter => {
      const env = createEnv(spec, opts) as BridgeEnv;
      let steps = 0;
      const step = env.step.bind(env);
      env.step = async (action: string) => {
        if (++steps === 3 && killed === 0) { killed++; process.kill(-env.pid!, "SIGKILL"); }
        return step(action);
      };
      return env;
    };
    const run = join(dir, "run-kill");
    expect((await runPlan(plan, { runDir: run, envFactory })).status).toBe("completed");
    const train = readMetrics(join(run, "metrics.jsonl")).filter((m) => m.kind === "train") as unknown as { episodes: number; droppedFailed: number }[];
    expect(killed).toBe(1);
    expect(train.reduce((n, m) => n + m.droppedFailed, 0)).toBe(1);
    expect(train.every((m) => m.episodes === 4)).toBe(true);
  }, 300_000);
});
