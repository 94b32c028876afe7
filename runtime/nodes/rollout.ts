/**
 * Rollout: plays the planned episodes concurrently (bounded by the env pool and the student's
 * concurrency limit), each with retries on env/backend faults, at the node's temperature for the
 * step. Results come back in episode order; each records the policy step it sampled with (the
 * `policy` input, which reaches the explorer through the step clock).
 */
import type { NodeOf } from "../../plan/schema.js";
import { PLAN_RANGES } from "../../plan/ranges.js";
import { runEpisode, type EpisodeRecord, type EpisodeSpec, type Sampler } from "../rollout.js";
import { Lockstep } from "../lockstep.js";
import type { RunContext } from "./context.js";
import { input, type EpisodePlan, type Executor, type PortData } from "./executor.js";
import { withRetries } from "./retry.js";

export function studentSampler(ctx: RunContext): Sampler {
  return async (req) => {
    const [r] = await ctx.studentLimit(() => ctx.student.sample([req]));
    if (!r) throw new Error("student backend returned no sample for a request");
    return r;
  };
}

/**
 * The student's sampler for a set of episodes played at once, and the wrapper each episode is played
 * in: in lockstep (one backend call a round, runtime/lockstep.ts) where the backend asks for it.
 */
export function episodeSampler(ctx: RunContext): { sample: Sampler; play: <T>(episode: () => Promise<T>) => Promise<T> } {
  if (ctx.student.lockstepSampling !== true) return { sample: studentSampler(ctx), play: (episode) => episode() };
  const lockstep = new Lockstep((reqs) => ctx.studentLimit(() => ctx.student.sample(reqs)));
  return { sample: lockstep.sample, play: (episode) => lockstep.play(episode) };
}

export const rolloutExecutor: Executor<"Rollout"> = {
  async run(node, inputs, ctx) {
    const plans = input<EpisodePlan[]>(inputs, "plans")!;
    const policy = input<PortData["Weights"]>(inputs, "policy")!;
    const temperature = ctx.state.atStep(node.params.temperature, ctx.step, PLAN_RANGES.temperature);
    return { episodes: await playEpisodes(node.params, ctx, plans.map((p) => ({ ...p, temperature })), policy.step) };
  },
};

/** Plays episodes with the student through an agent format on an env pool; `policyStep` is recorded on each sample. */
export async function playEpisodes(
  who: Pick<NodeOf<"Rollout">["params"], "agent" | "env">, ctx: RunContext, episodes: EpisodeSpec[], policyStep: number,
): Promise<EpisodeRecord[]> {
  const format = ctx.plan.resources.agents[who.agent];
  if (!format) throw new Error(`Rollout: agent format ${who.agent} is not in the plan's resources`);
  const pool = ctx.envs.get(who.env);
  if (!pool) throw new Error(`Rollout: env ${who.env} is not in the plan's resources`);
  const { sample, play } = episodeSampler(ctx);
  const out = await Promise.all(episodes.map((spec) =>
    withRetries(ctx, `episode ${spec.index} (task ${spec.task.id})`, () =>
      pool.with((env) => play(() => runEpisode(env, sample, format, ctx.tokenizer, spec, policyStep))))));
  return out.sort((a, b) => a.spec.index - b.spec.index);
}
