import { tokenPolicyLoss } from "../../runtime/backends/embedded/policy-loss.js";
import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  aggregateLoss, importanceSamplingLoss, layoutFromRows, lossWeights, ppoLoss, ppoToken, sftAdvantages, sftNll,
} from "../../runtime/signals/index.js";

const f64 = (xs: number[]) => Float64Array.from(xs);

describe("importance sampling loss", () => {
  it("−exp(lp − old)·A and its derivative (equal to the loss)", () => {
    // lp − old = 0.5, A = 2: −2e^0.5 = −3.2974425414002564
    const { loss, grad } = importanceSamplingLoss(f64([-1]), f64([-1.5]), f64([2]));
    expect(loss[0]).toBeCloseTo(-3.2974425414002564, 14);
    expect(grad[0]).toBeCloseTo(-3.2974425414002564, 14);
  });
  it("Trinity clamps lp − old at ±20 (gradient 0 outside); Tinker (null) does not", () => {
    const t = importanceSamplingLoss(f64([0]), f64([-25]), f64([1]));
    expect(t.loss[0]).toBeCloseTo(-Math.exp(20), 0);
    expect(t.grad[0]).toBe(0);
    const k = importanceSamplingLoss(f64([0]), f64([-25]), f64([1]), { logRatioBound: null });
    expect(k.loss[0]).toBeCloseTo(-Math.exp(25), 0);
    expect(k.grad[0]).toBe(k.loss[0]);
  });
  it("masked tokens (A = 0) carry nothing, whatever their logprobs", () => {
    const { loss, grad } = importanceSamplingLoss(f64([NaN]), f64([NaN]), f64([0]));
    expect([loss[0], grad[0]]).toEqual([0, 0]);
  });
});

describe("PPO clipped surrogate with dual clip (ε = 0.2, c = 3)", () => {
  // One token per case: [lp − old, A] → [loss, d loss / d lp, clipped]
  const e = Math.exp;
  const cases: [number, number, number, number, number][] = [
    [0.1, 1, -e(0.1), -e(0.1), 0], //          inside the range: the IS loss
    [0.5, 1, -1.2, 0, 1], //                   A > 0, ratio 1.65 > 1.2: clipped at −1.2·A, no gradient
    [-0.5, 1, -e(-0.5), -e(-0.5), 0], //       A > 0, ratio 0.61 < 0.8: max picks the unclipped −0.61
    [-0.5, -1, 0.8, 0, 1], //                  A < 0, ratio 0.61: max(0.61, 0.8) = 0.8, clipped
    [1.0, -1, e(1), e(1), 0], //               A < 0, ratio 2.72 < c: unclipped 2.72
    [1.5, -1, 3, 0, 1], //                     A < 0, ratio 4.48 > c: dual clip at −A·c = 3
    [25, 1, -1.2, 0, 1], //                    log-ratio clamped at 20, then clipped
    [-25, 1, -e(-20), 0, 0], //                clamp at −20: ratio e^−20, no gradient through the clamp
    [25, -1, 3, 0, 1], //                      ratio e^20 with A < 0: dual clip
  ];
  it.each(cases)("lp − old = %d, A = %d", (d, A, l, g, clipped) => {
    const r = ppoLoss(f64([d - 1]), f64([-1]), f64([A]));
    expect(r.loss[0]).toBeCloseTo(l, 12);
    expect(r.grad[0]).toBeCloseTo(g, 12);
    expect(r.clipped[0]).toBe(clipped);
  });
  it("dual clip off: the A < 0 large-ratio case keeps max(ℓ₁, ℓ₂)", () => {
    const r = ppoLoss(f64([0.5]), f64([-1]), f64([-1]), { dualClip: null });
    expect(r.loss[0]).toBeCloseTo(e(1.5), 12);
  });
  it("asymmetric clip (ε_low = 0.2, ε_high = 0.28)", () => {
    const r = ppoLoss(f64([Math.log(1.5)]), f64([0]), f64([1]), { clipLow: 0.2, clipHigh: 0.28 });
    expect(r.loss[0]).toBeCloseTo(-1.28, 14);
  });
  it("equals the IS loss inside the clip range", () => {
    fc.assert(fc.property(fc.double({ min: Math.log(0.8) + 1e-9, max: Math.log(1.2) - 1e-9, noNaN: true }), fc.double({ min: -5, max: 5, noNaN: true }), fc.double({ min: -10, max: 0, noNaN: true }), (d, A, old) => {
      const p = ppoLoss(f64([old + d]), f64([old]), f64([A])), is = importanceSamplingLoss(f64([old + d]), f64([old]), f64([A]));
      expect(p.loss[0]).toBeCloseTo(is.loss[0]!, 12);
      expect(p.grad[0]).toBeCloseTo(is.grad[0]!, 12);
    }));
  });
  it("gradients agree with finite differences away from the kinks", () => {
    fc.assert(fc.property(fc.double({ min: -3, max: 3, noNaN: true }), fc.double({ min: -5, max: 5, noNaN: true }), (d, A) => {
      const kinks = [Math.log(0.8), Math.log(1.2), Math.log(3)];
      fc.pre(kinks.every((k) => Math.abs(d - k) > 1e-3) && A !== 0);
      const h = 1e-6, f = (x: number) => ppoLoss(f64([x]), f64([0]), f64([A])).loss[0]!;
      expect(ppoLoss(f64([d]), f64([0]), f64([A])).grad[0]).toBeCloseTo((f(d + h) - f(d - h)) / (2 * h), 5);
    }));
  });
  it("refuses a dual-clip constant ≤ 1", () => {
    expect(() => ppoLoss(f64([0]), f64([0]), f64([1]), { dualClip: 1 })).toThrow(/c > 1/);
  });
});

