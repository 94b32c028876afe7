/**
 * The explorer: runs the graph's explorer nodes for a step — task sampling, episode planning, the
 * TurnOPD probe branch, rollouts, demonstrations, teacher scoring — and hands what crosses into the
 * learner to the staleness pipeline as experience rows. With staleness ≥ 1 the scorer (the
 * TeacherScore node feeding the learner) is deferred: the pipeline calls `score` for step t − 1
 * while step t rolls out. The teacher never touches the student's weights, so the overlap keeps
 * runs deterministic.
 */
import type { EpisodeRecord } from "./rollout.js";
import { actionRates } from "./action-rates.js";
import { trajectoryRow, turnRows, type ExperienceRow, type RowShape, type ScoredEpisode } from "./replay.js";
import type { TrainRowMetrics } from "./metrics.js";
import type { RunContext } from "./nodes/context.js";
import type { PortValues, StepContext } from "./nodes/executor.js";
import { inputsOf, ready, runNode, type Latest, type RunGraph, type Values } from "./graph.js";
import { stepSamples, type EpisodeSample } from "./episode-samples.js";

/** Per-step rollout statistics (the rollout part of the step's metrics row), kept until the step's update writes it. */
export type RolloutStats = Pick<TrainRowMetrics,
  "step" | "policyStep" | "episodes" | "successRate" | "meanReward" | "horizon" | "prefix" | "expertLength" | "studentTurns" |
  "turns" | "invalidActions" | "admissibleRate" | "noExperience" | "droppedFailed" | "adaptiveCap" | "tokens" | "feedback"> & {
  time: { rollout: number; teacher: number; probe: number };
  /** A few of the step's scored episodes as text (episode-samples.ts); written beside the step's metrics row. */
  samples?: EpisodeSample[];
};

/** Episodes rolled out but not yet scored (staleness ≥ 1); part of the checkpoint. */
export interface Unscored { step: number; policyStep: number; records: EpisodeRecord[] }

export interface Explored {
  stats: RolloutStats;
  /** Experience for the buffer now: demonstrations, and the scored episodes unless scoring was deferred. */
  rows: ExperienceRow[];
  /** The scorer's input, when scoring was deferred. */
  unscored?: Unscored;
}

export class Explorer {
  constructor(
    private readonly g: RunGraph,
    private readonly ctx: RunContext,
    private readonly latest: Latest,
    private readonly shape: RowShape,
    private readonly stepCtx: (step: number) => StepContext,
  ) {}

  /** Runs the explorer nodes of step t in topological order; with `deferScoring` the scorer waits for the next iteration. */
  async explore(t: number, deferScoring: boolean): Promise<Explored> {
    const { g, ctx } = this;
    const sc = this.stepCtx(t);
    const values: Values = new Map();
    const time = { rollout: 0, teacher: 0, probe: 0 };
    const policyStep = ctx.syncedStep;
    let records: EpisodeRecord[] = [];
    let unscored: Unscored | undefined;
    let droppedFailed = 0;
    let samples: EpisodeSample[] = [];
    for (const n of g.explore) {
      const inputs = inputsOf(g, n, values, this.latest);
      if (!ready(n, inputs)) continue;
      if (n.id === g.scorer.id) {
        records = inputs.episodes as EpisodeRecord[];
        if (deferScoring) { unscored = { step: t, policyStep, records }; continue; }
      }
      const failed = ctx.counters.droppedFailed;
      const t0 = performance.now();
      const out = await runNode(n, inputs, sc);
      const seconds = (performance.now() - t0) / 1000;
      if (g.probeBranch.has(n.id)) time.probe += seconds;
      else if (n.id === g.scorer.id) time.teacher += seconds;
      else { time.rollout += seconds; droppedFailed += ctx.counters.droppedFailed - failed; }
      if (n.id === g.scorer.id) samples = this.samples(t, out);
      values.set(n.id, out);
      this.latest.record(n.id, out);
    }
    const stats: RolloutStats = { ...rolloutStats(t, policyStep, records, droppedFailed, ctx.state.adaptiveCap, time), samples };
    // The feedback in force while this step rolled out (its stages and signals), for the metrics row.
    const feedback = ctx.state.feedbackSummary();
    if (feedback) stats.feedback = feedback;
    return { stats, rows: this.boundaryRows(values, t, policyStep), ...(unscored ? { unscored } : {}) };
  }

  /** Scores episodes rolled out at an earlier step (the deferred scorer); returns their rows and the time it took. */
  async score(u: Unscored): Promise<{ rows: ExperienceRow[]; seconds: number; samples: EpisodeSample[] }> {
    const t0 = performance.now();
    const out = await runNode(this.g.scorer, { episodes: u.records }, this.stepCtx(u.step));
    const rows = this.boundaryRows(new Map([[this.g.scorer.id, out]]), u.step, u.policyStep);
    return { rows, seconds: (performance.now() - t0) / 1000, samples: this.samples(u.step, out) };
  }

  /** The sample episodes of step t from the scorer's output. */
  private samples(t: number, out: PortValues): EpisodeSample[] {
    return stepSamples(t, this.ctx.plan.clock.steps, (out.scores ?? []) as ScoredEpisode[], this.ctx.tokenizer);
  }

  /** What the boundary edges carry into the replay buffer, as experience rows. */
  private boundaryRows(values: Values, step: number, policyStep: number): ExperienceRow[] {
    const rows: ExperienceRow[] = [];
    for (const e of this.g.boundary) {
      const [node, port] = e.from.split(".") as [string, string];
      const v = (values.get(node) as PortValues | undefined)?.[port];
      if (v === undefined) continue;
      if (node === this.g.scorer.id) rows.push(...scoredRows(v as ScoredEpisode[], step, policyStep, this.shape));
      else rows.push(...(v as ExperienceRow[]));
    }
    return rows;
  }
}

function scoredRows(scored: ScoredEpisode[], step: number, policyStep: number, shape: RowShape): ExperienceRow[] {
  const rows: ExperienceRow[] = [];
  for (const e of scored) {
    if (shape === "turn") rows.push(...turnRows(step, e, policyStep));
    else { const r = trajectoryRow(step, e, policyStep); if (r) rows.push(r); }
  }
  return rows;
}

const mean = (xs: number[]): number => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

function rolloutStats(step: number, policyStep: number, records: EpisodeRecord[], droppedFailed: number, adaptiveCap: number | null, time: RolloutStats["time"]): RolloutStats {
  let prompt = 0, response = 0;
  for (const r of records) for (const t of r.turns) { prompt += t.prompt.length; response += t.response.length; }
  return {
    step, policyStep, episodes: records.length,
    successRate: mean(records.map((r) => (r.won ? 1 : 0))),
    meanReward: mean(records.map((r) => r.reward)),
    horizon: mean(records.map((r) => r.spec.horizon)),
    prefix: mean(records.map((r) => r.spec.prefixActions.length)),
    expertLength: mean(records.map((r) => r.spec.expertLength)),
    studentTurns: mean(records.map((r) => r.spec.studentTurns)),
    turns: records.reduce((a, r) => a + r.turns.length, 0),
    invalidActions: records.reduce((a, r) => a + r.invalidActions, 0),
    admissibleRate: actionRates(records).admissibleRate,
    noExperience: records.filter((r) => r.replayFinished).length,
    droppedFailed, adaptiveCap, tokens: { prompt, response }, time,
  };
}
