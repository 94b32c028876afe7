import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { TrainRow } from "../../runtime/backends/backend.js";
import { createEmbedded, type EmbeddedStudentOptions } from "../../runtime/backends/embedded/index.js";
import { agentFormat, TAGS, TOY_TURN, TOY_VOCABULARY } from "./fixtures.js";
import { sfc32 } from "../../runtime/backends/embedded/prng.js";

function make(student: Partial<EmbeddedStudentOptions> = {}, features = 64) {
  return createEmbedded({ kind: "embedded", smoothing: 0.1, features }, { vocabulary: TOY_VOCABULARY, agent: TAGS, seed: 7, student });
}

function toyPrompt(tok: ReturnType<typeof make>["tokenizer"]): number[] {
  return [
    ...tok.renderSystem(TAGS.system),
    ...tok.renderUser(`Task: ${TOY_TURN.task}\nObservation: ${TOY_TURN.observation}`),
    ...tok.assistantPrefix(),
  ];
}

const dirs: string[] = [];
afterAll(async () => { for (const d of dirs) await rm(d, { recursive: true, force: true }); });

describe("embedded student: sampling and scoring", () => {
  it("samples deterministically per seed, and differently across seeds", async () => {
    const { student, tokenizer } = make({ initScale: 0.5 });
    const prompt = toyPrompt(tokenizer);
    const req = (seed: number) => ({ prompt, maxTokens: 12, temperature: 1, seed });
    const a = await student.sample([req(1), req(2), req(3)]);
    const b = await student.sample([req(1), req(2), req(3)]);
    expect(b).toEqual(a);
    expect(new Set(a.map((r) => r.tokens.join(","))).size).toBe(3);
    const other = make({ initScale: 0.5 }).student;
    expect(await other.sample([req(1)])).toEqual([a[0]]);
  });

  it("scores its own samples with the same log-probabilities, at several temperatures", async () => {
    const { student, tokenizer } = make({ initScale: 0.5 });
    const prompt = toyPrompt(tokenizer);
    for (const temperature of [1, 0.7, 1.5, 0]) {
      const samples = await student.sample([11, 12, 13].map((seed) => ({ prompt, maxTokens: 10, temperature, seed })));
      const scores = await student.score(samples.map((s) => ({ prompt, completion: s.tokens, temperature })));
      samples.forEach((s, i) => expect(scores[i]!.logprobs).toEqual(s.logprobs));
    }
  });

  it("greedy sampling (temperature 0) ignores the seed", async () => {
    const { student, tokenizer } = make({ initScale: 0.5 });
    const prompt = toyPrompt(tokenizer);
    const [a, b] = await student.sample([1, 2].map((seed) => ({ prompt, maxTokens: 8, temperature: 0, seed })));
    expect(a!.tokens).toEqual(b!.tokens);
  });

  it("reports the exact entropy and a consistent top-k of the full distribution", async () => {
    const { student, tokenizer } = make({ initScale: 0.5 });
    const prompt = toyPrompt(tokenizer);
    const completion = tokenizer.encode("<action>look</action>");
    const [r] = await student.score([{ prompt, completion, temperature: 1, topk: tokenizer.vocabSize }]);
    r!.topk!.forEach((dist, i) => {
      const total = dist.reduce((s, d) => s + Math.exp(d.logprob), 0);
      expect(total).toBeCloseTo(1, 12);
      expect(r!.entropy![i]).toBeCloseTo(-dist.reduce((s, d) => s + Math.exp(d.logprob) * d.logprob, 0), 12);
      expect(dist.find((d) => d.token === completion[i])!.logprob).toBe(r!.logprobs[i]);
      for (let j = 1; j < dist.length; j++) expect(dist[j]!.logprob).toBeLessThanOrEqual(dist[j - 1]!.logprob);
    });
  });

  it("stops on the end-of-response token and reports why it stopped", async () => {
    const { student, tokenizer } = make();
    const prompt = toyPrompt(tokenizer);
    const results = await student.sample(Array.from({ length: 200 }, (_, seed) => ({ prompt, maxTokens: 3, temperature: 1, seed })));
    for (const r of results) {
      const last = r.tokens[r.tokens.length - 1]!;
      expect(r.finishReason).toBe(tokenizer.stopTokens.includes(last) ? "stop" : "length");
      if (r.finishReason === "length") expect(r.tokens).toHaveLength(3);
    }
  });

  it("rejects token ids outside the vocabulary with a message naming the request", async () => {
    const { student } = make();
    await expect(student.score([{ prompt: [0], completion: [99999], temperature: 1 }])).rejects.toThrow(/score request 0: completion\[0\] = 99999/);
  });
});

