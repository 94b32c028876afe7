/** Plans for runtime tests: presets over the shared builder (test/helpers/plans.ts). */
import type { AgentFormat, Plan } from "../../plan/schema.js";
import type { ExprDef } from "../../plan/expr.js";
import type { NoiseSource } from "../../plan/enums.js";
import { assemblePlan, type TestTerm } from "../helpers/plans.js";

export const TAGS_FORMAT: AgentFormat = {
  name: "test-tags",
  system: "You act.",
  template: "Task: {task}. Taken {step}. Last {history_length}:\n{history}\nNow: {observation}. Choose from [{admissible}].",
  templateNoHistory: "Task: {task}. Taken {step}. Now: {observation}. Choose from [{admissible}].",
  historyWindow: 2,
  historyEntry: "[Observation {n}: '{observation}', Action {n}: '{action}']",
  memory: { kind: "accumulate" },
  parser: { kind: "tags", tag: "action", think: false },
  maxResponseTokens: 64,
  thinking: false,
  onInvalid: { kind: "feedback", text: "Invalid Action." },
};

/** The raw format of std/agent (the embedded backend's default for texthouse). */
export const RAW_FORMAT: AgentFormat = {
  name: "raw", system: "", template: "task: {task}\nobservation: {observation}",
  templateNoHistory: "task: {task}\nobservation: {observation}", historyWindow: 0, historyEntry: "",
  memory: { kind: "window", turns: 0 }, parser: { kind: "raw" }, maxResponseTokens: 8, thinking: false,
  onInvalid: { kind: "pass" },
};

/** H(t) = min(1 + floor(t / k), Hmax) as an expression tree. */
export function f2bExpr(k: number, hMax: number): ExprDef {
  return {
    level: "step", unit: "turns",
    tree: { op: "min", args: [
      { op: "add", args: [{ op: "const", value: 1 }, { op: "floor", args: [{ op: "div", args: [{ op: "var", name: "step" }, { op: "const", value: k }] }] }] },
      { op: "const", value: hMax },
    ] },
  };
}

/** p(t) = clamp((L − 1) − floor(t / k), 0, L − 1), L = episode.expert_length. */
export function b2fExpr(k: number): ExprDef {
  const lm1 = { op: "sub" as const, args: [{ op: "var" as const, name: "episode.expert_length" as const }, { op: "const" as const, value: 1 }] };
  return {
    level: "episode", unit: "turns",
    tree: { op: "max", args: [{ op: "const", value: 0 }, { op: "min", args: [
      { op: "sub", args: [lm1, { op: "floor", args: [{ op: "div", args: [{ op: "var", name: "step" }, { op: "const", value: k }] }] }] },
      lm1,
    ] }] },
  };
}

export interface TestPlanOptions {
  name?: string;
  envKind?: string;
  steps?: number;
  tasksPerStep?: number;
  rolloutsPerTask?: number;
  maxTurns?: number;
  horizon?: "f2b";
  prefix?: "b2f";
  k?: number;
  staleness?: number;
  trainBatchTurns?: number;
  evalEvery?: number;
  evalTasks?: number;
  /** The eval's first step after 0 (`evaluate(from:)`). */
  evalFrom?: number;
  agent?: AgentFormat;
  backend?: "embedded";
  grpo?: boolean;
  /** Coefficient of an sft term (expert demonstrations). */
  sft?: number;
  /** DART noise of the sft term's demonstrations. */
  sftNoise?: number;
  /** Where that noise comes from. */
  sftNoiseFrom?: NoiseSource;
  /** Leave the opd term out (an sft-only loss). */
  noOpd?: boolean;
  estimator?: "k1" | "topk" | "full";
  adaptive?: { probeEvery: number; probeEpisodes: number; rule: { kind: "coverage"; keep: number } | { kind: "divergence"; ratio: number }; initial: number; min: number };
  topk?: number;
  pool?: number;
  checkpointEvery?: number;
  split?: string;
  evalSplit?: string;
  lr?: number;
  features?: number;
  temperature?: number;
}

export function testPlan(o: TestPlanOptions = {}): Plan {
  const maxTurns = o.maxTurns ?? 8;
  const exprs: Record<string, ExprDef> = {};
  if (o.horizon === "f2b") exprs.horizon = f2bExpr(o.k ?? 2, maxTurns);
  if (o.prefix === "b2f") exprs.prefix = b2fExpr(o.k ?? 2);
  const backend = o.backend === "embedded"
    ? { kind: "embedded" as const, smoothing: 0.1, features: o.features ?? 4096 }
    : { kind: "embedded" as const, smoothing: 0.1, features: 16 };
  const env = (split: string) => ({ kind: o.envKind ?? "counter", split, maxTurns, pool: o.pool ?? 4, params: {} });
  const terms: TestTerm[] = [...(o.noOpd ? [] : [{ kind: "opd" as const, coef: 1, estimator: o.estimator ?? "k1" }]),
    ...(o.grpo ? [{ kind: "grpo" as const, coef: 0.5, normalize: true, eps: 1e-6 }] : []),
    ...(o.sft !== undefined ? [{ kind: "sft" as const, coef: o.sft }] : [])];
  return assemblePlan({
    name: o.name ?? "test-run", steps: o.steps ?? 4, seed: 7, exprs,
    models: { student: { path: "student", backend }, teacher: { path: "teacher", backend } },
    envs: { train: env(o.split ?? "train"), ...(o.evalEvery ? { valid: env(o.evalSplit ?? "valid_seen") } : {}) },
    agents: { agent: o.agent ?? TAGS_FORMAT },
    tasks: { env: "train", tasksPerStep: o.tasksPerStep ?? 3, rolloutsPerTask: o.rolloutsPerTask ?? 1, seed: 0 },
    planner: { maxTurns, truncatedReward: 0, ...(o.horizon ? { horizon: { expr: "horizon" } } : {}), ...(o.prefix ? { prefix: { expr: "prefix" } } : {}) },
    ...(o.adaptive ? { adaptive: o.adaptive } : {}),
    rollout: { student: "student", env: "train", agent: "agent", temperature: o.temperature ?? 1 },
    teacher: { teacher: "teacher", temperature: 1, topk: o.topk ?? 0 },
    terms, aggregate: { kind: "seq_mean_token_mean" },
    update: {
      optimizer: { kind: "adamw", lr: o.lr ?? 0.1, betas: [0.9, 0.999], eps: 1e-8, weightDecay: 0, gradClip: 1 },
      lossFn: "importance_sampling", clip: 0.2, trainBatchTurns: o.trainBatchTurns ?? 0, staleness: o.staleness ?? 0,
    },
    evals: o.evalEvery ? [{ name: "valid", env: "valid", every: o.evalEvery, tasks: o.evalTasks ?? 3, temperature: 0, maxTurns, atStart: true, ...(o.evalFrom ? { from: o.evalFrom } : {}) }] : [],
    ...(o.checkpointEvery ? { checkpointEvery: o.checkpointEvery } : {}),
    ...(o.sftNoise ? { demosNoise: o.sftNoise } : {}),
    ...(o.sftNoiseFrom ? { demosNoiseFrom: o.sftNoiseFrom } : {}),
  });
}
