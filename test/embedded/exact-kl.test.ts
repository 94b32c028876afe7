import { describe, expect, it } from "vitest";
import type { TokenDistribution, TrainRow } from "../../runtime/backends/backend.js";
import { createEmbedded } from "../../runtime/backends/embedded/index.js";
import { exactReverseKl } from "../../runtime/backends/embedded/exact-kl.js";
import { sfc32 } from "../../runtime/backends/embedded/prng.js";
import { TAGS, TOY_TURN, TOY_VOCABULARY } from "./fixtures.js";

const logSumExp = (z: number[]) => { const m = Math.max(...z); return m + Math.log(z.reduce((s, x) => s + Math.exp(x - m), 0)); };

describe("exact reverse KL (opd full estimator)", () => {
  it("hand-computed on a 3-token vocabulary: p = (1/4, 1/2, 1/4), q = (1/2, 1/4, 1/4)", () => {
    const z = [0, Math.log(2), 0];
    const logq = [Math.log(0.5), Math.log(0.25), Math.log(0.25)];
    const grad = new Float64Array(3);
    const kl = exactReverseKl(z, logSumExp(z), logq, grad, 2);
    // KL = 1/4·ln(1/2) + 1/2·ln 2 + 1/4·0 = ln 2 / 4
    expect(kl).toBeCloseTo(Math.LN2 / 4, 14);
    // ∂KL/∂z_k = p_k(log p_k − log q_k − KL): (−5/16, 3/8, −1/16)·ln 2, times coef 2
    expect(grad[0]).toBeCloseTo(2 * -0.3125 * Math.LN2, 14);
    expect(grad[1]).toBeCloseTo(2 * 0.375 * Math.LN2, 14);
    expect(grad[2]).toBeCloseTo(2 * -0.0625 * Math.LN2, 14);
  });

  it("is 0 with a zero gradient when p = q, and its gradient matches finite differences", () => {
    const rnd = sfc32(3);
    const z = Array.from({ length: 7 }, () => 3 * rnd() - 1.5);
    const same = z.map((x) => x - logSumExp(z));
    const g0 = new Float64Array(7);
    expect(Math.abs(exactReverseKl(z, logSumExp(z), same, g0))).toBeLessThan(1e-15);
    expect(Math.max(...g0.map(Math.abs))).toBeLessThan(1e-15);
    const qz = Array.from({ length: 7 }, () => 4 * rnd() - 2);
    const logq = qz.map((x) => x - logSumExp(qz));
    const f = (zz: number[]) => exactReverseKl(zz, logSumExp(zz), logq);
    const grad = new Float64Array(7);
    exactReverseKl(z, logSumExp(z), logq, grad);
    const h = 1e-6;
    for (let k = 0; k < 7; k++) {
      const up = z.slice(), down = z.slice();
      up[k]! += h; down[k]! -= h;
      expect((f(up) - f(down)) / (2 * h)).toBeCloseTo(grad[k]!, 8);
    }
  });
});

function make(features = 32) {
  return createEmbedded({ kind: "embedded", smoothing: 0.1, features }, {
    vocabulary: TOY_VOCABULARY, agent: TAGS, seed: 5, student: { initScale: 0.3, precision: "float64" },
  });
}

function toyPrompt(tok: ReturnType<typeof make>["tokenizer"]): number[] {
  return [...tok.renderSystem(TAGS.system), ...tok.renderUser(`Task: ${TOY_TURN.task}\nObservation: ${TOY_TURN.observation}`), ...tok.assistantPrefix()];
}

