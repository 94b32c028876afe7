/**
 * The importance-sampling loss, one definition (runtime/signals/losses.ts), against the shared
 * vectors test/vectors/importance-sampling.json that the worker (pytest) and Trinity-RFT
 * (test/trinity/is-vectors.test.ts) are checked against too; and the plan's clamp reaching the
 * embedded student.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_LOG_RATIO_CLAMP } from "../../plan/defaults.js";
import { tokenPolicyLoss } from "../../runtime/backends/embedded/policy-loss.js";
import { importanceSamplingLoss } from "../../runtime/signals/losses.js";

interface Case { name: string; clamp: number | null; lp: number[]; old: number[]; adv: number[]; loss: number[]; grad: number[] }
const vectors = JSON.parse(readFileSync(new URL("../vectors/importance-sampling.json", import.meta.url), "utf8")) as { schema: string; cases: Case[] };
const close = (a: number[], b: number[]) => a.forEach((x, i) => expect(x).toBeCloseTo(b[i]!, Math.max(0, 12 - Math.ceil(Math.log10(Math.abs(b[i]!) + 1)))));

describe("importance-sampling vectors (test/vectors/importance-sampling.json)", () => {
  it("hold cases inside the default clamp, beyond it, at its bounds, under a tighter clamp and without one", () => {
    expect(vectors.schema).toBe("tcod.is-vectors/1");
    expect(vectors.cases.map((c) => c.clamp)).toEqual([DEFAULT_LOG_RATIO_CLAMP, DEFAULT_LOG_RATIO_CLAMP, 2, null]);
    const ds = vectors.cases.flatMap((c) => c.lp.map((lp, i) => ({ d: lp - c.old[i]!, c: c.clamp })));
    expect(ds.some(({ d, c }) => c !== null && Math.abs(d) > c)).toBe(true); // clamped, gradient 0
    expect(ds.some(({ d, c }) => c !== null && Math.abs(d) === c)).toBe(true); // at the bound: gradient 0, as torch.clamp
  });

  it.each(vectors.cases.map((c) => [c.name, c] as const))("runtime/signals importanceSamplingLoss: %s", (_, c) => {
    const r = importanceSamplingLoss(Float64Array.from(c.lp), Float64Array.from(c.old), Float64Array.from(c.adv), { logRatioBound: c.clamp });
    close([...r.loss], c.loss);
    close([...r.grad], c.grad);
  });

  it.each(vectors.cases.map((c) => [c.name, c] as const))("the embedded student's token loss: %s", (_, c) => {
    const params = { fn: "importance_sampling" as const, clip: 0.2, clipRatioC: 3, logRatioClamp: c.clamp };
    const r = c.lp.map((lp, i) => tokenPolicyLoss(lp, c.old[i]!, c.adv[i]!, params));
    close(r.map((x) => x.loss), c.loss);
    close(r.map((x) => x.dLossDlp), c.grad);
  });
});

describe("the embedded student honours the plan's clamp (Update.logRatioClamp → train options)", () => {
  it("a token whose log-ratio is −25 trains at e^−20 under the default clamp and at e^−25 under a clamp of 30", async () => {
    const { createEmbedded } = await import("../../runtime/backends/embedded/index.js");
    const { TOY_VOCABULARY, TAGS } = await import("../embedded/fixtures.js");
    const env = createEmbedded({ kind: "embedded", smoothing: 0.1, features: 32 }, {
      vocabulary: TOY_VOCABULARY, agent: TAGS, seed: 5, student: { initScale: 0.3, precision: "float64" },
    });
    const tokens = env.tokenizer.encode("<action>go to kitchen</action>");
    const prompt = tokens.slice(0, 1), completion = tokens.slice(1);
    const [s] = await env.student.score([{ prompt, completion, temperature: 1 }]);
    const mask = tokens.map((_, i) => (i === 0 ? 0 : 1));
    const row = {
      tokens, mask, advantages: mask.map((m) => m), lossWeights: mask.map((m) => m / completion.length),
      oldLogprobs: [0, ...s!.logprobs.map((lp) => lp + 25)],
    };
    const at = (logRatioClamp?: number) =>
      env.student.lossAndGradient([row], { lossFn: "importance_sampling", clip: 0.2, ...(logRatioClamp !== undefined ? { logRatioClamp } : {}) }).loss;
    expect(at()).toBeCloseTo(-Math.exp(-DEFAULT_LOG_RATIO_CLAMP), 15);
    expect(at(30)).toBeCloseTo(-Math.exp(-25), 15);
  });
});