describe("SFT rows", () => {
  const layout = layoutFromRows([{ mask: [0, 1, 1] }]);
  it("advantage 1 on expert tokens, 0 on env tokens", () => {
    expect([...sftAdvantages(layout)]).toEqual([0, 1, 1]);
  });
  it("NLL with token-mean weights: (0.5 + 2)/2 = 1.25, gradient −w", () => {
    const w = lossWeights(layout, { kind: "token_mean" });
    const r = sftNll(layout, f64([NaN, -0.5, -2]), w);
    expect([...r.perToken]).toEqual([0, 0.5, 2]);
    expect(r.total).toBeCloseTo(1.25, 15);
    expect([...r.grad]).toEqual([0, -0.5, -0.5]);
    expect(aggregateLoss(w, r.perToken)).toBeCloseTo(r.total, 15);
  });
  it("the IS loss at ratio 1 with SFT advantages has the NLL's gradient", () => {
    const lp = f64([-9, -0.5, -2]);
    const is = importanceSamplingLoss(lp, lp, sftAdvantages(layout));
    expect([...is.grad]).toEqual([0, -1, -1]); // d(−log p)/d log p = −1 on expert tokens
  });
  it("rejects positive logprobs", () => {
    expect(() => sftNll(layout, f64([0, 0.1, -1]), f64([0, 0.5, 0.5]))).toThrow(/token 1/);
  });

  it("PPO sub-gradients are torch's at the bounds (values from torch 2.15 autograd)", () => {
    // lp − old = 20, the log-ratio clamp's bound: torch.clamp passes no gradient there.
    expect(ppoToken(20, -1, 0.2, 0.2, null)).toMatchObject({ loss: Math.exp(20), grad: 0 });
    // ε = 0 and ratio 1: ℓ₁ = ℓ₂ = −A, a tie; ℓ₂'s clamp is at its bound (no gradient), so
    // torch.maximum gives half of ℓ₁'s: −A·ratio / 2 = −1.
    expect(ppoToken(0, 2, 0, 0, null)).toMatchObject({ loss: -2, grad: -1 });
    // Strictly inside the clip range both branches agree: the full gradient.
    expect(ppoToken(0, -1, 0.2, 0.2, null)).toMatchObject({ loss: 1, grad: 1 });
    // The embedded student's PPO is the same definition.
    expect(tokenPolicyLoss(0, 0, 2, { fn: "ppo", clip: 0, clipRatioC: 3, logRatioClamp: 20 })).toEqual({ loss: -2, dLossDlp: -1 });
  });
});