/** Rows of sampled responses with the oracle's full distributions and random KL coefficients and advantages. */
async function klRows(env: ReturnType<typeof make>, n: number, withAdvantages: boolean): Promise<TrainRow[]> {
  const { student, teacher, tokenizer } = env;
  const prompt = toyPrompt(tokenizer);
  const rnd = sfc32(11);
  const responses = [teacher.responseTokens("go to kitchen"), teacher.responseTokens("look"),
    ...(await student.sample(Array.from({ length: n - 2 }, (_, i) => ({ prompt, maxTokens: 6, temperature: 1, seed: 100 + i })))).map((s) => s.tokens)];
  const scored = await teacher.score(responses.map((completion) => ({ prompt, completion, temperature: 1, context: TOY_TURN, full: true })));
  const own = await student.score(responses.map((completion) => ({ prompt, completion, temperature: 1 })));
  const total = responses.reduce((s, r) => s + r.length, 0);
  const pad = prompt.map(() => 0);
  return responses.map((r, i) => ({
    tokens: [...prompt, ...r],
    mask: [...pad, ...r.map(() => 1)],
    advantages: [...pad, ...r.map(() => (withAdvantages ? 2 * rnd() - 1 : 0))],
    oldLogprobs: [...pad, ...own[i]!.logprobs],
    lossWeights: [...pad, ...r.map(() => 1 / total)],
    klCoefs: [...pad, ...r.map(() => 0.5 + rnd())],
    teacherDistributions: [...prompt.map(() => null), ...scored[i]!.distributions!],
  }));
}

