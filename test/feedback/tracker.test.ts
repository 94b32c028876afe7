/**
 * The feedback tracker (plan/feedback.ts) against hand-computed values: what every feedback value is
 * before any step has finished, EMA and window means, the stage rule's patience, resets and cap, the
 * staleness lag of a replay, kl_turn's fallback, checkpoint round trips, and trace parsing (TC7013).
 */
import { describe, expect, it } from "vitest";
import { evalScalar, NeedsTraceError, type ExprDef, type ExprTree } from "../../plan/expr.js";
import { FeedbackTracker, parseTrace, replayTrace, statefulNodes, TraceError, type Observation } from "../../plan/feedback.js";

const c = (value: number): ExprTree => ({ op: "const", value });
const v = (name: string): ExprTree => ({ op: "var", name } as ExprTree);
const kl = v("feedback.kl");
const ema = (x: ExprTree, decay: number, init = 0): ExprTree => ({ op: "ema", args: [x, c(decay), c(init)] });
const stage = (cond: ExprTree, patience: number, max = 1e9): ExprTree => ({ op: "stage", args: [cond, c(patience), c(max)] });
const lt = (a: ExprTree, b: ExprTree): ExprTree => ({ op: "lt", args: [a, b] });
const def = (tree: ExprTree): ExprDef => ({ level: "feedback", unit: "", tree });
const obs = (step: number, klMean: number, extra: Partial<Observation> = {}): Observation => ({
  step, successRate: 0, meanReward: 0, kl: { mean: klMean, perTurn: [] }, admissibleRate: 1, horizon: 1, prefix: 0, studentTurns: 1, ...extra,
});
const at = (t: FeedbackTracker, tree: ExprTree, step = 1) => evalScalar(tree, { step, total_steps: 100, ...t.vars() }, {}, t.view());

describe("before any step has finished (step 1)", () => {
  it("feedback.* read 0, smoothers their init, stages 0", () => {
    const e = ema(kl, 0.9, 0.25);
    const t = new FeedbackTracker({ h: def({ op: "add", args: [e, stage(lt(kl, c(1)), 1)] }) });
    expect(t.vars()).toMatchObject({ "feedback.step": 0, "feedback.kl": 0, "feedback.success": 0, "feedback.horizon": 0 });
    expect(at(t, e)).toBe(0.25);
    expect(at(t, stage(lt(kl, c(1)), 1))).toBe(0);
    expect(at(t, { op: "kl_turn", args: [c(0)] })).toBe(0);
  });

  it("evaluated without a tracker: NeedsTraceError (TC7012), not a wrong number", () => {
    expect(() => evalScalar(kl, { step: 1 })).toThrow(NeedsTraceError);
    expect(() => evalScalar(ema(c(1), 0.5), { step: 1 })).toThrow(NeedsTraceError);
    expect(new NeedsTraceError("x").code).toBe("TC7012");
  });
});

describe("smoothers", () => {
  it("ema: the first observation sets m, then m ← decay·m + (1 − decay)·x", () => {
    const e = ema(kl, 0.8, 5);
    const t = new FeedbackTracker({ h: def(e) });
    const xs = [1.0, 0.5, 0.25, 2.0];
    let m = NaN;
    xs.forEach((x, i) => {
      t.observe(obs(i + 1, x), { step: i + 2, total_steps: 100 });
      m = i === 0 ? x : 0.8 * m + 0.2 * x;
      expect(at(t, e)).toBeCloseTo(m, 15);
    });
    // by hand: 1 → 0.9 → 0.77 → 1.016
    expect(at(t, e)).toBeCloseTo(1.016, 12);
  });

  it("window_mean: the mean of the last `size` observations", () => {
    const w: ExprTree = { op: "window_mean", args: [v("feedback.success"), c(3), c(0.5)] };
    const t = new FeedbackTracker({ h: def(w) });
    expect(at(t, w)).toBe(0.5);
    const s = [0, 1, 1, 0, 1];
    const expected = [0, 0.5, 2 / 3, 2 / 3, 2 / 3];
    s.forEach((x, i) => { t.observe(obs(i + 1, 0, { successRate: x }), { step: i + 2 }); expect(at(t, w)).toBeCloseTo(expected[i]!, 15); });
  });
});

