import { describe, expect, it } from "vitest";
import { tokenPolicyLoss, type PolicyLossParams } from "../../runtime/backends/embedded/policy-loss.js";

const IS: PolicyLossParams = { fn: "importance_sampling", clip: 0.2, clipRatioC: 3, logRatioClamp: 20 };
const PPO: PolicyLossParams = { fn: "ppo", clip: 0.2, clipRatioC: 3, logRatioClamp: 20 };

describe("tokenPolicyLoss", () => {
  it("importance sampling: −exp(lp − old)·A, hand-computed", () => {
    // ratio = exp(−1.0 − (−1.5)) = exp(0.5) = 1.6487212707
    const r = tokenPolicyLoss(-1.0, -1.5, 2, IS);
    expect(r.loss).toBeCloseTo(-3.2974425414, 9);
    expect(r.dLossDlp).toBeCloseTo(-3.2974425414, 9);
    // SFT: old = lp, A = 1 → loss −1, gradient −1 (cross-entropy's).
    expect(tokenPolicyLoss(-0.7, -0.7, 1, IS)).toEqual({ loss: -1, dLossDlp: -1 });
  });

  it("ppo: unclipped, clipped and dual-clipped cases, hand-computed", () => {
    // ratio 1.1 inside [0.8, 1.2]: loss −A·ratio
    const lr = Math.log(1.1);
    let r = tokenPolicyLoss(lr - 2, -2, 1.5, PPO);
    expect(r.loss).toBeCloseTo(-1.65, 12);
    expect(r.dLossDlp).toBeCloseTo(-1.65, 12);
    // ratio 1.5, A > 0: clipped at 1.2 → loss −1.2·A, no gradient
    r = tokenPolicyLoss(Math.log(1.5), 0, 2, PPO);
    expect(r.loss).toBeCloseTo(-2.4, 12);
    expect(r.dLossDlp).toBe(0);
    // ratio 0.5, A > 0: max(−0.5A, −0.8A) = −0.5A, gradient −A·ratio
    r = tokenPolicyLoss(Math.log(0.5), 0, 2, PPO);
    expect(r.loss).toBeCloseTo(-1.0, 12);
    expect(r.dLossDlp).toBeCloseTo(-1.0, 12);
    // ratio 2, A = −1: max(2, 1.2) = 2 < c·|A| = 3 → loss 2, gradient −A·ratio = 2
    r = tokenPolicyLoss(Math.log(2), 0, -1, PPO);
    expect(r.loss).toBeCloseTo(2, 12);
    expect(r.dLossDlp).toBeCloseTo(2, 12);
    // ratio 5, A = −1: dual clip caps the loss at 3, no gradient
    r = tokenPolicyLoss(Math.log(5), 0, -1, PPO);
    expect(r.loss).toBeCloseTo(3, 12);
    expect(r.dLossDlp).toBe(0);
    // log-ratio beyond ±20 is clamped: no gradient
    r = tokenPolicyLoss(-30, 0, -1, PPO);
    expect(r.loss).toBeCloseTo(-(-1) * 0.8, 12);
    expect(r.dLossDlp).toBe(0);
  });

  it("derivatives match central finite differences away from kinks", () => {
    for (const p of [IS, PPO]) {
      for (const [lp, old, a] of [[-1, -1.05, 0.7], [-2, -1.9, -1.3], [-0.3, -0.2, 2.5], [-1, -2.5, -0.4]] as const) {
        const h = 1e-6;
        const fd = (tokenPolicyLoss(lp + h, old, a, p).loss - tokenPolicyLoss(lp - h, old, a, p).loss) / (2 * h);
        expect(tokenPolicyLoss(lp, old, a, p).dLossDlp).toBeCloseTo(fd, 6);
      }
    }
  });
});