describe("embedded student: exact-KL targets", () => {
  for (const withAdvantages of [false, true]) {
    it(`gradient matches central finite differences (${withAdvantages ? "KL beside a policy term" : "KL alone"})`, async () => {
      const env = make();
      const { student, tokenizer } = env;
      const rows = await klRows(env, 5, withAdvantages);
      expect(rows.some((r) => r.teacherDistributions!.some((d, t) => d === null && r.mask[t] === 1))).toBe(true);
      const opt = { lossFn: "importance_sampling" as const, clip: 0.2 };
      const lg = student.lossAndGradient(rows, opt);
      expect(lg.loss).toBeGreaterThan(0);
      const V = tokenizer.vocabSize, h = 1e-6;
      const check = (arr: Float64Array, i: number, analytic: number) => {
        const keep = arr[i]!;
        arr[i] = keep + h; const up = student.lossAndGradient(rows, opt).loss;
        arr[i] = keep - h; const down = student.lossAndGradient(rows, opt).loss;
        arr[i] = keep;
        expect(Math.abs((up - down) / (2 * h) - analytic)).toBeLessThan(1e-7 + 1e-5 * Math.abs(analytic));
      };
      let checked = 0;
      for (const [r, g] of lg.rows) {
        let best = 0;
        for (let k = 1; k < V; k++) if (Math.abs(g[k]!) > Math.abs(g[best]!)) best = k;
        for (const k of [best, (best * 7 + 3) % V]) check(student.W as Float64Array, r * V + k, g[k]!);
        if (++checked === 6) break;
      }
      for (const k of [0, tokenizer.endOfResponse, rows[0]!.tokens[rows[0]!.mask.indexOf(1)]!]) check(student.b, k, lg.bias[k]!);
      expect(checked).toBe(6);
    });
  }

  it("the loss is Σ w·c·KL, hand-assembled from the student's own distribution and the teacher's", async () => {
    const env = make();
    const { student, tokenizer } = env;
    const [row] = await klRows(env, 3, false);
    const first = row!.mask.indexOf(1);
    const prompt = row!.tokens.slice(0, first), completion = row!.tokens.slice(first);
    const [s] = await student.score([{ prompt, completion, temperature: 1, topk: tokenizer.vocabSize }]);
    let want = 0;
    completion.forEach((_, j) => {
      const q = row!.teacherDistributions![first + j];
      if (!q) return;
      const logq = new Float64Array(tokenizer.vocabSize).fill(q.rest!);
      q.tokens.forEach((t, i) => { logq[t] = q.logprobs[i]!; });
      const kl = s!.topk![j]!.reduce((acc, { token, logprob }) => acc + Math.exp(logprob) * (logprob - logq[token]!), 0);
      want += row!.lossWeights[first + j]! * row!.klCoefs![first + j]! * kl;
    });
    expect(student.lossAndGradient([row!], { lossFn: "importance_sampling", clip: 0.2 }).loss).toBeCloseTo(want, 10);
  });

  it("refuses distributions that are not normalised, name unknown tokens, or come without coefficients", async () => {
    const env = make();
    const [row] = await klRows(env, 3, false);
    const at = row!.mask.indexOf(1);
    const bad = (d: TokenDistribution) => ({ ...row!, teacherDistributions: row!.teacherDistributions!.map((x, t) => (t === at ? d : x)) });
    const opt = { lossFn: "importance_sampling" as const, clip: 0.2 };
    expect(() => env.student.lossAndGradient([bad({ tokens: [0], logprobs: [0], rest: -1 })], opt)).toThrow(/sums to .* not 1/);
    expect(() => env.student.lossAndGradient([bad({ tokens: [99999], logprobs: [-1], rest: -50 })], opt)).toThrow(/token 99999/);
    expect(() => env.student.lossAndGradient([bad({ tokens: [1], logprobs: [0], rest: null })], opt)).toThrow(/no rest/);
    const { klCoefs: _, ...noCoefs } = row!;
    expect(() => env.student.lossAndGradient([noCoefs], opt)).toThrow(/klCoefs and teacherDistributions come together/);
  });

  it("training on exact KL alone makes the oracle's optimal response the student's greedy reply", async () => {
    const { student, teacher, tokenizer } = createEmbedded({ kind: "embedded", smoothing: 0.1, features: 64 }, { vocabulary: TOY_VOCABULARY, agent: TAGS, seed: 5 });
    const prompt = toyPrompt(tokenizer);
    const before = (await student.score([{ prompt, completion: teacher.responseTokens("go to kitchen"), temperature: 1 }]))[0]!.logprobs.reduce((a, b) => a + b, 0);
    for (let step = 0; step < 40; step++) {
      const samples = await student.sample([0, 1, 2, 3].map((i) => ({ prompt, maxTokens: 8, temperature: 1, seed: step * 10 + i })));
      const scored = await teacher.score(samples.map((s) => ({ prompt, completion: s.tokens, temperature: 1, context: TOY_TURN, full: true })));
      const total = samples.reduce((s, x) => s + x.tokens.length, 0);
      const pad = prompt.map(() => 0);
      await student.train(samples.map((s, i) => ({
        tokens: [...prompt, ...s.tokens], mask: [...pad, ...s.tokens.map(() => 1)], advantages: [...pad, ...s.tokens.map(() => 0)],
        oldLogprobs: [...pad, ...s.logprobs], lossWeights: [...pad, ...s.tokens.map(() => 1 / total)],
        klCoefs: [...pad, ...s.tokens.map(() => 1)], teacherDistributions: [...prompt.map(() => null), ...scored[i]!.distributions!],
      })), { lr: 0.1, lossFn: "importance_sampling", clip: 0.2, gradClip: 1, eps: 1e-6 });
    }
    const [greedy] = await student.sample([{ prompt, maxTokens: 12, temperature: 0, seed: 0 }]);
    expect(tokenizer.decode(greedy!.tokens)).toBe(tokenizer.decode(teacher.responseTokens("go to kitchen")));
    const after = (await student.score([{ prompt, completion: teacher.responseTokens("go to kitchen"), temperature: 1 }]))[0]!.logprobs.reduce((a, b) => a + b, 0);
    expect(after).toBeGreaterThan(before + 5);
  });
});