describe("stage", () => {
  it("advances after `patience` consecutive held steps; a failed step resets the streak; stops at max", () => {
    const st = stage(lt(kl, c(0.5)), 2, 2);
    const t = new FeedbackTracker({ h: def(st) });
    // held: T F T T T T T → streaks 1 0 1 2(→stage 1, 0) 1 2(→stage 2) then capped
    const kls = [0.1, 0.9, 0.1, 0.2, 0.3, 0.4, 0.1];
    const stages = [0, 0, 0, 1, 1, 2, 2];
    kls.forEach((x, i) => { t.observe(obs(i + 1, x), { step: i + 2 }); expect(at(t, st)).toBe(stages[i]); });
    const s = t.summary().stages["stage#1"]!;
    expect(s).toMatchObject({ stage: 2, streak: 0, advancedAt: 6, rule: "feedback.kl < 0.5" });
    expect(s.signal).toBe(0.4);
  });

  it("a stage over an EMA: the signal recorded is the EMA's value at the advance", () => {
    const e = ema(kl, 0.5);
    const st = stage(lt(e, c(0.6)), 2);
    const t = new FeedbackTracker({ h: def(st) });
    for (const [i, x] of [0.579, 0.122].entries()) t.observe(obs(i + 1, x), { step: i + 2 });
    expect(at(t, st)).toBe(1);
    expect(t.summary().stages["stage#1"]!.signal).toBeCloseTo(0.5 * 0.579 + 0.5 * 0.122, 15);
  });

  it("nodes are named in post-order over expressions sorted by id; equal trees share one state", () => {
    const e = ema(kl, 0.5);
    const nodes = statefulNodes({ b: def(stage(lt(e, c(0.6)), 2)), a: def({ op: "add", args: [e, c(1)] }) });
    expect(nodes.map((n) => n.name)).toEqual(["ema#1", "stage#1"]);
  });
});

describe("kl_turn", () => {
  it("reads the last step's mean KL at a turn index, the step's mean where no episode reached it", () => {
    const k = (i: number): ExprTree => ({ op: "kl_turn", args: [c(i)] });
    const t = new FeedbackTracker({ h: def(k(0)) });
    t.observe(obs(1, 0.4, { kl: { mean: 0.4, perTurn: [0.1, null, 0.7] } }), { step: 2 });
    expect([0, 1, 2, 3, 1.5].map((i) => at(t, k(i)))).toEqual([0.1, 0.4, 0.7, 0.4, 0.4]);
  });
});

describe("state is checkpointable", () => {
  it("snapshot/restore into a fresh tracker continues identically", () => {
    const st = stage(lt(ema(kl, 0.7), c(0.5)), 2);
    const exprs = { h: def(st) };
    const a = new FeedbackTracker(exprs);
    const kls = [0.6, 0.3, 0.2, 0.9, 0.1, 0.1, 0.1, 0.2];
    kls.slice(0, 4).forEach((x, i) => a.observe(obs(i + 1, x), { step: i + 2 }));
    const b = new FeedbackTracker(exprs);
    b.restore(JSON.parse(JSON.stringify(a.snapshot())));
    kls.slice(4).forEach((x, i) => { a.observe(obs(i + 5, x), { step: i + 6 }); b.observe(obs(i + 5, x), { step: i + 6 }); });
    expect(b.summary()).toEqual(a.summary());
    expect(b.snapshot()).toEqual(a.snapshot());
  });
});

