/**
 * The TurnOPD branch of the graph. Probe: every `every` steps, `episodes` full-horizon episodes on
 * tasks of a seeded permutation of the env's split (nothing on other steps); a Rollout and a
 * TeacherScore node play and score them like any episodes. DepthRule: from the scored probe
 * episodes' per-turn KL profile it moves the adaptive cap (adaptive-depth.ts) and records the probe
 * in the curriculum state; it outputs the cap in force every step (the planner's `depth` input).
 */
import { nextAdaptiveCap, probeProfile } from "../adaptive-depth.js";
import type { ScoredEpisode } from "../replay.js";
import { mixSeed, probeTaskIndices, SEED_PURPOSE } from "../seeds.js";
import { turnKlMeans } from "../signals/kl.js";
import { input, type EpisodePlan, type Executor } from "./executor.js";

export const probeExecutor: Executor<"Probe"> = {
  async run(node, _inputs, ctx) {
    const p = node.params;
    if (ctx.step % p.every !== 0) return {};
    const spec = ctx.plan.resources.envs[p.env];
    const pool = ctx.envs.get(p.env);
    if (!spec || !pool) throw new Error(`Probe: env ${p.env} is not in the plan's resources`);
    const all = await pool.tasks(spec.split);
    const draw = probeTaskIndices(ctx.seed, ctx.step, p.episodes, all.length);
    const plans: EpisodePlan[] = draw.map((t, i) => ({
      index: i, task: all[t]!, group: i, prefixActions: [], studentTurns: p.maxTurns,
      capped: false, truncatedReward: p.truncatedReward,
      seed: mixSeed(ctx.seed, SEED_PURPOSE.probe, ctx.step, i), horizon: p.maxTurns, expertLength: 0,
    }));
    return { plans };
  },
};

export const depthRuleExecutor: Executor<"DepthRule"> = {
  async run(node, inputs, ctx) {
    const p = node.params;
    const scored = input<ScoredEpisode[]>(inputs, "scores");
    if (scored) {
      const profile = probeProfile(scored.map((e) => ({ turnKl: turnKlMeans(e.record.turns.map((t) => t.logprobs), e.teacher) })));
      const cap = nextAdaptiveCap(p, profile, ctx.state.adaptiveCap ?? p.initial, p.maxTurns);
      ctx.state.recordProbe(ctx.step, cap, profile);
    }
    return { depth: ctx.state.adaptiveCap ?? p.initial };
  },
};
