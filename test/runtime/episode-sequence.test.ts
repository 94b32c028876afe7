import { describe, expect, it } from "vitest";
import type { NodeOf, Plan } from "../../plan/schema.js";
import type { ScoreRequest, ScoreResult } from "../../runtime/backends/backend.js";
import { episodeScoreRequest, turnsChain } from "../../runtime/episode-sequence.js";
import { runAdvantage } from "../../runtime/nodes/advantage.js";
import type { RunContext } from "../../runtime/nodes/context.js";
import { oldLogprobsSource, runTurnStats } from "../../runtime/nodes/turn-stats.js";
import { trajectoryRow, turnRows, type ScoredEpisode } from "../../runtime/replay.js";
import { runEpisode, type EpisodeSpec } from "../../runtime/rollout.js";
import { lossWeights } from "../../runtime/signals/aggregate.js";
import { grpoAdvantages } from "../../runtime/signals/grpo.js";
import type { AgentFormat } from "../../plan/schema.js";
import { CharTokenizer, CounterEnv, ScriptedStudent } from "./doubles.js";
import { TAGS_FORMAT } from "./plans.js";

const tok = new CharTokenizer();
const spec: EpisodeSpec = {
  index: 0, task: { id: "count-3", split: "train" }, group: 0, prefixActions: [], studentTurns: 8, capped: false,
  truncatedReward: 0, temperature: 1, seed: 1, horizon: 8, expertLength: 3,
};
async function record(format: AgentFormat) {
  const s = new ScriptedStudent();
  return runEpisode(new CounterEnv(), async (r) => (await s.sample([r]))[0]!, format, tok, spec, 0);
}

/** A causal scorer: the log-prob of token i depends on tokens 0..i only (a hash of the prefix). */
function causalScore(q: ScoreRequest): ScoreResult {
  const seq = [...q.prompt, ...q.completion];
  const lp = (i: number) => -(seq.slice(0, i + 1).reduce((h, t, j) => (h * 31 + t * (j + 1)) % 9973, 7) % 97) / 10 - 0.01;
  return { logprobs: q.completion.map((_, j) => lp(q.prompt.length + j)) };
}

describe("one token sequence per episode", () => {
  it("chains where memory accumulates, not with a window", async () => {
    expect(turnsChain((await record(TAGS_FORMAT)).turns)).toBe(true);
    expect(turnsChain((await record({ ...TAGS_FORMAT, memory: { kind: "window", turns: 1 } })).turns)).toBe(false);
    expect(turnsChain([])).toBe(false);
  });

  it("one score call over the episode, sliced, equals one call per turn", async () => {
    const turns = (await record(TAGS_FORMAT)).turns;
    expect(turns.length).toBeGreaterThan(1);
    const one = episodeScoreRequest(turns, { temperature: 1 });
    expect(one.request.prompt).toEqual(turns[0]!.prompt);
    const sliced = one.slice(causalScore(one.request));
    turns.forEach((t, i) => expect(sliced[i]!.logprobs).toEqual(causalScore({ prompt: t.prompt, completion: t.response, temperature: 1 }).logprobs));
    expect(() => one.slice({ logprobs: [0] })).toThrow(/tokenizer/);
  });

  it("per-turn rows and the trajectory row give the same advantages and loss weights on every student token", async () => {
    const rec = await record(TAGS_FORMAT);
    const teacher = rec.turns.map((t) => causalScore({ prompt: t.prompt, completion: t.response, temperature: 1 }).logprobs);
    const e: ScoredEpisode = { record: rec, teacher };
    const plan = { resources: { models: {}, agents: {} }, graph: { nodes: [], edges: [] } } as unknown as Plan;
    const ctx = { plan, state: { stepVars: () => ({}), atStep: (r: unknown) => (typeof r === "number" ? r : Number.NaN) } } as unknown as RunContext;
    const node = { id: "advantage", kind: "Advantage", params: { aggregate: { kind: "token_mean" }, terms: [
      { kind: "opd", coef: 0.7, estimator: "k1" }, { kind: "grpo", coef: 0.3 },
    ] } } as unknown as NodeOf<"Advantage">;
    const onMask = async (rows: ReturnType<typeof turnRows>) => {
      const batch = await runTurnStats(ctx, rows, 1);
      // the GroupAdvantage node's output (normalize: false), scaled by the grpo term's coefficient in Advantage
      const group = grpoAdvantages(batch.layout, batch.rewards, batch.groupOf, batch.episodeOfRow, { normalize: false, eps: 1e-6 });
      const adv = runAdvantage(node, ctx, batch, 1, undefined, group).advantages;
      const w = lossWeights(batch.layout, { kind: "token_mean" });
      const pick = (xs: Float64Array) => Array.from(xs).filter((_, i) => batch.layout.mask[i] === 1);
      return { adv: pick(adv), w: pick(w), kl: Array.from(batch.turns.vars["turn.kl"]!) };
    };
    const a = await onMask(turnRows(1, e, 0));
    const b = await onMask([trajectoryRow(1, e, 0)!]);
    expect(a.adv.length).toBe(rec.turns.reduce((n, t) => n + t.response.length, 0));
    expect(b.adv).toEqual(a.adv.map((x) => expect.closeTo(x, 12)));
    expect(b.w).toEqual(a.w.map((x) => expect.closeTo(x, 12)));
    expect(b.kl).toEqual(a.kl.map((x) => expect.closeTo(x, 12)));
  });

  it("old log-probs: trainer for served students, sampler for embedded, the plan's choice where given", () => {
    const plan = (kind: string, old?: string) => ({
      resources: { models: { s: { backend: { kind } } } },
      graph: { nodes: [{ kind: "Rollout", params: { student: "s" } }, { kind: "Update", params: old ? { oldLogprobs: old } : {} }] },
    }) as unknown as Plan;
    expect(oldLogprobsSource(plan("worker"))).toBe("trainer");
    expect(oldLogprobsSource(plan("openai"))).toBe("trainer");
    expect(oldLogprobsSource(plan("embedded"))).toBe("sampler");
    expect(oldLogprobsSource(plan("worker", "sampler"))).toBe("sampler");
  });

  it("old log-probs from the trainer replace the sampler's on every student token before the advantage", async () => {
    const rec = await record(TAGS_FORMAT);
    const e: ScoredEpisode = { record: rec, teacher: rec.turns.map((t) => t.response.map(() => -1)) };
    const plan = { resources: { models: { s: { backend: { kind: "worker" } } }, agents: {} },
      graph: { nodes: [{ kind: "Rollout", params: { student: "s" } }, { kind: "Update", params: {} }], edges: [] } } as unknown as Plan;
    const calls: ScoreRequest[][] = [];
    const student = { score: async (qs: ScoreRequest[]) => { calls.push(qs); return qs.map((q) => ({ logprobs: q.completion.map((_, j) => -0.5 - j / 1000) })); } };
    const ctx = { plan, student, studentLimit: <T>(f: () => Promise<T>) => f(), state: { stepVars: () => ({}) } } as unknown as RunContext;
    const row = trajectoryRow(1, e, 0)!;
    const batch = await runTurnStats(ctx, [row], 1);
    expect(calls).toHaveLength(1);
    const first = row.mask.indexOf(1);
    expect(calls[0]![0]!.prompt).toEqual(row.tokens.slice(0, first));
    row.mask.forEach((m, j) => expect(batch.logpStudent[j]).toBe(m === 1 ? -0.5 - (j - first) / 1000 : 0));
    expect(row.logprobs.some((x, j) => row.mask[j] === 1 && x !== batch.logpStudent[j])).toBe(true);
  });
});
