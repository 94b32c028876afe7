/**
 * Writes test/vectors/feedback.json: traces in, schedules out. Each case holds a plan's pacing
 * expressions (compiled from a .tcod curriculum that uses std/feedback), its clock (steps,
 * staleness, Hmax) and a synthetic metrics trace; the expected values are, at every step, the
 * horizon and prefix in force (for a few expert lengths) and the feedback summary (each stateful
 * node's value, each stage's streak, advance and signal). Checked by the TypeScript runtime
 * (test/feedback/vectors.test.ts) and by the Trinity plugin's Python (test/feedback/test_feedback.py).
 *
 *   npx esbuild scripts/gen-feedback-vectors.ts --bundle --platform=node --format=esm \
 *     --packages=external --outfile=scripts/.gen-feedback-vectors.mjs && node scripts/.gen-feedback-vectors.mjs
 *   (from the repository root; the bundle sits beside the stdlib lookup it expects, then delete it)
 *
 * Traces are deterministic (a fixed LCG), rounded to 4 decimals so the file stays readable.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { evalRef, type ExprDef, type ValueRef } from "../plan/expr.js";
import { replayTrace, type FeedbackSummary, type Observation } from "../plan/feedback.js";

export const FEEDBACK_VECTORS_SCHEMA = "tcod.feedback-vectors/1";

export interface FeedbackCaseInput {
  name: string;
  description: string;
  exprs: Record<string, ExprDef>;
  horizon?: ValueRef;
  prefix?: ValueRef;
  steps: number;
  staleness: number;
  maxTurns: number;
  expertLengths: number[];
  trace: Observation[];
}

export interface FeedbackExpected {
  /** Per expert length (same order as expertLengths), the value at steps 1..steps. */
  horizon?: number[][];
  prefix?: number[][];
  /** The summary in force at steps 1..steps (stage rules without their printed rule text). */
  summaries: Omit<FeedbackSummary, "stages">["values"][];
  stages: Record<string, { stage: number; streak: number; advancedAt: number | null; signal: number | null }>[];
  feedbackStep: number[];
}

export interface FeedbackCase extends FeedbackCaseInput { expected: FeedbackExpected }

/** Recomputes a case's expected values with the TypeScript runtime. */
export function computeFeedbackExpected(c: FeedbackCaseInput): FeedbackExpected {
  const replay = replayTrace(c.exprs, c.trace, { steps: c.steps, staleness: c.staleness });
  const steps = Array.from({ length: c.steps }, (_, i) => i + 1);
  const at = steps.map((t) => replay.at(t));
  const series = (ref: ValueRef | undefined) => ref === undefined ? undefined : c.expertLengths.map((L) => steps.map((t, i) => {
    const r = at[i]!;
    return evalRef(ref, c.exprs, { step: t, total_steps: c.steps, "episode.expert_length": L, "episode.max_turns": c.maxTurns, ...r.vars }, {}, r.view);
  }));
  const horizon = series(c.horizon);
  const prefix = series(c.prefix);
  return {
    ...(horizon ? { horizon } : {}), ...(prefix ? { prefix } : {}),
    summaries: at.map((r) => r.summary.values),
    stages: at.map((r) => Object.fromEntries(Object.entries(r.summary.stages).map(([k, s]) => [k, { stage: s.stage, streak: s.streak, advancedAt: s.advancedAt, signal: s.signal }]))),
    feedbackStep: at.map((r) => r.summary.step),
  };
}

/** A deterministic synthetic trace: KL decaying with noise, success rising, per-turn KL growing with depth. */
export function syntheticTrace(seed: number, n: number, opts: { skip?: number[]; klScale?: number } = {}): Observation[] {
  let x = seed >>> 0;
  const rand = () => { x = (Math.imul(x, 1664525) + 1013904223) >>> 0; return x / 2 ** 32; };
  const r4 = (v: number) => Math.round(v * 1e4) / 1e4;
  const out: Observation[] = [];
  for (let s = 1; s <= n; s++) {
    const klMean = r4((opts.klScale ?? 1) * (0.9 * Math.exp(-s / 8) + 0.25 * rand()));
    const depth = 1 + Math.min(6, Math.floor(s / 3));
    const perTurn = Array.from({ length: depth }, (_, h) => (rand() < 0.1 ? null : r4(klMean * (0.6 + 0.2 * h) + 0.05 * rand())));
    if (opts.skip?.includes(s)) { rand(); continue; }
    out.push({
      step: s, successRate: r4(Math.min(1, s / n + 0.2 * rand())), meanReward: r4(Math.min(1, s / n + 0.2 * rand())),
      kl: { mean: klMean, perTurn }, admissibleRate: r4(0.7 + 0.3 * rand()), horizon: depth, prefix: r4(3 * rand()), studentTurns: r4(depth * (0.5 + 0.5 * rand())),
    });
  }
  return out;
}

