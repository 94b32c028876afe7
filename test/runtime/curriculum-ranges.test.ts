/**
 * The runtime checks each schedule value it evaluates against its field's range (plan/ranges.ts):
 * a feedback-level schedule is range-checked by the compiler at step 1 only, so one that leaves its
 * range later is TC7005 at the expression's origin, naming the field, the range, the value and the
 * step (it was used silently: a blend weight of 1.3, a negative learning rate). In a compiled plan
 * only the horizon and the prefix may read the run's metrics; a plan .json may make any schedule do so.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";
import { ExprError } from "../../plan/expr.js";
import type { Observation } from "../../plan/feedback.js";
import { PLAN_RANGES } from "../../plan/ranges.js";
import type { Plan, PlanNode } from "../../plan/schema.js";
import { CurriculumState } from "../../runtime/curriculum-state.js";
import { aggregationAt } from "../../runtime/nodes/update.js";

const dir = mkdtempSync(join(tmpdir(), "tcod-rt-ranges-"));
writeFileSync(join(dir, "package.json"), "{}");
function planOf(fields: string): { plan: Plan; file: string } {
  const file = join(dir, `c${Math.random().toString(36).slice(2)}.tcod`);
  writeFileSync(file, `import { texthouse } from "std/envs"
import { opd } from "std/loss"
model m { path: "loglinear"  serve: embedded() }
curriculum c { teacher: m  student: m  env: texthouse()  steps: 10
  ${fields}
}
`);
  const r = compileFile(file);
  expect(r.diagnostics.filter((d) => d.severity === "error").map((d) => d.message)).toEqual([]);
  return { plan: r.plans[0]!.plan, file };
}
const node = <K extends PlanNode["kind"]>(p: Plan, kind: K) => p.graph.nodes.find((x) => x.kind === kind) as Extract<PlanNode, { kind: K }>;
const row = (step: number): Observation => ({ step, successRate: 0, meanReward: 0, kl: { mean: 0, perTurn: [] }, admissibleRate: 1, horizon: 1, prefix: 0, studentTurns: 1 });

/** Evaluates `at(step)` for steps 1.. with the previous steps observed; the error it ends with, and the steps before it. */
function runUntilError(state: CurriculumState, at: (step: number) => number, steps: number): { values: number[]; error: unknown } {
  const values: number[] = [];
  for (let step = 1; step <= steps; step++) {
    try { values.push(at(step)); } catch (e) { return { values, error: e }; }
    state.observe(row(step), 0);
  }
  return { values, error: undefined };
}

type Tree = NonNullable<Plan["exprs"][string]>["tree"];
const c = (value: number): Tree => ({ op: "const", value });
const fbStep: Tree = { op: "var", name: "feedback.step" } as Tree;
const lin = (a: number, b: number): Tree => ({ op: "add", args: [c(a), { op: "mul", args: [c(b), fbStep] }] });
/** A plan .json whose expression `id` was edited to read the run's own metrics (the compiler never saw it). */
function withFeedbackExpr(plan: Plan, id: string, tree: Tree): Plan {
  const p = structuredClone(plan);
  p.exprs[id] = { ...p.exprs[id]!, level: "feedback", tree };
  return p;
}
const pw = "piecewise(at: [1 step, 10 steps], values: [0.2, 0.1])";

describe("a feedback schedule that leaves its range during the run", () => {
  it("a progressive blend weight reaching 1.3 at step 4 is TC7005 at the expression, with the range, the value, the step and a hint", () => {
    const compiled = planOf(`loss: opd(aggregate: "progressive", blend: ${pw})`);
    // 0.1 at step 1, then + 0.4 per finished step.
    const plan = withFeedbackExpr(compiled.plan, "loss.blend", lin(0.1, 0.4));
    const state = new CurriculumState(plan);
    const agg = node(plan, "Advantage").params.aggregate;
    const { values, error } = runUntilError(state, (step) => (aggregationAt({ state }, agg, step) as { weight: number }).weight, 10);
    expect(values.map((v) => +v.toFixed(6))).toEqual([0.1, 0.5, 0.9]);
    expect(error).toBeInstanceOf(ExprError);
    const e = error as ExprError;
    expect(e.code).toBe("TC7005");
    expect(e.message).toMatch(/^the expression loss\.blend \(it reads the run's own metrics\) evaluates to 1\.3\d* at step 4; progressive blend weight must be in \[0, 1\]$/);
    // At the expression's origin, as the compiler recorded it.
    expect(`${e.where?.file}:${e.where?.line}:${e.where?.column}`).toBe(plan.exprs["loss.blend"]!.origin);
    expect(e.hint).toContain("clamp(");
  });

  it("a learning rate that becomes negative at step 4 is TC7005; above the guard bound, the bound is named", () => {
    const compiled = planOf(`optimizer: adam(lr: ${pw})`);
    const plan = withFeedbackExpr(compiled.plan, "lr", lin(0.01, -0.004));
    const state = new CurriculumState(plan);
    const lr = node(plan, "Update").params.optimizer.lr;
    const { values, error } = runUntilError(state, (step) => state.atStep(lr, step, PLAN_RANGES.lr), 10);
    expect(values.length).toBe(3);
    expect((error as ExprError).code).toBe("TC7005");
    expect((error as ExprError).message).toMatch(/evaluates to -0\.00\d+ at step 4; lr must be > 0$/);

    const up = withFeedbackExpr(compiled.plan, "lr", lin(0.01, 4));
    const s2 = new CurriculumState(up);
    const r2 = runUntilError(s2, (step) => s2.atStep(lr, step, PLAN_RANGES.lr), 10);
    expect(r2.values.length).toBe(3);
    expect((r2.error as ExprError).message).toMatch(/evaluates to 12\.01\d* at step 4; lr must be > 0 and ≤ 10$/);
  });

  it("a compiled feedback-paced horizon that falls below 1 turn at step 4 (the compiler checks step 1 only)", () => {
    const { plan, file } = planOf(`horizon: 3 turns - feedback.step / 1 step * 1 turn`);
    const state = new CurriculumState(plan);
    const h = node(plan, "EpisodePlanner").params.horizon!;
    const { values, error } = runUntilError(state, (step) => state.atEpisode(h, state.episodeVars(step, 0, 30), PLAN_RANGES.horizon), 10);
    expect(values).toEqual([3, 2, 1]);
    expect((error as ExprError).code).toBe("TC7005");
    expect((error as ExprError).message).toMatch(/^the expression horizon \(it reads the run's own metrics\) evaluates to 0 at step 4; horizon must be ≥ 1 turn$/);
    expect((error as ExprError).where).toMatchObject({ file: basename(file), line: 5 });
  });

  it("a value in range at every step is returned as it is", () => {
    const compiled = planOf(`temperature: ${pw}`);
    const plan = withFeedbackExpr(compiled.plan, "temperature", { op: "clamp", args: [lin(0.5, 1), c(0), c(2)] });
    const state = new CurriculumState(plan);
    const t = node(plan, "Rollout").params.temperature;
    const { values, error } = runUntilError(state, (step) => state.atStep(t, step, PLAN_RANGES.temperature), 5);
    expect(error).toBeUndefined();
    expect(values).toEqual([0.5, 1.5, 2, 2, 2]);
  });
});