/** Rows over the toy prompt: random completions, advantages, old logprobs near the current ones. */
async function randomRows(student: ReturnType<typeof make>["student"], prompt: number[], seed: number, n: number): Promise<TrainRow[]> {
  const rnd = sfc32(seed);
  const samples = await student.sample(Array.from({ length: n }, (_, i) => ({ prompt, maxTokens: 6, temperature: 1, seed: seed * 100 + i })));
  const total = samples.reduce((s, x) => s + x.tokens.length, 0);
  return samples.map((s) => {
    const pad = prompt.map(() => 0);
    return {
      tokens: [...prompt, ...s.tokens],
      mask: [...pad, ...s.tokens.map(() => 1)],
      advantages: [...pad, ...s.tokens.map(() => 4 * rnd() - 2)],
      oldLogprobs: [...pad, ...s.logprobs.map((lp) => lp + 0.3 * (rnd() - 0.5))],
      lossWeights: [...pad, ...s.tokens.map(() => 1 / total)],
    };
  });
}

describe("embedded student: gradients and AdamW", () => {
  for (const lossFn of ["importance_sampling", "ppo"] as const) {
    it(`${lossFn}: gradient of train()'s loss matches central finite differences`, async () => {
      const { student, tokenizer } = make({ initScale: 0.3, precision: "float64" }, 32);
      const prompt = toyPrompt(tokenizer);
      const rows = await randomRows(student, prompt, 3, 4);
      const opt = { lossFn, clip: 0.2 };
      const lg = student.lossAndGradient(rows, opt);
      const V = tokenizer.vocabSize;
      const h = 1e-6;
      const check = (arr: Float64Array, i: number, analytic: number) => {
        const keep = arr[i]!;
        arr[i] = keep + h; const up = student.lossAndGradient(rows, opt).loss;
        arr[i] = keep - h; const down = student.lossAndGradient(rows, opt).loss;
        arr[i] = keep;
        expect(Math.abs((up - down) / (2 * h) - analytic)).toBeLessThan(1e-7 + 1e-5 * Math.abs(analytic));
      };
      const checked = { rows: 0 };
      for (const [r, g] of lg.rows) {
        let best = 0;
        for (let k = 1; k < V; k++) if (Math.abs(g[k]!) > Math.abs(g[best]!)) best = k;
        for (const k of [best, (best * 7 + 3) % V]) check(student.W as Float64Array, r * V + k, g[k]!);
        if (++checked.rows === 6) break;
      }
      for (const k of [0, tokenizer.endOfResponse, rows[0]!.tokens[prompt.length]!]) check(student.b, k, lg.bias[k]!);
      expect(checked.rows).toBe(6);
      expect(lg.gradNorm).toBeGreaterThan(0);
    });
  }

  it("cross-entropy (SFT) via advantages 1 and old = lp: the gradient is −∇ log p", async () => {
    const { student, tokenizer } = make({ initScale: 0.3, precision: "float64" }, 32);
    const prompt = toyPrompt(tokenizer);
    const completion = tokenizer.encode("<action>go to kitchen</action>");
    completion.push(tokenizer.endOfResponse);
    const [sc] = await student.score([{ prompt, completion, temperature: 1 }]);
    const pad = prompt.map(() => 0);
    const row: TrainRow = {
      tokens: [...prompt, ...completion], mask: [...pad, ...completion.map(() => 1)],
      advantages: [...pad, ...completion.map(() => 1)], oldLogprobs: [...pad, ...sc!.logprobs], lossWeights: [...pad, ...completion.map(() => 1)],
    };
    const lg = student.lossAndGradient([row], { lossFn: "importance_sampling", clip: 0.2 });
    expect(lg.loss).toBeCloseTo(-completion.length, 12);
    // d(−Σ lp)/d b_k = Σ_t (p_t(k) − 1[k = y_t]): check one bias entry by differences of score().
    const k = completion[1]!, h = 1e-6;
    const sumLp = async () => (await student.score([{ prompt, completion, temperature: 1 }]))[0]!.logprobs.reduce((s, x) => s + x, 0);
    const keep = student.b[k]!;
    student.b[k] = keep + h; const up = await sumLp();
    student.b[k] = keep - h; const down = await sumLp();
    student.b[k] = keep;
    expect(lg.bias[k]).toBeCloseTo(-(up - down) / (2 * h), 6);
  });

  it("applies AdamW exactly (bias correction, decoupled weight decay, global-norm clip) over two steps", async () => {
    const { student, tokenizer } = make({ initScale: 0.3, precision: "float64" }, 32);
    const prompt = toyPrompt(tokenizer);
    const rows = await randomRows(student, prompt, 5, 3);
    const hp = { lr: 0.01, lossFn: "importance_sampling" as const, clip: 0.2, gradClip: 0.05, betas: [0.9, 0.999] as [number, number], eps: 1e-8, weightDecay: 0.1 };
    const k = rows[0]!.tokens[prompt.length]!;
    let theta = student.b[k]!, m = 0, v = 0;
    for (let t = 1; t <= 2; t++) {
      const lg = student.lossAndGradient(rows, hp);
      const g = lg.bias[k]! * Math.min(1, hp.gradClip / (lg.gradNorm + 1e-6));
      m = 0.9 * m + 0.1 * g; v = 0.999 * v + 0.001 * g * g;
      theta = theta * (1 - hp.lr * hp.weightDecay) - (hp.lr / (1 - 0.9 ** t)) * m / (Math.sqrt(v) / Math.sqrt(1 - 0.999 ** t) + hp.eps);
      const stats = await student.train(rows, hp);
      expect(stats.gradNorm).toBe(lg.gradNorm);
      expect(stats.tokens).toBe(rows.reduce((s, r) => s + r.mask.filter((x) => x === 1).length, 0));
      expect(student.b[k]).toBeCloseTo(theta, 15);
      expect(student.version()).toBe(t);
    }
  });

  it("ignores tokens with mask 0 or loss weight 0, and checks row shapes", async () => {
    const { student, tokenizer } = make({ initScale: 0.3 });
    const prompt = toyPrompt(tokenizer);
    const [row] = await randomRows(student, prompt, 9, 1);
    const silent = { ...row!, lossWeights: row!.lossWeights.map(() => 0) };
    const lg = student.lossAndGradient([silent], { lossFn: "ppo", clip: 0.2 });
    expect(lg.gradNorm).toBe(0);
    expect(lg.rows.size).toBe(0);
    await expect(student.train([{ ...row!, mask: [1] }], { lr: 0.1, lossFn: "ppo", clip: 0.2, gradClip: 1 })).rejects.toThrow(/train row 0: mask has 1 entries/);
  });
});

