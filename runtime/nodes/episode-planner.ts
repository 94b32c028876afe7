/**
 * EpisodePlanner: the schedule in force for each episode of a step (reference §1.5–1.6).
 * - horizon cap H (TCOD-f2b) or the TurnOPD adaptive cap (the `depth` input); the student plays min(H, Hmax − p) turns;
 * - expert prefix p (TCOD-b2f), from the plan's episode-level expression with
 *   `episode.expert_length` = L (0 when the task has no expert path); p is floored and clamped to
 *   [0, L] (the official formula already keeps it ≤ L − 1), and the student gets Hmax − p turns.
 * Values are floored to whole turns; a value outside its range (plan/ranges.ts: a cap below 1 turn,
 * a prefix outside [0, Hmax − 1]) is an error naming the expression (TC7005).
 */
import type { NodeOf } from "../../plan/schema.js";
import { PLAN_RANGES, prefixRange } from "../../plan/ranges.js";
import { mixSeed, SEED_PURPOSE } from "../seeds.js";
import type { RunContext } from "./context.js";
import { withRetries } from "./retry.js";
import { input, type EpisodePlan, type Executor, type PortData } from "./executor.js";
import type { SampledTask } from "./task-sampler.js";

export interface PlannerInput {
  tasks: SampledTask[];
  rolloutsPerTask: number;
  envId: string;
  step: number;
  /** The TurnOPD adaptive cap (DepthRule), when the planner's `depth` input is connected. */
  depth?: number;
}

export const episodePlannerExecutor: Executor<"EpisodePlanner"> = {
  async run(node, inputs, ctx) {
    const t = input<PortData["Tasks"]>(inputs, "tasks")!;
    const depth = input<number>(inputs, "depth");
    return { plans: await runEpisodePlanner(node, ctx, {
      tasks: t.tasks, rolloutsPerTask: t.rolloutsPerTask, envId: t.env, step: ctx.step, ...(depth !== undefined ? { depth } : {}),
    }) };
  },
};

export async function runEpisodePlanner(node: NodeOf<"EpisodePlanner">, ctx: RunContext, input: PlannerInput): Promise<EpisodePlan[]> {
  const p = node.params;
  const pool = ctx.envs.get(input.envId)!;
  const needsExpert = p.prefix !== undefined || ctx.state.reads(p.horizon, "episode.expert_length");
  const specs: EpisodePlan[] = [];
  for (const { task, group } of input.tasks) {
    let expert: readonly string[] = [];
    if (needsExpert) {
      // Under the episode's retries: an env fault here (a bridge's gold path) stops the run as TC7016.
      expert = task.actions ?? (await withRetries(ctx, `expert path of task ${task.id}`, () => pool.with(async (env) => (env.expertPath ? env.expertPath(task) : []))));
    }
    const vars = ctx.state.episodeVars(input.step, expert.length, p.maxTurns);
    let cap = p.maxTurns;
    if (input.depth !== undefined) cap = input.depth;
    // Range-checked (TC7005): a feedback-paced horizon is checked by the compiler at step 1 only.
    else if (p.horizon !== undefined) cap = Math.floor(ctx.state.atEpisode(p.horizon, vars, PLAN_RANGES.horizon));
    cap = Math.min(cap, p.maxTurns);
    let prefix = 0;
    // The prefix's range is checked at the expert lengths the compiler checks it at (0..maxTurns): for
    // a longer expert path the official b2f starts at L − 1 ≥ maxTurns, which leaves the student no turn.
    if (p.prefix !== undefined) prefix = Math.max(0, Math.min(Math.floor(ctx.state.atEpisode(p.prefix, vars, expert.length <= p.maxTurns ? prefixRange(p.maxTurns) : undefined)), expert.length));
    const budget = Math.max(0, p.maxTurns - prefix);
    const studentTurns = Math.min(cap, budget);
    for (let r = 0; r < input.rolloutsPerTask; r++) {
      const index = group * input.rolloutsPerTask + r;
      specs.push({
        index, task, group, prefixActions: expert.slice(0, prefix), studentTurns, capped: studentTurns < budget,
        truncatedReward: p.truncatedReward,
        seed: mixSeed(ctx.seed, SEED_PURPOSE.sample, input.step, index), horizon: cap, expertLength: expert.length,
      });
    }
  }
  return specs;
}
