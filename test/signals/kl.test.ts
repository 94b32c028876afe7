import { describe, expect, it } from "vitest";
import fc from "fast-check";
import {
  SignalError, fullEntropy, fullReverseKl, fullReverseKlGrad, fullReverseKlRows, klEstimate, logSoftmax,
  surprisal, tokenKl, topKEntropy,
} from "../../runtime/signals/index.js";

const f64 = (xs: number[]) => Float64Array.from(xs);
const LN2 = Math.log(2);

describe("sampled-token estimators", () => {
  // log p_S = −0.5, log p_T = −1.5: d = 1; r = p_T/p_S = e^−1.
  it("k1 = log p_S − log p_T", () => expect(klEstimate(-0.5, -1.5, "k1")).toBe(1));
  it("k2 = ½ d²", () => expect(klEstimate(-0.5, -1.5, "k2")).toBe(0.5));
  it("k3 = (r − 1) − log r", () => {
    // (e^−1 − 1) − (−1) = e^−1 = 0.36787944117144233
    expect(klEstimate(-0.5, -1.5, "k3")).toBeCloseTo(0.36787944117144233, 15);
    // teacher more confident than the student: d = −1, r = e: (e − 1) − 1 = 0.7182818284590451
    expect(klEstimate(-1.5, -0.5, "k3")).toBeCloseTo(0.7182818284590451, 15);
  });
  it("tokenKl zeroes masked positions and does not read them", () => {
    const kl = tokenKl(f64([-0.5, NaN, -2]), f64([-1.5, NaN, -1]), f64([1, 0, 1]));
    expect([...kl]).toEqual([1, 0, -1]);
  });
  it("tokenKl rejects a non-finite logprob on a student token", () => {
    expect(() => tokenKl(f64([-0.5, -Infinity]), f64([-1, -1]), f64([1, 1]))).toThrow(/token 1 .* must be finite/);
  });
  it("tokenKl rejects mismatched lengths", () => {
    expect(() => tokenKl(f64([-0.5]), f64([-1, -1]))).toThrow(SignalError);
  });
  it("k2 and k3 are never negative; k1 averages to the true KL under p_S", () => {
    fc.assert(fc.property(fc.double({ min: -20, max: 0, noNaN: true }), fc.double({ min: -20, max: 0, noNaN: true }), (s, t) =>
      klEstimate(s, t, "k2") >= 0 && klEstimate(s, t, "k3") >= -1e-15));
    // Exact expectation over a 2-token vocabulary: Σ p_S(x)·k1(x) = KL.
    const ls = logSoftmax(f64([0.3, -1.2])), lt = logSoftmax(f64([-0.4, 0.9]));
    const expectation = Math.exp(ls[0]!) * klEstimate(ls[0]!, lt[0]!) + Math.exp(ls[1]!) * klEstimate(ls[1]!, lt[1]!);
    expect(expectation).toBeCloseTo(fullReverseKl(ls, lt, "logprobs"), 14);
  });
  it("surprisal is −log p on student tokens", () => {
    expect([...surprisal(f64([-0.25, -3, -1]), f64([1, 0, 1]))]).toEqual([0.25, 0, 1]);
  });
});

