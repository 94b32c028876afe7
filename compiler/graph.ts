/**
 * The method's execution graph from the lowered curriculum: which nodes a method adds to the
 * standard chain is decided here, from the loss terms and the horizon — TurnOPD's adaptive horizon
 * adds the probe branch, an sft term the Demonstrations node, a grpo term the GroupAdvantage node,
 * loss weights the TurnWeights node. The wiring itself is plan/build.ts.
 */
import { buildGraph, type GraphParts } from "../plan/build.js";
import type { NoiseSource } from "../plan/enums.js";
import type { AdaptiveDepth, Plan } from "../plan/schema.js";

export interface LoweredParts extends Omit<GraphParts, "depth" | "demos" | "grpo"> {
  adaptive?: AdaptiveDepth;
  /** GRPO's normalisation, when the loss has a grpo term. */
  grpo?: { normalize: boolean; eps: number };
  /** The sft term's DART noise (std/loss `sft(noise:)`); 0 = clean expert demonstrations. */
  demosNoise?: number;
  /** Where the noise commands come from (`sft(noise_from:)`); "admissible" is DART's uniform draw. */
  demosNoiseFrom?: NoiseSource;
}

export function methodGraph(p: LoweredParts): Plan["graph"] {
  const { adaptive, grpo, demosNoise, demosNoiseFrom, ...rest } = p;
  const maxTurns = p.planner.maxTurns;
  const terms = new Set(p.advantage.terms.map((t) => t.kind));
  return buildGraph({
    ...rest,
    ...(adaptive ? { depth: {
      probe: { env: p.rollout.env, every: adaptive.probeEvery, episodes: adaptive.probeEpisodes, maxTurns, truncatedReward: p.planner.truncatedReward },
      rule: { rule: adaptive.rule, initial: adaptive.initial, min: adaptive.min, maxTurns },
    } } : {}),
    ...(terms.has("sft") ? { demos: { env: p.rollout.env, agent: p.rollout.agent, maxTurns,
      ...(demosNoise ? { noise: demosNoise, ...(demosNoiseFrom !== "admissible" ? { noiseFrom: demosNoiseFrom } : {}) } : {}) } } : {}),
    ...(terms.has("grpo") && grpo ? { grpo } : {}),
  });
}