/** The curricula whose compiled pacing expressions make the cases. */
const SOURCES: { name: string; description: string; staleness: number; steps: number; field: string; skip?: number[]; klScale?: number }[] = [
  { name: "paced_f2b_at_most", description: "paced_f2b(every: 3 steps, max: 8 turns, when: kl_settled(below: 0.45, decay: 0.7), patience: 2 steps): the cap grows with the stage, never faster than f2b's clock", staleness: 0, steps: 30, field: 'horizon: paced_f2b(every: 3 steps, max: 8 turns, when: kl_settled(below: 0.45, decay: 0.7), patience: 2 steps)' },
  { name: "paced_f2b_at_least_stale", description: "the same rule bounded below by the clock (clock: \"at_least\"), with staleness 2: at step t the rows of steps ≤ t − 3 are known", staleness: 2, steps: 30, field: 'horizon: paced_f2b(every: 4 steps, max: 8 turns, when: kl_settled(below: 0.4), patience: 3 steps, clock: "at_least")' },
  { name: "paced_b2f_window_and_turn_kl", description: "paced_b2f with a windowed success rate and the first turn's KL EMA (kl_turn), clock \"none\"; a trace with missing steps", staleness: 0, steps: 30, skip: [5, 6, 17], field: 'prefix: paced_b2f(every: 5 steps, when: window_mean(feedback.success, size: 4 steps) > 40 % and ema(kl_turn(0 turns), decay: 0.5) < 0.5, patience: 2 steps, clock: "none")' },
  { name: "raw_signals", description: "a horizon from the raw feedback variables: the frontier KL, the admissible rate, the previous horizon and an EMA with init", staleness: 1, steps: 20, klScale: 2, field: 'horizon: max(1 turn, min(8 turns, floor(feedback.horizon / 1 turn) * 1 turn + (if frontier_kl() < 0.6 and feedback.admissible > 0.8 then 1 turn else 0 turns) + round(ema(feedback.student_turns, decay: 0.5, init: 2 turns) / 1 turn) * 1 turn - 1 turn))' },
];

const HEADER = `import { texthouse } from "std/envs"
import { paced_f2b, paced_b2f, kl_settled, succeeding, ema, window_mean, stage, kl_turn, frontier_kl } from "std/feedback"
model m { path: "x"  serve: embedded() }
`;

export async function buildFeedbackVectors(): Promise<{ schema: string; cases: FeedbackCase[] }> {
  const { compileFile } = await import("../compiler/index.js");
  const dir = mkdtempSync(join(tmpdir(), "tcod-fbvec-"));
  const cases: FeedbackCase[] = [];
  for (const [i, s] of SOURCES.entries()) {
    const file = join(dir, `${s.name}.tcod`);
    writeFileSync(file, `${HEADER}curriculum ${s.name} { teacher: m  student: m  env: texthouse(max_turns: 8 turns)  steps: ${s.steps}  staleness: ${s.staleness} steps  ${s.field} }\n`);
    const r = compileFile(file);
    if (!r.ok) throw new Error(`${s.name}: ${JSON.stringify(r.diagnostics.map((d) => d.message))}`);
    const plan = r.plans[0]!.plan;
    const planner = plan.graph.nodes.find((n) => n.kind === "EpisodePlanner")!.params as { horizon?: ValueRef; prefix?: ValueRef; maxTurns: number };
    const input: FeedbackCaseInput = {
      name: s.name, description: s.description, exprs: plan.exprs,
      ...(planner.horizon !== undefined ? { horizon: planner.horizon } : {}), ...(planner.prefix !== undefined ? { prefix: planner.prefix } : {}),
      steps: s.steps, staleness: s.staleness, maxTurns: planner.maxTurns, expertLengths: [0, 3, 7],
      trace: syntheticTrace(1000 + i, s.steps, { ...(s.skip ? { skip: s.skip } : {}), ...(s.klScale ? { klScale: s.klScale } : {}) }),
    };
    cases.push({ ...input, expected: computeFeedbackExpected(input) });
  }
  return { schema: FEEDBACK_VECTORS_SCHEMA, cases };
}

export const formatFeedbackVectors = (v: { schema: string; cases: FeedbackCase[] }): string => JSON.stringify(v, null, 1) + "\n";

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const out = "test/vectors/feedback.json"; // run from the repository root
  writeFileSync(out, formatFeedbackVectors(await buildFeedbackVectors()));
  process.stdout.write(`wrote ${out}\n`);
}
