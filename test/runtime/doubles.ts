/**
 * Test doubles for the runtime: a character tokenizer with a chat template, a counter env with an
 * expert path, and a scripted student/teacher whose outputs are fixed functions of the prompt.
 * They let engine tests assert exact episode mechanics without the embedded backend.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type {
  SampleRequest, SampleResult, ScoreRequest, ScoreResult, StudentBackend, TeacherBackend, Tokenizer, TrainRow, TrainStats,
} from "../../runtime/backends/backend.js";
import { EnvError, type EnvAdapter, type Observation, type StepResult, type TaskRef } from "../../runtime/envs/env.js";

export const SYS = 256, USR = 257, AST = 258, END = 259;

export class CharTokenizer implements Tokenizer {
  readonly vocabSize = 260;
  readonly stopTokens = [END];
  encode(text: string): number[] { return [...text].map((c) => c.charCodeAt(0) & 255); }
  decode(ids: number[]): string { return ids.filter((i) => i < 256).map((i) => String.fromCharCode(i)).join(""); }
  renderSystem(text: string): number[] { return [SYS, ...this.encode(text), END]; }
  renderUser(text: string): number[] { return [USR, ...this.encode(text), END]; }
  assistantPrefix(): number[] { return [AST]; }
  assistantSuffix(): number[] { return [END]; }
  fingerprint(): string { return "char/1"; }
}

/** Task `count-N`: reach N with "inc"; "dec" goes back; done (won) at N. Expert path: N × inc. */
export class CounterEnv implements EnvAdapter {
  readonly kind = "counter";
  value = 0;
  target = 0;
  steps = 0;
  resets = 0;
  /** Throw an EnvError on reset of these task ids, `failures` times in total. */
  constructor(private readonly opts: { failOn?: Set<string>; failures?: { left: number }; tasks?: number } = {}) {}
  async tasks(split: string): Promise<TaskRef[]> {
    return Array.from({ length: this.opts.tasks ?? 6 }, (_, i) => ({ id: `count-${i + 2}`, split }));
  }
  async reset(task: TaskRef): Promise<Observation> {
    this.resets++;
    if (this.opts.failOn?.has(task.id) && (this.opts.failures?.left ?? 1) > 0) {
      if (this.opts.failures) this.opts.failures.left--;
      throw new EnvError(`reset of ${task.id} failed`, "counter");
    }
    this.value = 0;
    this.steps = 0;
    this.target = Number(task.id.split("-")[1]);
    return { task: `reach ${this.target}`, text: "at 0", admissible: ["inc", "dec"] };
  }
  async step(action: string): Promise<StepResult> {
    this.steps++;
    if (action === "inc") this.value++;
    else if (action === "dec") this.value--;
    const done = this.value === this.target;
    return { observation: done ? "done" : `at ${this.value}`, reward: done ? 1 : 0, done, won: done, admissible: ["inc", "dec"] };
  }
  async expertPath(task: TaskRef): Promise<string[]> {
    return new Array<string>(Number(task.id.split("-")[1])).fill("inc");
  }
  async optimalActions(): Promise<string[]> { return [this.value < this.target ? "inc" : "dec"]; }
  async expertAction(): Promise<string> { return this.value < this.target ? "inc" : "dec"; }
  async close(): Promise<void> {}
}

/**
 * A student whose response is `respond(promptText, seed)`; logprob −0.5 per token. `train` shifts a
 * scalar weight by the weighted advantage sum, so the final state depends on every row trained.
 */
export class ScriptedStudent implements StudentBackend {
  readonly tokenizer = new CharTokenizer();
  readonly samples: SampleRequest[] = [];
  /** The number of requests of each sample() call, in order. */
  readonly sampleCalls: number[] = [];
  readonly trained: TrainRow[][] = [];
  weight = 0;
  private steps = 0;
  constructor(private readonly respond: (prompt: string, seed: number) => string = () => "<action>inc</action>") {}
  version(): number { return this.steps; }
  async sample(reqs: SampleRequest[]): Promise<SampleResult[]> {
    this.sampleCalls.push(reqs.length);
    return reqs.map((r) => {
      this.samples.push(r);
      const tokens = [...this.tokenizer.encode(this.respond(this.tokenizer.decode(r.prompt), r.seed)), END];
      return { tokens, logprobs: tokens.map(() => -0.5), finishReason: "stop" as const };
    });
  }
  async score(reqs: ScoreRequest[]): Promise<ScoreResult[]> {
    return reqs.map((r) => ({
      logprobs: r.completion.map(() => -0.5), ...(r.entropy ? { entropy: r.completion.map(() => 1) } : {}),
      ...(r.topk ? { topk: r.completion.map((t) => [{ token: t, logprob: -0.5 }, { token: 0, logprob: -1.5 }]) } : {}),
    }));
  }
  async train(rows: TrainRow[], opt: { lr: number }): Promise<TrainStats> {
    this.trained.push(rows);
    let g = 0, tokens = 0;
    for (const r of rows) r.mask.forEach((m, i) => { if (m) { g += r.advantages[i]! * r.lossWeights[i]!; tokens++; } });
    this.weight += opt.lr * g;
    this.steps++;
    return { loss: -g, gradNorm: Math.abs(g), tokens };
  }
  async saveState(dir: string): Promise<void> {
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "w.json"), JSON.stringify({ weight: this.weight, steps: this.steps }));
  }
  async loadState(dir: string): Promise<void> {
    const s = JSON.parse(readFileSync(join(dir, "w.json"), "utf8")) as { weight: number; steps: number };
    this.weight = s.weight;
    this.steps = s.steps;
  }
  async close(): Promise<void> {}
}

/** Teacher: logprob −0.25 per token (so k1 KL = −0.25 per token against the scripted student). */
export class ScriptedTeacher implements TeacherBackend {
  readonly tokenizer = new CharTokenizer();
  readonly calls: ScoreRequest[][] = [];
  async score(reqs: ScoreRequest[]): Promise<ScoreResult[]> {
    this.calls.push(reqs);
    // Top-k: the sampled token and token 0; an empty list on END (as an oracle off its trie).
    return reqs.map((r) => ({
      logprobs: r.completion.map(() => -0.25),
      ...(r.topk ? { topk: r.completion.map((t) => (t === END ? [] : [{ token: t, logprob: -0.25 }, { token: 0, logprob: -2 }])) } : {}),
    }));
  }
  async close(): Promise<void> {}
}
