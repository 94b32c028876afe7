/**
 * Hand-made plans for tests, built the way the compiler builds them: node params from a few options,
 * the graph wired by the compiler's graph builder (compiler/graph.ts → plan/build.ts), validated by
 * parsePlan. test/runtime/plans.ts and test/trinity/plans.ts are presets over this one helper.
 */
import { methodGraph } from "../../compiler/graph.js";
import { DEFAULT_LOG_RATIO_CLAMP } from "../../plan/defaults.js";
import { parsePlan, PLAN_SCHEMA_ID, type AdaptiveDepth, type AgentFormat, type AdvantageTerm, type EnvSpec, type ModelSpec, type NodeOf, type Plan } from "../../plan/schema.js";
import type { ExprDef } from "../../plan/expr.js";
import type { NoiseSource } from "../../plan/enums.js";

type Params<K extends Plan["graph"]["nodes"][number]["kind"]> = NodeOf<K>["params"];

/** A grpo term with its GroupAdvantage settings (they go on the GroupAdvantage node). */
export type TestTerm = AdvantageTerm | { kind: "grpo"; coef: AdvantageTerm["coef"]; normalize: boolean; eps: number };

export interface PlanParts {
  name: string;
  steps: number;
  seed: number;
  exprs: Record<string, ExprDef>;
  models: Record<string, ModelSpec>;
  envs: Record<string, EnvSpec>;
  agents: Record<string, AgentFormat>;
  tasks: Params<"TaskSampler">;
  planner: Params<"EpisodePlanner">;
  adaptive?: AdaptiveDepth;
  rollout: Params<"Rollout">;
  teacher: { teacher: string; temperature: number; topk: number };
  terms: TestTerm[];
  aggregate: Params<"Advantage">["aggregate"];
  rows?: Params<"Advantage">["rows"];
  /** Expression id of a turn-level weight (TurnWeights). */
  turnWeights?: string;
  update: Omit<Params<"Update">, "logRatioClamp"> & { logRatioClamp?: number };
  /** Evaluate nodes; student and agent default to the Rollout node's. */
  evals?: (Omit<Params<"Evaluate">, "student" | "agent"> & Partial<Pick<Params<"Evaluate">, "student" | "agent">>)[];
  checkpointEvery?: number;
  /** DART noise of the sft term's demonstrations. */
  demosNoise?: number;
  /** Where that noise comes from (default: uniform admissible commands). */
  demosNoiseFrom?: NoiseSource;
}

export function assemblePlan(p: PlanParts): Plan {
  const grpo = p.terms.find((t): t is Extract<TestTerm, { normalize: boolean }> => t.kind === "grpo" && "normalize" in t);
  const terms = p.terms.map((t) => (t.kind === "grpo" ? { kind: "grpo" as const, coef: t.coef } : t)) as AdvantageTerm[];
  const graph = methodGraph({
    tasks: p.tasks, planner: p.planner, ...(p.adaptive ? { adaptive: p.adaptive } : {}), rollout: p.rollout,
    teacher: { ...p.teacher, distributions: terms.some((t) => t.kind === "opd" && t.estimator === "full") },
    ...(p.turnWeights ? { turnWeights: { weight: { expr: p.turnWeights } } } : {}),
    ...(grpo ? { grpo: { normalize: grpo.normalize, eps: grpo.eps } } : terms.some((t) => t.kind === "grpo") ? { grpo: { normalize: true, eps: 1e-6 } } : {}),
    advantage: { terms, aggregate: p.aggregate, ...(p.rows ? { rows: p.rows } : {}) },
    update: { logRatioClamp: DEFAULT_LOG_RATIO_CLAMP, ...p.update },
    sync: { every: 1 },
    evals: (p.evals ?? []).map((e) => ({ student: p.rollout.student, agent: p.rollout.agent, ...e })),
    ...(p.checkpointEvery ? { checkpoint: { every: p.checkpointEvery } } : {}),
    ...(p.demosNoise ? { demosNoise: p.demosNoise } : {}),
    ...(p.demosNoiseFrom ? { demosNoiseFrom: p.demosNoiseFrom } : {}),
  });
  return parsePlan({
    schema: PLAN_SCHEMA_ID, name: p.name, sources: [], clock: { steps: p.steps, seed: p.seed },
    resources: { models: p.models, envs: p.envs, agents: p.agents }, exprs: p.exprs, graph,
  });
}