describe("embedded student: checkpoints", () => {
  it("save/load round-trips bit-identically: the next sample and the next update agree", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tcod-embedded-"));
    dirs.push(dir);
    const a = make({}, 128);
    const prompt = toyPrompt(a.tokenizer);
    const opt = { lr: 0.05, lossFn: "importance_sampling" as const, clip: 0.2, gradClip: 1 };
    for (let s = 0; s < 3; s++) await a.student.train(await randomRows(a.student, prompt, 20 + s, 4), opt);
    await a.student.saveState(dir);
    const b = make({}, 128);
    await b.student.loadState(dir);
    expect(b.student.version()).toBe(3);
    const req = { prompt, maxTokens: 10, temperature: 1, seed: 42 };
    expect(await b.student.sample([req])).toEqual(await a.student.sample([req]));
    const rows = await randomRows(a.student, prompt, 99, 4);
    expect(await b.student.train(rows, opt)).toEqual(await a.student.train(rows, opt));
    expect(Buffer.from(b.student.W.buffer).equals(Buffer.from(a.student.W.buffer))).toBe(true);
    expect(Buffer.from(b.student.b.buffer).equals(Buffer.from(a.student.b.buffer))).toBe(true);
    expect(await b.student.sample([req])).toEqual(await a.student.sample([req]));
  });

  it("refuses a checkpoint of other dimensions or a torn binary, naming the mismatch", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tcod-embedded-"));
    dirs.push(dir);
    const a = make({}, 128);
    await a.student.saveState(dir);
    await expect(make({}, 64).student.loadState(dir)).rejects.toThrow(/features is 128 in the checkpoint but 64/);
    const other = createEmbedded({ kind: "embedded", smoothing: 0.1, features: 128 },
      { vocabulary: TOY_VOCABULARY, agent: agentFormat({ kind: "raw" }), seed: 7 });
    await expect(other.student.loadState(dir)).rejects.toThrow(/fingerprint is/);
    // The hyper-parameters that fix what the weights mean are in the meta and checked on load.
    const meta = JSON.parse(await readFile(join(dir, "embedded-student.json"), "utf8"));
    expect(meta).toMatchObject({ pointerScale: 20, priorLogOdds: -4, candidateLogOdds: 0 });
    await expect(make({ pointerScale: 5 }, 128).student.loadState(dir)).rejects.toThrow(/pointerScale is 20 in the checkpoint but 5/);
    await expect(make({ priorLogOdds: 0 }, 128).student.loadState(dir)).rejects.toThrow(/priorLogOdds is -4 in the checkpoint but 0/);
    await expect(make({ candidateLogOdds: 12 }, 128).student.loadState(dir)).rejects.toThrow(/candidateLogOdds is 0 in the checkpoint but 12/);
    // A checkpoint written before they were recorded loads unchecked.
    delete meta.pointerScale;
    await writeFile(join(dir, "embedded-student.json"), JSON.stringify(meta));
    await make({ pointerScale: 5 }, 128).student.loadState(dir);
    await writeFile(join(dir, "embedded-student.bin"), "torn");
    await expect(make({}, 128).student.loadState(dir)).rejects.toThrow(/does not match the sha256/);
    await expect(make({}, 128).student.loadState(join(dir, "nope"))).rejects.toThrow(/is missing or cannot be read/);
  });
});

