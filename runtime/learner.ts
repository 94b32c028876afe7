/**
 * The learner: runs the graph's learner nodes for training step u on the rows the staleness
 * pipeline hands it — TurnStats, TurnWeights / GroupAdvantage, Advantage, Update, WeightSync — and
 * returns the step's metrics row. WeightSync's policy becomes the weights the explorer samples with
 * (the clock edge into Rollout), and the synced step recorded on every sample.
 */
import type { ExperienceRow } from "./replay.js";
import type { TrainRowMetrics } from "./metrics.js";
import type { RunContext } from "./nodes/context.js";
import type { AdvantageData, PortData, StepContext } from "./nodes/executor.js";
import type { LearnerBatch } from "./nodes/turn-stats.js";
import { inputsOf, ready, runNode, type Latest, type RunGraph, type Values } from "./graph.js";
import type { RolloutStats } from "./explorer.js";

export class Learner {
  /** Set once the Update node of the current step has started: the weights may have changed. */
  mutated = false;

  constructor(
    private readonly g: RunGraph,
    private readonly ctx: RunContext,
    private readonly latest: Latest,
    private readonly stepCtx: (step: number) => StepContext,
  ) {}

  async learn(u: number, taken: { rows: ExperienceRow[]; dropped: number }, stats: RolloutStats): Promise<TrainRowMetrics> {
    const { g, ctx } = this;
    const sc = this.stepCtx(u);
    const values: Values = new Map();
    // The boundary edges deliver the buffer's rows: student rows on `scores`, demonstrations on `demos`.
    for (const e of g.boundary) {
      const [node, port] = e.from.split(".") as [string, string];
      const demos = e.to.endsWith(".demos");
      values.set(node, { ...values.get(node), [port]: taken.rows.filter((r) => !!r.demo === demos) });
    }
    const times = { advantage: 0, update: 0 };
    for (const n of g.learn) {
      const inputs = inputsOf(g, n, values, this.latest);
      if (!ready(n, inputs)) continue;
      if (n.kind === "Update") this.mutated = true;
      const t0 = performance.now();
      const out = await runNode(n, inputs, sc);
      times[n.kind === "Update" || n.kind === "WeightSync" ? "update" : "advantage"] += (performance.now() - t0) / 1000;
      values.set(n.id, out);
      this.latest.record(n.id, out);
    }
    const batch = values.get(g.turnStats.id)!.stats as LearnerBatch;
    const adv = values.get(g.advantage.id)!.advantages as AdvantageData;
    const upd = (values.get(g.update.id)!.weights as PortData["Weights"]).update!;
    const policy = values.get(g.sync.id)!.policy as PortData["Weights"];
    ctx.syncedStep = policy.step;
    return {
      kind: "train", step: u, policyStep: stats.policyStep, policyVersion: ctx.student.version(),
      episodes: stats.episodes, successRate: stats.successRate, meanReward: stats.meanReward,
      horizon: stats.horizon, prefix: stats.prefix, expertLength: stats.expertLength, studentTurns: stats.studentTurns, turns: stats.turns,
      invalidActions: stats.invalidActions, admissibleRate: stats.admissibleRate, noExperience: stats.noExperience, droppedFailed: stats.droppedFailed,
      droppedStale: taken.dropped,
      kl: klSummary(batch.turns.vars["turn.kl"]!, batch.turns.vars["turn.tokens"]!, batch.turns.vars["turn.index"]!),
      tokens: stats.tokens, coefs: adv.coefs,
      blendWeight: adv.aggregate?.kind === "progressive" ? adv.aggregate.weight : null,
      adaptiveCap: stats.adaptiveCap, ...demoNll(taken.rows, upd.selfScoredNll), ...(stats.feedback ? { feedback: stats.feedback } : {}), lr: upd.lr, loss: upd.loss, gradNorm: upd.gradNorm, updates: upd.updates,
      time: { ...stats.time, advantage: times.advantage, update: times.update },
    };
  }
}

/**
 * The SFT cross-entropy of the step's expert demonstrations: the mean of −log p over their response
 * tokens, under the student that scored them when they were built (their old log-probabilities), or,
 * for self-scored demonstrations (a worker), under the weights the update started from (`selfScoredNll`).
 * Only when the step trained on demonstrations (an `sft` term).
 */
export function demoNll(rows: readonly ExperienceRow[], selfScoredNll?: number): { demoNll?: number } {
  if (rows.some((r) => r.demo && r.selfScored)) return selfScoredNll !== undefined ? { demoNll: selfScoredNll } : {};
  let sum = 0, n = 0;
  for (const r of rows) if (r.demo) r.mask.forEach((m, i) => { if (m) { sum -= r.logprobs[i]!; n++; } });
  return n > 0 ? { demoNll: sum / n } : {};
}

/** Token-weighted mean KL, and the mean KL of the turns at each turn index (null where none). */
function klSummary(kl: Float64Array, tokens: Float64Array, index: Float64Array): TrainRowMetrics["kl"] {
  let sum = 0, n = 0;
  const by = new Map<number, { s: number; c: number }>();
  for (let u = 0; u < kl.length; u++) {
    sum += kl[u]! * tokens[u]!;
    n += tokens[u]!;
    const h = index[u]!;
    const e = by.get(h) ?? { s: 0, c: 0 };
    e.s += kl[u]!; e.c++;
    by.set(h, e);
  }
  const depth = by.size ? Math.max(...by.keys()) + 1 : 0;
  const perTurn = Array.from({ length: depth }, (_, h) => { const e = by.get(h); return e ? e.s / e.c : null; });
  return { mean: n > 0 ? sum / n : 0, perTurn };
}
