/**
 * Evaluate: full, uncapped episodes (Evaluate.maxTurns, no prefix, no training) on the first
 * `tasks` tasks of the eval env's split, at the eval temperature. Each task index keeps the same
 * sampling seed at every evaluation (common random numbers), so the curve moves with the policy,
 * not with sampling noise.
 */
import type { NodeOf } from "../../plan/schema.js";
import type { EpisodeSpec } from "../rollout.js";
import { actionRates } from "../action-rates.js";
import { mixSeed, SEED_PURPOSE } from "../seeds.js";
import type { RunContext } from "./context.js";
import { input, type Executor, type PortData } from "./executor.js";
import { playEpisodes } from "./rollout.js";
import { evalSamples, type EpisodeSample } from "../episode-samples.js";

export interface EvalRow {
  kind: "eval"; name: string; step: number; successRate: number; meanReward: number; meanTurns: number; episodes: number;
  /** Share of the evaluation's turns whose parsed action is one of the commands the env listed
   *  (absent in runs written before it was recorded). */
  admissibleRate?: number;
  /** Share of the turns that repeat the turn before's action where that one was not listed: an agent
   *  stuck on a command that made nothing happen (absent in runs written before it was recorded). */
  repeatRate?: number;
  /** A few of the evaluation's episodes as text (RUN_DIR/episodes.jsonl, not the metrics row). */
  samples?: EpisodeSample[];
}

/** Evaluates the weights on its `policy` input; the run state calls it at the clock points of `every` (and step 0 with atStart). */
export const evaluateExecutor: Executor<"Evaluate"> = {
  async run(node, inputs, ctx) {
    const policy = input<PortData["Weights"]>(inputs, "policy")!;
    return { metrics: await runEvaluate(node, ctx, ctx.step, policy.step) };
  },
};

export async function runEvaluate(node: NodeOf<"Evaluate">, ctx: RunContext, step: number, policyStep: number): Promise<EvalRow> {
  const p = node.params;
  const spec = ctx.plan.resources.envs[p.env];
  const pool = ctx.envs.get(p.env);
  if (!spec || !pool) throw new Error(`Evaluate ${p.name}: env ${p.env} is not in the plan's resources`);
  const all = await pool.tasks(spec.split);
  if (all.length === 0) throw new Error(`Evaluate ${p.name}: env ${p.env} has no tasks in split "${spec.split}"`);
  const episodes: EpisodeSpec[] = Array.from({ length: p.tasks }, (_, i) => ({
    index: i, task: all[i % all.length]!, group: i, prefixActions: [], studentTurns: p.maxTurns, capped: false,
    truncatedReward: 0, temperature: p.temperature, seed: mixSeed(ctx.seed, SEED_PURPOSE.eval, i),
    horizon: p.maxTurns, expertLength: 0,
  }));
  const records = await playEpisodes({ agent: p.agent, env: p.env }, ctx, episodes, policyStep);
  const n = records.length;
  return {
    kind: "eval", name: p.name, step,
    successRate: records.filter((r) => r.won).length / n,
    meanReward: records.reduce((a, r) => a + r.reward, 0) / n,
    meanTurns: records.reduce((a, r) => a + r.turns.length, 0) / n,
    episodes: n,
    ...actionRates(records),
    samples: evalSamples(step, p.name, records, ctx.tokenizer),
  };
}
