/**
 * Metrics: one JSON line per training step and one per evaluation, appended to
 * RUN_DIR/metrics.jsonl. Wall times live under `time` (they are the only fields that differ
 * between two runs of the same seed). The byte length of the file is the resume offset: a resumed
 * run truncates the file there, so no row is duplicated or half-written.
 */
import { appendFileSync, existsSync, readFileSync, statSync, truncateSync, writeFileSync } from "node:fs";
import type { EvalRow } from "./nodes/evaluate.js";
import type { FeedbackSummary } from "../plan/feedback.js";

export interface TrainRowMetrics {
  kind: "train";
  step: number;
  /** Training steps completed by the policy that produced this step's rollouts. */
  policyStep: number;
  /** Optimiser steps taken by the student after this step's update. */
  policyVersion: number;
  episodes: number;
  successRate: number;
  meanReward: number;
  /** Schedules in force, mean over the step's episodes (turns). */
  horizon: number;
  prefix: number;
  /** Mean expert length L of the step's tasks (turns; 0 where a task has none or none was needed). */
  expertLength: number;
  studentTurns: number;
  turns: number;
  invalidActions: number;
  /** Share of student turns whose action is admissible (a well-formed command the env lists). */
  admissibleRate: number;
  noExperience: number;
  droppedFailed: number;
  droppedStale: number;
  kl: { mean: number; perTurn: (number | null)[] };
  tokens: { prompt: number; response: number };
  coefs: Record<string, number>;
  blendWeight: number | null;
  adaptiveCap: number | null;
  /** The feedback rules in force for this step (stages, smoothed signals); only when the plan has any. */
  feedback?: FeedbackSummary;
  lr: number;
  loss: number;
  gradNorm: number;
  updates: number;
  time: Record<string, number>;
}

export type MetricsRow = TrainRowMetrics | (EvalRow & { time: Record<string, number> });

export class MetricsWriter {
  constructor(readonly path: string) {}

  /** Starts a fresh file, or continues one at `offset` bytes (resume). */
  open(offset?: number): void {
    if (offset === undefined) writeFileSync(this.path, "");
    else {
      if (!existsSync(this.path)) throw new Error(`cannot resume: ${this.path} is missing`);
      const size = statSync(this.path).size;
      if (size < offset) throw new Error(`cannot resume: ${this.path} has ${size} bytes, the checkpoint expects at least ${offset}`);
      truncateSync(this.path, offset);
    }
  }

  write(row: MetricsRow): void {
    appendFileSync(this.path, JSON.stringify(row) + "\n");
  }

  offset(): number {
    return existsSync(this.path) ? statSync(this.path).size : 0;
  }
}

export function readMetrics(path: string): MetricsRow[] {
  return readFileSync(path, "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as MetricsRow);
}
