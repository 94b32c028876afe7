import { describe, expect, it } from "vitest";
import type { NodeOf } from "../../plan/schema.js";
import { runAdvantage, usesFull } from "../../runtime/nodes/advantage.js";
import { grpoAdvantages } from "../../runtime/signals/grpo.js";
import type { RunContext } from "../../runtime/nodes/context.js";
import { checkExactKlBackends } from "../../runtime/nodes/teacher-score.js";
import type { LearnerBatch } from "../../runtime/nodes/turn-stats.js";
import type { ExperienceRow } from "../../runtime/replay.js";

type Terms = NodeOf<"Advantage">["params"]["terms"];
const node = (terms: Terms): NodeOf<"Advantage"> => ({ id: "advantage", kind: "Advantage", params: { aggregate: { kind: "token_mean" }, terms } }) as NodeOf<"Advantage">;
const ctx = { state: { atStep: (ref: unknown) => (typeof ref === "number" ? ref : Number.NaN) } } as unknown as RunContext;

/** Two student rows (episodes 0 and 1, one group, turns 0 and 1) and one expert demonstration. */
function batch(): LearnerBatch {
  // row 0: [prompt, prompt, t, t]   row 1: [prompt, t, t, t]   row 2 (demo): [prompt, t, t]
  const mask = Float64Array.from([0, 0, 1, 1, 0, 1, 1, 1, 0, 1, 1]);
  const turnOf = Int32Array.from([-1, -1, 0, 0, -1, 1, 1, 1, -1, 2, 2]);
  const row = (n: number, demo = false) => ({ tokens: new Array<number>(n).fill(1), ...(demo ? { demo: true } : {}) }) as unknown as ExperienceRow;
  return {
    rows: [row(4), row(4), row(3, true)],
    layout: { rowStart: Int32Array.from([0, 4, 8, 11]), mask, turnOf },
    logpStudent: new Float64Array(11).fill(-1), logpTeacher: new Float64Array(11).fill(-2),
    episodeOfRow: Int32Array.from([0, 1, 2]), rewards: Float64Array.from([1, 0, 0]), groupOf: Int32Array.from([0, 0, 1]),
    turns: { n: 2, episodeOf: Int32Array.from([0, 1]), vars: {}, scalars: {} } as unknown as LearnerBatch["turns"],
    studentEpisodes: 2,
  };
}

describe("Advantage with the opd full estimator", () => {
  it("puts c × turn weight into exact-KL coefficients on student tokens only; grpo and sft advantages are unchanged beside it", () => {
    const full: Terms = [
      { kind: "opd", coef: 0.7, estimator: "full" },
      { kind: "grpo", coef: 0.3 },
      { kind: "sft", coef: 0.5 },
    ] as Terms;
    const weights = Float64Array.from([2, 0.5]);
    const b = batch();
    const group = grpoAdvantages(b.layout, b.rewards, b.groupOf, b.episodeOfRow, { normalize: true, eps: 1e-6 });
    const r = runAdvantage(node(full), ctx, b, 1, weights, group);
    expect(Array.from(r.klCoefs!)).toEqual([0, 0, 1.4, 1.4, 0, 0.35, 0.35, 0.35, 0, 0, 0].map((x) => expect.closeTo(x, 12)));
    const without = runAdvantage(node(full.slice(1)), ctx, batch(), 1, weights, group);
    expect(without.klCoefs).toBeUndefined();
    expect(Array.from(r.advantages)).toEqual(Array.from(without.advantages));
    expect(r.coefs).toEqual({ opd: 0.7, grpo: 0.3, sft: 0.5 });
    expect(usesFull(node(full))).toBe(true);
    expect(usesFull(node([{ kind: "opd", coef: 1, estimator: "k1" }] as Terms))).toBe(false);
    expect(usesFull(node([{ kind: "gkd", coef: 1, beta: 0.5 }] as Terms))).toBe(true);
  });

  it("k1 beside full: k1 is an advantage, full a KL coefficient", () => {
    const r = runAdvantage(node([{ kind: "opd", coef: 1, estimator: "k1" }, { kind: "opd", coef: 2, estimator: "full" }] as Terms), ctx, batch(), 1);
    expect(r.advantages[2]).toBeCloseTo(-1, 12); // c·(log p_T − log p_S) = −2 − (−1)
    expect(r.klCoefs![2]).toBe(2);
  });

  it("k1 with clip: each token's advantage c·(log p_T − log p_S) is clamped to [−clip, clip] (rllm's distill estimator)", () => {
    const b = batch();
    b.logpTeacher = Float64Array.from([0, 0, -9, -0.5, 0, -1, -3, -1.25, 0, -2, -2]); // student −1 everywhere
    const unclipped = runAdvantage(node([{ kind: "opd", coef: 2, estimator: "k1" }] as Terms), ctx, b, 1);
    expect(Array.from(unclipped.advantages)).toEqual([0, 0, -16, 1, 0, 0, -4, -0.5, 0, -2, -2]);
    const r = runAdvantage(node([{ kind: "opd", coef: 2, estimator: "k1", clip: 3 }] as Terms), ctx, b, 1);
    expect(Array.from(r.advantages)).toEqual([0, 0, -3, 1, 0, 0, -3, -0.5, 0, -2, -2]);
  });

  it("topk, like full, is a KL coefficient on student tokens, not an advantage", () => {
    const r = runAdvantage(node([{ kind: "opd", coef: 0.5, estimator: "topk" }] as Terms), ctx, batch(), 1);
    expect(Array.from(r.klCoefs!)).toEqual([0, 0, 0.5, 0.5, 0, 0.5, 0.5, 0.5, 0, 0, 0]);
    expect(Array.from(r.advantages).every((a) => a === 0)).toBe(true);
  });

  it("refuses backends without full distributions or exact-KL training, naming what is missing and what to use", () => {
    const yes = { fullDistributions: true, exactKlTargets: true };
    const run = (teacher: object, student: object, estimator: "full" | "topk") => () => checkExactKlBackends({ teacher, student } as unknown as RunContext, estimator);
    expect(run(yes, yes, "full")).not.toThrow();
    expect(run({}, yes, "full")).toThrow(/the teacher backend does not return full next-token distributions.*Use the embedded backend.*"k1"/);
    expect(run(yes, {}, "full")).toThrow(/the student backend does not train on exact-KL targets/);
    // topk builds its target from the top-k lists any teacher reports: only the student's side is checked.
    expect(run({}, yes, "topk")).not.toThrow();
    expect(run({}, {}, "topk")).toThrow(/the opd estimator "topk" cannot run here: the student backend does not train on exact-KL targets.*tcod worker/);
  });
});