describe("replayTrace", () => {
  it("at step t it has observed the rows of steps ≤ t − 1 − staleness", () => {
    const trace = [1, 2, 3, 4].map((s) => obs(s, s / 10));
    const r0 = replayTrace({ h: def(kl) }, trace, { steps: 6, staleness: 0 });
    const r2 = replayTrace({ h: def(kl) }, trace, { steps: 6, staleness: 2 });
    expect([1, 2, 3, 4, 5, 6].map((t) => r0.at(t).vars["feedback.step"])).toEqual([0, 1, 2, 3, 4, 4]);
    expect([1, 2, 3, 4, 5, 6].map((t) => r2.at(t).vars["feedback.step"])).toEqual([0, 0, 0, 1, 2, 3]);
    // asking for an earlier step replays from the start
    expect(r0.at(2).vars["feedback.kl"]).toBe(0.1);
  });
});

describe("parseTrace", () => {
  it("skips a last line without its newline that is not JSON (a live run's row being written), and says so", () => {
    const lines: number[] = [];
    const t = parseTrace('{"step": 1, "kl": 0.5}\n{"step": 2, "kl": 0.4}\n{"kind":"train","step":3,"kl":{"me', "t.jsonl", (l) => lines.push(l));
    expect(t.map((o) => o.step)).toEqual([1, 2]);
    expect(lines).toEqual([3]);
  });

  it("reads metrics.jsonl rows and synthetic ones; skips eval rows", () => {
    const text = [
      JSON.stringify({ kind: "train", step: 1, successRate: 0.5, meanReward: 1, kl: { mean: 0.3, perTurn: [0.2, null] }, admissibleRate: 0.9, horizon: 2, prefix: 1, studentTurns: 2 }),
      JSON.stringify({ kind: "eval", name: "valid", step: 1, successRate: 1 }),
      JSON.stringify({ step: 2, kl: 0.25 }),
      "",
    ].join("\n");
    const t = parseTrace(text, "t.jsonl");
    expect(t).toHaveLength(2);
    expect(t[0]!.kl).toEqual({ mean: 0.3, perTurn: [0.2, null] });
    expect(t[1]).toMatchObject({ step: 2, kl: { mean: 0.25, perTurn: [] }, successRate: 0 });
  });

  it("a broken trace is TC7013 with its line", () => {
    const bad = (text: string, msg: RegExp, line: number) => {
      try { parseTrace(text, "t.jsonl"); } catch (e) {
        expect(e).toBeInstanceOf(TraceError);
        expect((e as TraceError).code).toBe("TC7013");
        expect((e as TraceError).message).toMatch(msg);
        expect((e as TraceError).where?.line).toBe(line);
        return;
      }
      expect.unreachable();
    };
    bad('{"step": 1}\n{oops\n{"step": 2}', /line 2 is not JSON/, 2);
    bad('{"step": 1}\n{oops\n', /line 2 is not JSON/, 2); // a whole line (it has its newline)
    bad('{"step": 1, "kl": null}', /`kl` is null, not a finite number/, 1);
    bad('{"step": 1, "kl": {"mean": null, "perTurn": [0.1]}}', /`kl.mean` is null, not a finite number/, 1);
    bad('{"step": 1, "kl": {"mean": 0.1, "perTurn": "x"}}', /`kl.perTurn` is "x", not a list/, 1);
    bad('{"step": 1, "successRate": null}', /`successRate` is null/, 1);
    bad('{"step": 1, "kl": 1e400}', /`kl` is a number too large for a double, not a finite number/, 1);
    bad('{"kl": 0.1}', /needs an integer `step`/, 1);
    bad('{"step": 2}\n{"step": 2}', /does not follow/, 2);
    bad('{"step": 1, "kl": "high"}', /`kl` is "high"/, 1);
    // A row of a kind no run writes was skipped like an eval row, its metrics silently lost.
    bad('{"step": 1, "kl": 0.4}\n{"kind": "bogus", "step": 2, "kl": 0.1}', /line 2: `kind` is "bogus"; a metrics row is "train" \(or has no `kind`\) or "eval"/, 2);
    bad('{"kind": null, "step": 1}', /`kind` is null/, 1);
  });
});
