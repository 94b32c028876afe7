/**
 * The one contract every node kind implements: `run(node, inputs, ctx)` takes the values on the
 * node's input ports (by port name; an unconnected optional input is absent) and returns the values
 * of its output ports. The engine schedules executors from the plan's edges (runtime/graph.ts); an
 * executor never looks up other nodes. What each port carries is below, by the port's data type
 * (plan/nodes.ts DATA_TYPES).
 */
import type { NodeKind, NodeOf } from "../../plan/schema.js";
import type { DataType } from "../../plan/nodes.js";
import type { EpisodeRecord, EpisodeSpec } from "../rollout.js";
import type { ExperienceRow, RowShape, ScoredEpisode } from "../replay.js";
import type { Aggregation } from "../signals/aggregate.js";
import type { RunContext } from "./context.js";
import type { SampledTask } from "./task-sampler.js";
import type { LearnerBatch } from "./turn-stats.js";
import type { UpdateResult } from "./update.js";
import type { EvalRow } from "./evaluate.js";

/** An episode to play, before the Rollout node sets its sampling temperature. */
export type EpisodePlan = Omit<EpisodeSpec, "temperature">;

export interface AdvantageData {
  batch: LearnerBatch;
  advantages: Float64Array;
  /** Per-token exact-KL coefficients (opd "full"), on the batch's token axis. */
  klCoefs?: Float64Array;
  /** Per-token forward-KL coefficients (gkd terms, c·β), beside `klCoefs`. */
  forwardKlCoefs?: Float64Array;
  /** Coefficient of each term in force at the step (κ, ρ…), for metrics. */
  coefs: Record<string, number>;
  /** The loss aggregation in force (set by the Advantage node; a GroupAdvantage branch has none). */
  aggregate?: Aggregation;
}

/** What a port of each data type carries at run time. */
export interface PortData {
  Tasks: { env: string; rolloutsPerTask: number; tasks: SampledTask[] };
  EpisodePlans: EpisodePlan[];
  Episodes: EpisodeRecord[];
  TeacherScores: ScoredEpisode[];
  Demonstrations: ExperienceRow[];
  DepthCap: number;
  TurnStats: LearnerBatch;
  TurnWeights: Float64Array;
  Advantages: AdvantageData;
  /** The student after training step `step` (0 = initial weights); `update` on Update's output. */
  Weights: { step: number; version: number; update?: UpdateResult };
  Metrics: EvalRow;
}
export type PortValue<T extends DataType> = PortData[T];

export type PortValues = Record<string, unknown>;

/** The run context plus where the clock stands for this call. */
export interface StepContext extends RunContext {
  /** The step this node runs for (the explorer's step, or the learner's). */
  step: number;
  /** Experience row shape (per turn / per trajectory). */
  rowShape: RowShape;
  /** Writes a checkpoint of the whole run now (the Checkpoint node). */
  saveCheckpoint: () => Promise<void>;
}

export interface Executor<K extends NodeKind = NodeKind> {
  run(node: NodeOf<K>, inputs: PortValues, ctx: StepContext): Promise<PortValues>;
}

/** Reads an input port's value (typed by the caller). */
export const input = <T>(inputs: PortValues, port: string): T | undefined => inputs[port] as T | undefined;