describe("forward KL (the gkd loss's β part of the exact-KL targets)", () => {
  it("hand-computed on 3 tokens and matches finite differences; its gradient does not vanish where p ≈ 0", async () => {
    const { exactForwardKl } = await import("../../runtime/backends/embedded/exact-kl.js");
    const z = [0, Math.log(2), 0];
    const logq = [Math.log(0.5), Math.log(0.25), Math.log(0.25)];
    const grad = new Float64Array(3);
    // KL(q ‖ p) = 1/2·ln 2 + 1/4·ln(1/2) + 0 = ln 2 / 4; ∂/∂z = p − q = (−1/4, 1/4, 0)
    expect(exactForwardKl(z, logSumExp(z), logq, grad)).toBeCloseTo(Math.LN2 / 4, 14);
    expect(Array.from(grad)).toEqual([expect.closeTo(-0.25, 14), expect.closeTo(0.25, 14), expect.closeTo(0, 14)]);
    const far = [-30, 0, 0];
    const g = new Float64Array(3), r = new Float64Array(3);
    exactForwardKl(far, logSumExp(far), logq, g);
    exactReverseKl(far, logSumExp(far), logq, r);
    expect(g[0]).toBeCloseTo(-0.5, 6);
    expect(Math.abs(r[0]!)).toBeLessThan(1e-11);
  });

  it("gkd rows: forwardKlCoefs add c·β·KL(q ‖ p); β = 0 is the reverse KL, β = 1 the forward KL, in between the blend (loss and gradient)", async () => {
    const losses: number[] = [];
    const biases: Float64Array[] = [];
    const env = createEmbedded({ kind: "embedded", smoothing: 0.1, features: 32 }, {
      vocabulary: TOY_VOCABULARY, agent: TAGS, seed: 5, student: { initScale: 0.3, precision: "float64" },
    });
    const base = await klRows(env, 4, false);
    for (const beta of [0, 1, 0.3]) {
      const rows = base.map((r) => ({ ...r, klCoefs: r.klCoefs!.map((c) => (1 - beta) * c), forwardKlCoefs: r.klCoefs!.map((c) => beta * c) }));
      const lg = env.student.lossAndGradient(rows, { lossFn: "importance_sampling", clip: 0.2 });
      losses.push(lg.loss); biases.push(lg.bias);
    }
    expect(losses[0]).toBeCloseTo(env.student.lossAndGradient(base, { lossFn: "importance_sampling", clip: 0.2 }).loss, 12);
    expect(losses[0]).not.toBeCloseTo(losses[1]!, 3);
    expect(losses[2]).toBeCloseTo(0.7 * losses[0]! + 0.3 * losses[1]!, 10);
    biases[2]!.forEach((g, k) => expect(g).toBeCloseTo(0.7 * biases[0]![k]! + 0.3 * biases[1]![k]!, 10));
    // Forward coefficients need the exact-KL targets beside them.
    const { klCoefs: _k, teacherDistributions: _d, ...bare } = base[0]!;
    await expect(env.student.train([{ ...bare, forwardKlCoefs: bare.mask.map(() => 1) }], { lr: 0.1, lossFn: "importance_sampling", clip: 0.2, gradClip: 0 }))
      .rejects.toThrow(/forwardKlCoefs come with klCoefs/);
  });

  it("gkd rows: the forward-KL gradient matches central finite differences", async () => {
    const env = createEmbedded({ kind: "embedded", smoothing: 0.1, features: 32 }, {
      vocabulary: TOY_VOCABULARY, agent: TAGS, seed: 7, student: { initScale: 0.3, precision: "float64" },
    });
    const rows = (await klRows(env, 4, true)).map((r) => ({ ...r, forwardKlCoefs: r.klCoefs!.map((c) => 0.5 * c) }));
    const opt = { lossFn: "importance_sampling" as const, clip: 0.2 };
    const lg = env.student.lossAndGradient(rows, opt);
    const h = 1e-6;
    for (const k of [0, 3, 9]) {
      const b0 = env.student.b[k]!;
      env.student.b[k] = b0 + h; const up = env.student.lossAndGradient(rows, opt).loss;
      env.student.b[k] = b0 - h; const down = env.student.lossAndGradient(rows, opt).loss;
      env.student.b[k] = b0;
      expect(lg.bias[k]).toBeCloseTo((up - down) / (2 * h), 6);
    }
  });
});
