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

const ROOT = join(import.meta.dirname, "../..");
const dir = mkdtempSync(join(tmpdir(), "tcod-hostile-"));
const tcod = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd: dir, encoding: "utf8", timeout: 60_000 });

/** Exit 1, the code, a hint, no stack trace, no "internal error". */
function userError(r: ReturnType<typeof tcod>, code: string): void {
  expect(r.status, r.stderr).toBe(1);
  expect(r.stderr).toContain(`error ${code}:`);
  expect(r.stderr).toContain("hint:");
  expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  expect(r.stderr).not.toContain("internal error");
}

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
    expect(r.stderr).toMatch(/error TC7001: .*65536.*tasksPerStep/);
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