describe("embedded student: what it reads", () => {
  it("never reads the turn context: admissible actions do not change its samples or scores", async () => {
    const { student, tokenizer } = make({ initScale: 0.5 });
    const prompt = toyPrompt(tokenizer);
    const plain = await student.sample([{ prompt, maxTokens: 8, temperature: 1, seed: 5 }]);
    const told = await student.sample([{ prompt, maxTokens: 8, temperature: 1, seed: 5, context: { admissible: ["look"], optimal: ["look"] } }]);
    expect(told).toEqual(plain);
  });

  it("conditions on the observation: a different last user message changes the distribution", async () => {
    const { student, tokenizer } = make({ initScale: 0.5 });
    const other = [...tokenizer.renderSystem(TAGS.system), ...tokenizer.renderUser("Observation: You are in the garden."), ...tokenizer.assistantPrefix()];
    const completion = tokenizer.encode("<action>look</action>");
    const [a] = await student.score([{ prompt: toyPrompt(tokenizer), completion, temperature: 1 }]);
    const [b] = await student.score([{ prompt: other, completion, temperature: 1 }]);
    expect(a!.logprobs).not.toEqual(b!.logprobs);
    expect(student.activeRows(other)).toBeLessThan(student.activeRows(toyPrompt(tokenizer)));
  });
});
