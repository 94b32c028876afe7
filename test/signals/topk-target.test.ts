import { describe, expect, it } from "vitest";
import { SignalError, TOPK_TAIL_FLOOR, topkTargetDistribution } from "../../runtime/signals/index.js";

const total = (q: { logprobs: number[]; rest: number | null; tokens: number[] }, V: number) =>
  q.logprobs.reduce((a, lp) => a + Math.exp(lp), 0) + (q.rest === null ? 0 : (V - q.tokens.length) * Math.exp(q.rest));

describe("topkTargetDistribution", () => {
  it("keeps the listed log-probabilities and spreads the rest evenly over the unlisted tokens", () => {
    // V = 10; listed 0.5 and 0.25 (the sampled token is one of them): 0.25 left for 8 tokens.
    const q = topkTargetDistribution([{ token: 3, logprob: Math.log(0.5) }, { token: 7, logprob: Math.log(0.25) }], { token: 7, logprob: Math.log(0.25) }, 10);
    expect(q.tokens).toEqual([3, 7]);
    expect(q.logprobs.map(Math.exp)).toEqual([expect.closeTo(0.5, 12), expect.closeTo(0.25, 12)]);
    expect(Math.exp(q.rest!)).toBeCloseTo(0.25 / 8, 12);
    expect(total(q, 10)).toBeCloseTo(1, 12);
  });

  it("adds the sampled token when the top-k list leaves it out, and stands alone when the list is empty", () => {
    const q = topkTargetDistribution([{ token: 1, logprob: Math.log(0.6) }], { token: 4, logprob: Math.log(0.1) }, 5);
    expect(q.tokens).toEqual([1, 4]);
    expect(Math.exp(q.rest!)).toBeCloseTo(0.3 / 3, 12);
    const alone = topkTargetDistribution([], { token: 2, logprob: Math.log(0.2) }, 5);
    expect(alone.tokens).toEqual([2]);
    expect(Math.exp(alone.rest!)).toBeCloseTo(0.8 / 4, 12);
  });

  it("floors the tail and renormalises when the listed mass rounds to 1 or above; rest is null when every token is listed", () => {
    const over = topkTargetDistribution([{ token: 0, logprob: Math.log(0.7) }, { token: 1, logprob: Math.log(0.31) }], { token: 0, logprob: Math.log(0.7) }, 4);
    const z = 0.7 + 0.31 + TOPK_TAIL_FLOOR;
    expect(over.logprobs.map(Math.exp)).toEqual([expect.closeTo(0.7 / z, 12), expect.closeTo(0.31 / z, 12)]);
    expect(Math.exp(over.rest!)).toBeCloseTo(TOPK_TAIL_FLOOR / z / 2, 15);
    expect(total(over, 4)).toBeCloseTo(1, 12);
    const all = topkTargetDistribution([{ token: 0, logprob: Math.log(0.75) }, { token: 1, logprob: Math.log(0.25) }], { token: 1, logprob: Math.log(0.25) }, 2);
    expect(all.rest).toBeNull();
    expect(total(all, 2)).toBeCloseTo(1, 12);
  });

  it("rejects tokens outside the vocabulary and log-probabilities above 0", () => {
    expect(() => topkTargetDistribution([{ token: 9, logprob: -1 }], { token: 0, logprob: -1 }, 5)).toThrow(SignalError);
    expect(() => topkTargetDistribution([], { token: 0, logprob: 0.1 }, 5)).toThrow(/log-probability 0.1/);
    expect(() => topkTargetDistribution([], { token: 0, logprob: Number.NaN }, 5)).toThrow(/expected a number ≤ 0/);
  });
});
