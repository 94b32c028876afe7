/**
 * Node kinds of the execution graph: their typed ports, the phase they run in, and the conventional
 * ids the compiler gives them. The runtime schedules node executors from a plan's edges; edges are
 * checked against these ports when a plan is loaded (plan/graph.ts).
 *
 * The standard graph (every method is a variation of it):
 *
 *   TaskSampler ─Tasks→ EpisodePlanner ─EpisodePlans→ Rollout ─Episodes→ TeacherScore ─TeacherScores→ ┐
 *        └─Tasks→ [Demonstrations] ─Demonstrations→ ───────────────────────────────(replay buffer)──── ┤
 *   [Probe ─EpisodePlans→ Rollout ─Episodes→ TeacherScore ─TeacherScores→ DepthRule] ─DepthCap→ EpisodePlanner
 *   TurnStats ─TurnStats→ [TurnWeights], [GroupAdvantage] → Advantage ─Advantages→ Update ─Weights→ WeightSync
 *   WeightSync ─Weights→ Rollout.policy (through the step clock), Evaluate.policy
 *
 * Explorer nodes (phase "explore") produce experience for a step; learner nodes ("learn") train on
 * it; an edge from the explorer into the learner passes through the replay buffer, where the
 * staleness pipeline lives (runtime/pipeline.ts). "clock" nodes run at points of the step clock.
 */
import type { NodeKind } from "./schema.js";

/** The data a port carries. An edge joins an output and an input of the same type. */
export const DATA_TYPES = [
  "Tasks", "EpisodePlans", "Episodes", "TeacherScores", "Demonstrations", "DepthCap",
  "TurnStats", "TurnWeights", "Advantages", "Weights", "Metrics",
] as const;
export type DataType = (typeof DATA_TYPES)[number];

export interface PortSpec {
  name: string;
  type: DataType;
  /** Inputs only: must an edge feed it? Outputs are always optional to connect. */
  required: boolean;
  doc: string;
}

export type Phase = "explore" | "learn" | "clock";

export interface NodeSpec {
  phase: Phase;
  in: readonly PortSpec[];
  out: readonly PortSpec[];
  doc: string;
}

const req = (name: string, type: DataType, doc: string): PortSpec => ({ name, type, required: true, doc });
const opt = (name: string, type: DataType, doc: string): PortSpec => ({ name, type, required: false, doc });
const out = (name: string, type: DataType, doc: string): PortSpec => ({ name, type, required: false, doc });

export const NODE_SPECS = {
  TaskSampler: { phase: "explore", doc: "the step's tasks, each to be rolled out `rolloutsPerTask` times", in: [],
    out: [out("tasks", "Tasks", "tasks of the step with their group index")] },
  EpisodePlanner: { phase: "explore", doc: "each episode's horizon cap and expert prefix",
    in: [req("tasks", "Tasks", "tasks to plan"), opt("depth", "DepthCap", "the TurnOPD adaptive cap; when connected it is the horizon")],
    out: [out("plans", "EpisodePlans", "one episode plan per rollout")] },
  Probe: { phase: "explore", doc: "TurnOPD probe: full-horizon episodes every `every` steps", in: [],
    out: [out("plans", "EpisodePlans", "probe episode plans (nothing on steps without a probe)")] },
  Rollout: { phase: "explore", doc: "plays planned episodes with the student",
    in: [req("plans", "EpisodePlans", "episodes to play"), req("policy", "Weights", "the student weights it samples with (through the step clock)")],
    out: [out("episodes", "Episodes", "token-level episode records")] },
  TeacherScore: { phase: "explore", doc: "the teacher's log-probabilities of every response token",
    in: [req("episodes", "Episodes", "episodes to score")],
    out: [out("scores", "TeacherScores", "episodes with teacher log-probabilities")] },
  DepthRule: { phase: "explore", doc: "TurnOPD: moves the adaptive cap from the probe's per-turn KL profile",
    in: [opt("scores", "TeacherScores", "scored probe episodes (absent on steps without a probe)")],
    out: [out("depth", "DepthCap", "the cap in force")] },
  Demonstrations: { phase: "explore", doc: "SFT: the expert's path for each task, played through the agent format",
    in: [req("tasks", "Tasks", "tasks whose expert paths to play")],
    out: [out("demos", "Demonstrations", "demonstration rows")] },
  TurnStats: { phase: "learn", doc: "the learner batch on one token axis, with per-turn statistics",
    in: [req("scores", "TeacherScores", "scored student episodes (from the replay buffer)"), opt("demos", "Demonstrations", "expert demonstrations (from the replay buffer)")],
    out: [out("stats", "TurnStats", "the learner batch")] },
  TurnWeights: { phase: "learn", doc: "a turn-level expression that scales each turn's advantages",
    in: [req("stats", "TurnStats", "the learner batch")],
    out: [out("weights", "TurnWeights", "one weight per student turn")] },
  GroupAdvantage: { phase: "learn", doc: "GRPO: group-normalised episode rewards on each token",
    in: [req("stats", "TurnStats", "the learner batch")],
    out: [out("advantages", "Advantages", "per-token group advantages (coefficient 1)")] },
  Advantage: { phase: "learn", doc: "Σ coef(step)·term per token, scaled by turn weights",
    in: [req("stats", "TurnStats", "the learner batch"), opt("weights", "TurnWeights", "turn weights"),
      opt("grpo", "Advantages", "the grpo term's group advantages")],
    out: [out("advantages", "Advantages", "per-token advantages and exact-KL coefficients")] },
  Update: { phase: "learn", doc: "optimiser steps on the batch",
    in: [req("advantages", "Advantages", "advantages of the learner batch")],
    out: [out("weights", "Weights", "the updated student")] },
  WeightSync: { phase: "learn", doc: "hands the updated weights to the sampler",
    in: [req("weights", "Weights", "the updated student")],
    out: [out("policy", "Weights", "the weights the explorer samples with")] },
  Evaluate: { phase: "clock", doc: "full, uncapped episodes on an eval split every `every` steps",
    in: [req("policy", "Weights", "the weights to evaluate")], out: [out("metrics", "Metrics", "the eval row")] },
  Checkpoint: { phase: "clock", doc: "saves the run every `every` steps", in: [], out: [] },
} as const satisfies Record<NodeKind, NodeSpec>;

/** Conventional node ids (Evaluate nodes are `eval-<name>`; the TurnOPD probe branch `probe-*`). */
export const NODE_IDS = {
  TaskSampler: "tasks",
  EpisodePlanner: "planner",
  Probe: "probe",
  Rollout: "rollout",
  TeacherScore: "teacher",
  DepthRule: "depth",
  Demonstrations: "demos",
  TurnStats: "stats",
  TurnWeights: "weights",
  GroupAdvantage: "grpo",
  Advantage: "advantage",
  Update: "update",
  WeightSync: "sync",
  Evaluate: "eval",
  Checkpoint: "checkpoint",
} as const satisfies Record<NodeKind, string>;

export function inPort(kind: NodeKind, name: string): PortSpec | undefined {
  return (NODE_SPECS[kind].in as readonly PortSpec[]).find((p) => p.name === name);
}
export function outPort(kind: NodeKind, name: string): PortSpec | undefined {
  return (NODE_SPECS[kind].out as readonly PortSpec[]).find((p) => p.name === name);
}