describe("full-vocabulary reverse KL and entropy", () => {
  // p_S = (½, ½) from logits (0, 0); p_T = (¼, ¾):
  // KL = ½ ln(½/¼) + ½ ln(½/¾) = ½ ln(4/3) = 0.14384103622589045
  const s = f64([0, 0]), t = f64([Math.log(0.25), Math.log(0.75)]);
  it("matches the hand value from logits and from logprobs", () => {
    expect(fullReverseKl(s, t, "logits")).toBeCloseTo(0.14384103622589045, 15);
    expect(fullReverseKl(f64([Math.log(0.5), Math.log(0.5)]), t, "logprobs")).toBeCloseTo(0.14384103622589045, 15);
  });
  it("is invariant to shifting logits and 0 for equal distributions", () => {
    expect(fullReverseKl(f64([100, 100]), f64([Math.log(0.25) + 7, Math.log(0.75) + 7]))).toBeCloseTo(0.14384103622589045, 12);
    expect(fullReverseKl(f64([1, 2, 3]), f64([11, 12, 13]))).toBeCloseTo(0, 14);
  });
  it("gradient w.r.t. student logits: p_S·(log p_S − log p_T − KL)", () => {
    // i=0: ½(ln 2 − 0.14384103622589045) = 0.27465307216702745; i=1 the negative.
    const g = fullReverseKlGrad(s, t, "logprobs");
    expect(g[0]).toBeCloseTo(0.27465307216702745, 14);
    expect(g[1]).toBeCloseTo(-0.27465307216702745, 14);
  });
  it("gradient agrees with central finite differences", () => {
    const z = f64([0.2, -0.7, 1.1]), tl = f64([0.5, 0.1, -0.3]);
    const g = fullReverseKlGrad(z, tl);
    for (let i = 0; i < 3; i++) {
      const h = 1e-6, up = z.slice(), dn = z.slice();
      up[i]! += h; dn[i]! -= h;
      expect(g[i]).toBeCloseTo((fullReverseKl(up, tl) - fullReverseKl(dn, tl)) / (2 * h), 8);
    }
  });
  it("entropy: uniform over 4 is ln 4; a point mass is 0", () => {
    expect(fullEntropy(f64([0, 0, 0, 0]))).toBeCloseTo(1.3862943611198906, 15);
    expect(fullEntropy(f64([0, -Infinity, -Infinity]), "logprobs")).toBe(0);
  });
  it("row version over a [positions × vocab] matrix with a mask", () => {
    const S = f64([0, 0, /* pos 1 */ 5, 5, /* pos 2 */ 0, 0]);
    const T = f64([Math.log(0.25), Math.log(0.75), 0, 0, 9, 9]);
    const kl = fullReverseKlRows(S, T, 2, "logits", f64([1, 1, 0]));
    expect(kl[0]).toBeCloseTo(0.14384103622589045, 14);
    expect(kl[1]).toBeCloseTo(0, 14);
    expect(kl[2]).toBe(0);
    expect(() => fullReverseKlRows(f64([0, 0, 0]), f64([0, 0, 0]), 2)).toThrow(/vocab = 2/);
  });
});

describe("top-k", () => {
  const S = [{ token: 1, logprob: Math.log(0.5) }, { token: 2, logprob: Math.log(0.25) }];
  const T = [{ token: 1, logprob: Math.log(0.25) }, { token: 3, logprob: Math.log(0.5) }];
  it("entropy with the tail lumped: p = (½, ¼, rest ¼) → 1.5 ln 2", () => {
    expect(topKEntropy(S)).toBeCloseTo(1.5 * LN2, 15);
  });
  it("entropy renormalised: (⅔, ⅓) → 0.6365141682948128", () => {
    expect(topKEntropy(S, "renormalise")).toBeCloseTo(0.6365141682948128, 15);
  });
  it("with a complete list, the lumped top-k entropy equals the exact entropy", () => {
    fc.assert(fc.property(fc.array(fc.double({ min: -5, max: 5, noNaN: true }), { minLength: 2, maxLength: 6 }), (zs) => {
      const ls = logSoftmax(f64(zs));
      expect(topKEntropy([...ls].map((logprob, token) => ({ token, logprob })))).toBeCloseTo(fullEntropy(ls, "logprobs"), 9);
    }));
  });
  it("rejects malformed lists", () => {
    expect(() => topKEntropy([])).toThrow(/empty/);
    expect(() => topKEntropy([{ token: 1, logprob: 0.5 }])).toThrow(/≤ 0/);
    expect(() => topKEntropy([{ token: 1, logprob: -1 }, { token: 1, logprob: -2 }])).toThrow(/twice/);
  });
});

