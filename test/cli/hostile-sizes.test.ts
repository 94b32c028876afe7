/**
 * Inputs a hostile-input sweep found crashing or accepted: a schedule that becomes non-finite during a
 * run (a stack trace, now TC7005 at the expression with the step), batch and sweep sizes that exhausted
 * memory (now refused at check or on load), and explain/--set messages that pointed nowhere.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectUserError as userError } from "../helpers/cli.js";

const ROOT = join(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "tcod-hostile-"));
const tcod = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd: dir, encoding: "utf8", timeout: 60_000 });

const curriculum = (horizon: string, steps = 5) => `import { opd } from "std/loss"
import { f2b } from "std/tcod"
import { texthouse } from "std/envs"
model teacher { path: "oracle" serve: embedded(smoothing: 0.1) }
model student { path: "loglinear" serve: embedded(features: 8192, candidate_log_odds: 12) }
curriculum c {
  teacher: teacher
  student: student
  env: texthouse(split: "train")
  steps: ${steps}
  batch: 16 tasks × 1 rollout
  horizon: ${horizon}
  loss: opd(coef: 1, estimator: "full")
  optimizer: adam(lr: 0.01, eps: 1e-6)
  staleness: 0 steps
}
`;
const good = join(dir, "good.tcod");
writeFileSync(good, curriculum("f2b(every: 1 step, max: 20 turns)"));

describe("a schedule that becomes non-finite during a run", () => {
  // Checked at step 1 only (it reads the run's metrics): 1 turn there, Infinity from step 2 on.
  const fb = join(dir, "fb.tcod");
  writeFileSync(fb, curriculum("max(1 turn, 1 turn / (1 - feedback.step / 1 step))"));

  it("is TC7005 at the expression, with the step and a hint; the folder resumes to the same error", () => {
    expect(tcod("check", fb).status).toBe(0);
    const run = join(dir, "rfb");
    const r = tcod("run", fb, "--set", "c.batch=2 tasks × 1 rollout", "--out", run);
    userError(r, "TC7005");
    expect(r.stderr).toMatch(/fb\.tcod:12:12 error TC7005: the expression horizon .*evaluates to Infinity at step 2/);
    // Step 1 finished and was recorded; step 2 left nothing half-written: a resume reaches the same error.
    const rows = () => readFileSync(join(run, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { step: number });
    expect(rows().map((x) => x.step)).toEqual([1]);
    const again = tcod("run", "--resume", run);
    userError(again, "TC7005");
    expect(again.stderr).toContain("at step 2");
    expect(rows().map((x) => x.step)).toEqual([1]);
  });

  it("NaN (0 turns / 0) is the same coded error", () => {
    const nan = join(dir, "nan.tcod");
    writeFileSync(nan, curriculum("max(1 turn, 0 turns / (1 - feedback.step / 1 step))"));
    const r = tcod("run", nan, "--set", "c.batch=2 tasks × 1 rollout", "--out", join(dir, "rnan"));
    userError(r, "TC7005");
    expect(r.stderr).toContain("evaluates to NaN at step 2");
  });

  it("a plan .json whose horizon is 1/0: TC7005 at step 1 at the expression's origin", () => {
    const out = join(dir, "plan");
    expect(tcod("compile", good, "-o", out).status).toBe(0);
    const plan = JSON.parse(readFileSync(join(out, "c.plan.json"), "utf8"));
    plan.exprs.horizon.tree = { op: "div", args: [{ op: "const", value: 1 }, { op: "const", value: 0 }] };
    const file = join(dir, "inf.plan.json");
    writeFileSync(file, JSON.stringify(plan));
    const r = tcod("run", file, "--out", join(dir, "rinf"));
    userError(r, "TC7005");
    expect(r.stderr).toMatch(/std\/tcod\.tcod:\d+:\d+ error TC7005: the expression horizon evaluates to Infinity at step 1/);
  });
});

describe("values out of their field's range (plan/ranges.ts) that skip the compiler", () => {
  const compiled = () => {
    const out = join(dir, "plan-ranges");
    if (!existsSync(join(out, "c.plan.json"))) expect(tcod("compile", good, "-o", out).status).toBe(0);
    return JSON.parse(readFileSync(join(out, "c.plan.json"), "utf8"));
  };

  it("a plan .json constant out of range is TC7001 on load, naming the JSON path, the range and the value", () => {
    const plan = compiled();
    const i = plan.graph.nodes.findIndex((n: { kind: string }) => n.kind === "Update");
    plan.graph.nodes[i].params.optimizer.lr = -0.1;
    const file = join(dir, "neg-lr.plan.json");
    writeFileSync(file, JSON.stringify(plan));
    const r = tcod("run", file, "--out", join(dir, "rneg"));
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain(`neg-lr.plan.json error TC7001: lr must be > 0, got -0.1 (at $.graph.nodes[${i}].params.optimizer.lr)\n  hint: Choose a value > 0`);
    expect(existsSync(join(dir, "rneg"))).toBe(false);
  });

  it("a plan .json lr that reads the run's metrics and turns negative at step 3 is TC7005 there; steps 1–2 are kept", () => {
    const plan = compiled();
    const update = plan.graph.nodes.find((n: { kind: string }) => n.kind === "Update");
    // lr = 0.01 − 0.006 × feedback.step: 0.01, 0.004, then −0.002 at step 3.
    plan.exprs.lr = { level: "feedback", unit: "", origin: "lr.tcod:3:7", tree: { op: "sub", args: [{ op: "const", value: 0.01 }, { op: "mul", args: [{ op: "const", value: 0.006 }, { op: "var", name: "feedback.step" }] }] } };
    update.params.optimizer.lr = { expr: "lr" };
    const file = join(dir, "fb-lr.plan.json");
    writeFileSync(file, JSON.stringify(plan));
    const run = join(dir, "rfblr");
    const r = tcod("run", file, "--out", run);
    userError(r, "TC7005");
    expect(r.stderr).toMatch(/lr\.tcod:3:7 error TC7005: the expression lr \(it reads the run's own metrics\) evaluates to -0\.00\d+ at step 3; lr must be > 0\n  hint: .*clamp\(/);
    const rows = readFileSync(join(run, "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { step: number; lr: number });
    expect(rows.map((x) => x.step)).toEqual([1, 2]);
    expect(rows.map((x) => +x.lr.toFixed(6))).toEqual([0.01, 0.004]);
  });

  it("a gkd beta above 1 at step 2 is TC7005 (it was an internal error with a stack trace)", () => {
    const src = join(dir, "gkd.tcod");
    writeFileSync(src, curriculum("f2b(every: 1 step, max: 20 turns)").replace('import { opd } from "std/loss"', 'import { gkd } from "std/loss"')
      .replace('loss: opd(coef: 1, estimator: "full")', "loss: gkd(beta: piecewise(at: [1 step, 5 steps], values: [0.5, 0.1]))"));
    const out = join(dir, "plan-gkd");
    const c = tcod("compile", src, "-o", out);
    expect(c.status, c.stderr).toBe(0);
    const plan = JSON.parse(readFileSync(join(out, "c.plan.json"), "utf8"));
    const id = Object.keys(plan.exprs).find((k) => k.endsWith("gkd.beta"))!;
    // beta = 0.5 + 0.7 × feedback.step: 0.5 at step 1, 1.2 at step 2.
    plan.exprs[id] = { ...plan.exprs[id], level: "feedback", tree: { op: "add", args: [{ op: "const", value: 0.5 }, { op: "mul", args: [{ op: "const", value: 0.7 }, { op: "var", name: "feedback.step" }] }] } };
    const file = join(dir, "gkd.plan.json");
    writeFileSync(file, JSON.stringify(plan));
    const r = tcod("run", file, "--set", "clock.steps=3", "--out", join(dir, "rgkd"));
    userError(r, "TC7005");
    expect(r.stderr).toMatch(/evaluates to 1\.2\d* at step 2; beta must be in \[0, 1\] \(the share of forward KL\)/);
  });
});

describe("sizes that exhausted memory", () => {
  it("a batch of 100000 × 100000 episodes is TC4001 at check time", () => {
    const r = tcod("check", good, "--set", "c.batch=100000 tasks × 100000 rollout");
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("error TC4001: batch must be at most 65,536 episodes a step");
  });

  it("a plan .json of 10^9 tasks a step is TC7001 on load, before a run folder is made", () => {
    const out = join(dir, "plan2");
    expect(tcod("compile", good, "-o", out).status).toBe(0);
    const plan = JSON.parse(readFileSync(join(out, "c.plan.json"), "utf8"));
    for (const n of plan.graph.nodes) if (n.kind === "TaskSampler") n.params.tasksPerStep = 1e9;
    const file = join(dir, "big.plan.json");
    writeFileSync(file, JSON.stringify(plan));
    const r = tcod("run", file, "--out", join(dir, "rbig"));
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/error TC7001: .*65536.*tasksPerStep.*\n  hint: This field takes a number ≤ 65536;/);
    expect(existsSync(join(dir, "rbig"))).toBe(false);
  });

  it("--max-points past the hard limit is TC7009, not an out-of-memory abort", () => {
    const r = tcod("check", good, "--max-points", "10000000000");
    userError(r, "TC7009");
    expect(r.stderr).toContain("at most 100,000 points");
  });
});

describe("explain and --set messages", () => {
  it("a call argument of a schedule: says the value has no members, and names what to explain", () => {
    const r = tcod("explain", good, "c.horizon.every");
    userError(r, "TC7009");
    expect(r.stderr).toContain("computed by the call `f2b(every: 1 step, max: 20 turns)`");
    expect(r.stderr).toContain("hint: Explain the value itself: c.horizon");
    expect(r.stderr).not.toContain("Fields: .");
  });

  it("a loss's coefficient and arguments are explained; an unknown one lists the real members", () => {
    const coef = tcod("explain", good, "c.loss.coef", "--at", "1,2");
    expect(coef.status, coef.stderr).toBe(0);
    expect(coef.stdout).toMatch(/^c\.loss\.coef = 1\n/);
    expect(tcod("explain", good, "c.loss.opd.estimator").stdout).toContain('c.loss.opd.estimator = "full"');
    const bad = tcod("explain", good, "c.loss.nope");
    userError(bad, "TC7009");
    expect(bad.stderr).toContain("hint: Members of 'loss': c.loss.opd, c.loss.coef, c.loss.estimator, c.loss.clip.");
  });

  it("--at beyond 2^53 − 1 is called that, not 'not a whole number'", () => {
    const r = tcod("explain", good, "c.horizon", "--at", "9007199254740993");
    userError(r, "TC7009");
    expect(r.stderr).toContain("'9007199254740993' is beyond the largest exact step, 9007199254740991");
  });

  it("a --set that does not parse gets an example in the target's unit", () => {
    expect(tcod("check", good, "--set", "c.loss.coef=3 ++").stderr).toContain("e.g. `--set c.loss.coef=0.5`");
    expect(tcod("check", good, "--set", "c.steps==").stderr).toContain("e.g. `--set c.steps=250 steps`");
    expect(tcod("check", good, "--set", "c.horizon.every 4").stderr).toContain("e.g. `--set c.horizon.every=6 steps`");
  });
});
