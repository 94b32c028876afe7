/**
 * Feedback: values known at the start of a step from the metrics of the run so far (the `feedback`
 * level of plan/expr.ts), and the stateful rules that smooth and pace on them.
 *
 * An *observation* is the training metrics row of one finished step. At the start of step t the
 * latest observation is that of step t − 1 − s (s = staleness: the learner runs s steps behind the
 * explorer); before any step has finished (step 1, or steps 1..s+1 with staleness s) there is none:
 * `feedback.step` is 0, every other `feedback.*` variable and `kl_turn(i)` read 0, smoothers hold
 * their `init`, stages are 0.
 *
 * Each stateful node of the plan's trees (`ema`, `window_mean`, `stage`) advances once per
 * observation, inner nodes first; nodes with the same tree share one state. The tracker's state is
 * plain JSON (checkpointed with the curriculum state), and the whole thing is a pure function of the
 * sequence of observations, so a run, its resume, `tcod explain --trace` and the Trinity plugin's
 * Python (targets/trinity/plugin/tcod_runtime/core.py, same algorithm) agree step for step.
 *
 * Semantics, per observation (x = the node's first argument evaluated on the new observation):
 * - `ema(x, decay, init)`: the first observation sets m = x; later ones m ← decay·m + (1 − decay)·x.
 * - `window_mean(x, size, init)`: the mean of the last `size` observations of x.
 * - `stage(cond, patience, max)`: while stage < max, a held `cond` extends the streak, a failed one
 *   resets it to 0; when the streak reaches `patience` the stage advances by one and the streak
 *   restarts at 0. (`cond` held for `patience` consecutive observed steps → one stage.)
 */
import { UserError } from "./errors.js";
import { jsonSyntaxError } from "./json-error.js";
import {
  evalScalar, STATEFUL_OPS, VARIABLES, type ExprDef, type ExprTree, type ExtFns, type FeedbackView, type ScalarVars, type VariableName,
} from "./expr.js";
import { printExpr } from "./print.js";

/** One finished training step's metrics, as the feedback level reads them. */
export interface Observation {
  step: number;
  successRate: number;
  meanReward: number;
  kl: { mean: number; perTurn: (number | null)[] };
  admissibleRate: number;
  horizon: number;
  prefix: number;
  studentTurns: number;
}

/** The feedback variables and the observation field each reads. */
export const FEEDBACK_FIELDS: Record<string, (o: Observation) => number> = {
  "feedback.step": (o) => o.step,
  "feedback.success": (o) => o.successRate,
  "feedback.reward": (o) => o.meanReward,
  "feedback.kl": (o) => o.kl.mean,
  "feedback.admissible": (o) => o.admissibleRate,
  "feedback.horizon": (o) => o.horizon,
  "feedback.prefix": (o) => o.prefix,
  "feedback.student_turns": (o) => o.studentTurns,
};

export type NodeState =
  | { kind: "ema"; value: number; seen: number }
  | { kind: "window_mean"; values: number[] }
  | { kind: "stage"; stage: number; streak: number; advancedAt: number | null; signal: number | null };

export interface FeedbackSnapshot {
  /** Observations taken so far. */
  seen: number;
  last: Observation | null;
  /** State per stateful node, by name (`stage#1`, `ema#1`, …). */
  nodes: Record<string, NodeState>;
}

/** What a metrics row records of the feedback in force for its step. */
export interface FeedbackSummary {
  /** The step whose metrics were read (0: none yet). */
  step: number;
  /** Value of each stateful node in force (stages, smoothed signals). */
  values: Record<string, number>;
  /** Each stage: its streak, the observed step that last advanced it, and the signal then. */
  stages: Record<string, { stage: number; streak: number; advancedAt: number | null; signal: number | null; rule: string }>;
}

const COMPARISONS = new Set(["lt", "le", "gt", "ge", "eq", "ne"]);

interface StatefulNode { name: string; key: string; tree: Extract<ExprTree, { args: ExprTree[] }> }

/** Canonical key of a tree (its JSON with keys in a fixed order). */
function keyOf(t: ExprTree): string {
  if (t.op === "const") return `c:${t.value}`;
  if (t.op === "var") return `v:${t.name}`;
  if (t.op === "ext") return `x:${t.fn}(${t.args.map(keyOf).join(",")})`;
  return `${t.op}(${t.args.map(keyOf).join(",")})`;
}

/**
 * The stateful nodes of a plan's expressions, in update order: expressions by id, each tree in
 * post-order (arguments before the node), a tree seen before keeping its first name.
 */
export function statefulNodes(exprs: Record<string, ExprDef>): StatefulNode[] {
  const out: StatefulNode[] = [];
  const seen = new Set<string>();
  const counts: Record<string, number> = {};
  const walk = (t: ExprTree): void => {
    if (t.op === "const" || t.op === "var") return;
    t.args.forEach(walk);
    if (!(STATEFUL_OPS as readonly string[]).includes(t.op)) return;
    const key = keyOf(t);
    if (seen.has(key)) return;
    seen.add(key);
    counts[t.op] = (counts[t.op] ?? 0) + 1;
    out.push({ name: `${t.op}#${counts[t.op]}`, key, tree: t as StatefulNode["tree"] });
  };
  for (const id of Object.keys(exprs).sort()) walk(exprs[id]!.tree);
  return out;
}

/** Does the plan read feedback at all? */
export function hasFeedback(exprs: Record<string, ExprDef>): boolean {
  return Object.values(exprs).some((d) => d.level === "feedback" || readsAny(d.tree));
}
function readsAny(t: ExprTree): boolean {
  if (t.op === "const") return false;
  if (t.op === "var") return VARIABLES[t.name] === "feedback";
  if (t.op === "kl_turn" || (STATEFUL_OPS as readonly string[]).includes(t.op)) return true;
  return t.args.some(readsAny);
}

const initial = (kind: string): NodeState =>
  kind === "ema" ? { kind: "ema", value: 0, seen: 0 }
    : kind === "window_mean" ? { kind: "window_mean", values: [] }
      : { kind: "stage", stage: 0, streak: 0, advancedAt: null, signal: null };

export class FeedbackTracker {
  readonly nodes: StatefulNode[];
  private readonly byKey = new Map<string, StatefulNode>();
  private readonly keys = new WeakMap<object, string>();
  private state: FeedbackSnapshot;

  constructor(exprs: Record<string, ExprDef>, private readonly ext: ExtFns = {}) {
    this.nodes = statefulNodes(exprs);
    for (const n of this.nodes) this.byKey.set(n.key, n);
    this.state = { seen: 0, last: null, nodes: Object.fromEntries(this.nodes.map((n) => [n.name, initial(n.tree.op)])) };
  }

  /** The feedback variables in force (0 before the first observation). */
  vars(): ScalarVars {
    const o = this.state.last;
    return Object.fromEntries(Object.entries(FEEDBACK_FIELDS).map(([k, f]) => [k, o ? f(o) : 0])) as ScalarVars;
  }

  /** What the feedback operators read, for evalScalar / evalTurns (live: it follows later observations). */
  view(): FeedbackView { return this.viewOf(this.state); }

  /** A view of the state as it is now, unaffected by later observations (replays keep one per step). */
  frozenView(): FeedbackView { return this.viewOf(structuredClone(this.state)); }

  private viewOf(state: FeedbackSnapshot): FeedbackView {
    return {
      klTurn: (i) => {
        const o = state.last;
        if (!o) return 0;
        const v = Number.isInteger(i) && i >= 0 ? o.kl.perTurn[i] : undefined;
        return v === undefined || v === null ? o.kl.mean : v;
      },
      stateful: (node) => this.valueIn(state, this.nodeFor(node)),
    };
  }

  /**
   * Takes one observation. `clock` holds the clock variables of the step about to start (`step`,
   * `total_steps`; `observeClock`), for rules whose arguments also read the clock.
   */
  observe(o: Observation, clock: ScalarVars): void {
    this.state.last = structuredClone(o);
    this.state.seen++;
    const vars = { ...clock, ...this.vars() };
    const fb = this.view();
    const arg = (n: StatefulNode, i: number) => evalScalar(n.tree.args[i]!, vars, this.ext, fb);
    for (const n of this.nodes) {
      const s = this.state.nodes[n.name]!;
      if (s.kind === "ema") {
        const x = arg(n, 0), decay = arg(n, 1);
        s.value = s.seen === 0 ? x : decay * s.value + (1 - decay) * x;
        s.seen++;
      } else if (s.kind === "window_mean") {
        const size = Math.max(1, Math.floor(arg(n, 1)));
        s.values.push(arg(n, 0));
        if (s.values.length > size) s.values.splice(0, s.values.length - size);
      } else {
        const cond = n.tree.args[0]!;
        const held = arg(n, 0) !== 0, patience = arg(n, 1), max = arg(n, 2);
        if (s.stage >= max) { s.streak = 0; continue; }
        if (!held) { s.streak = 0; continue; }
        s.streak++;
        if (s.streak >= patience) {
          s.stage++;
          s.streak = 0;
          s.advancedAt = o.step;
          s.signal = COMPARISONS.has(cond.op) && "args" in cond ? evalScalar(cond.args[0]!, vars, this.ext, fb) : null;
        }
      }
    }
  }

  summary(): FeedbackSummary {
    const values: FeedbackSummary["values"] = {};
    const stages: FeedbackSummary["stages"] = {};
    for (const n of this.nodes) {
      values[n.name] = this.valueOf(n);
      const s = this.state.nodes[n.name]!;
      if (s.kind === "stage") stages[n.name] = { stage: s.stage, streak: s.streak, advancedAt: s.advancedAt, signal: s.signal, rule: printExpr(n.tree.args[0]!) };
    }
    return { step: this.state.last?.step ?? 0, values, stages };
  }

  snapshot(): FeedbackSnapshot { return structuredClone(this.state); }

  restore(s: FeedbackSnapshot): void {
    const nodes = { ...this.state.nodes };
    for (const n of this.nodes) if (s.nodes[n.name]?.kind === n.tree.op) nodes[n.name] = structuredClone(s.nodes[n.name]!);
    this.state = { seen: s.seen, last: structuredClone(s.last), nodes };
  }

  private nodeFor(t: ExprTree): StatefulNode {
    let key = this.keys.get(t);
    if (key === undefined) { key = keyOf(t); this.keys.set(t, key); }
    const n = this.byKey.get(key);
    if (!n) throw new Error(`stateful node ${printExpr(t)} is not among the plan's expressions`);
    return n;
  }

  private valueOf(n: StatefulNode): number { return this.valueIn(this.state, n); }

  private valueIn(state: FeedbackSnapshot, n: StatefulNode): number {
    const s = state.nodes[n.name]!;
    switch (s.kind) {
      case "ema": return s.seen === 0 ? this.init(n) : s.value;
      case "window_mean": return s.values.length === 0 ? this.init(n) : s.values.reduce((a, b) => a + b, 0) / s.values.length;
      case "stage": return s.stage;
    }
  }

  /** A smoother's `init` (a constant: the compiler refuses anything else). */
  private init(n: StatefulNode): number {
    return evalScalar(n.tree.args[2]!, {});
  }
}

// ---- traces ----------------------------------------------------------------------------------------

/** A metrics trace that cannot be read (TC7013). */
export class TraceError extends UserError {
  readonly code = "TC7013";
}

/**
 * Reads a metrics trace: RUN_DIR/metrics.jsonl of a run, or a synthetic file of the same shape.
 * Training rows (`kind` "train" or absent) become observations; evaluation rows (`kind` "eval") are
 * skipped, and a row of any other kind is refused. A synthetic row needs `step` and may give any of `successRate`, `meanReward`, `kl`
 * (a number, or `{mean, perTurn}`), `admissibleRate`, `horizon`, `prefix`, `studentTurns`; those it
 * leaves out read 0, but one it gives must be a finite number (null is refused: it is how JSON writes
 * NaN, and reading it as 0 would advance a stage on a number no run measured). Steps must increase.
 * A last line without its newline that is not JSON is a row being written (a live or killed run's
 * file): it is skipped, as `tcod metrics` and `tcod compare` skip it, and `partialLastLine` is told.
 */
export function parseTrace(text: string, file: string, partialLastLine?: (line: number) => void): Observation[] {
  const out: Observation[] = [];
  const lines = text.split("\n");
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    const where = { file, line: i + 1, column: 1 };
    let row: Record<string, unknown>;
    try { row = JSON.parse(line) as Record<string, unknown>; } catch (e) {
      // `text` ends in a newline unless its last line is unterminated: then this is that line.
      if (i === lines.length - 1) { partialLastLine?.(i + 1); return; }
      const j = jsonSyntaxError(e, line, { line: i + 1 });
      if (!j) throw e;
      throw new TraceError(`line ${i + 1} is not JSON (${j.message})`, { where: { file, line: j.line, column: j.column }, hint: "A trace is JSON lines: one object per line, e.g. {\"step\": 1, \"kl\": 0.4}." });
    }
    if (!row || typeof row !== "object" || Array.isArray(row)) throw new TraceError(`line ${i + 1} is not a JSON object`, { where, hint: "A trace is JSON lines: one object per line, e.g. {\"step\": 1, \"kl\": 0.4}." });
    if (row.kind !== undefined && row.kind !== "train") {
      if (row.kind === "eval") return;
      // Any other kind is no row a run writes: skipping it like an eval row would lose its metrics unsaid.
      throw new TraceError(`line ${i + 1}: \`kind\` is ${JSON.stringify(row.kind)}; a metrics row is "train" (or has no \`kind\`) or "eval"`, { where, hint: "Give a training row `\"kind\": \"train\"` or no `kind` (an \"eval\" row is skipped), or remove the line." });
    }
    const num = (k: string, v: unknown): number => {
      if (v === undefined) return 0;
      if (typeof v !== "number" || !Number.isFinite(v)) {
        // JSON.parse reads a number too large for a double (1e400) as Infinity.
        const what = typeof v === "number" ? "a number too large for a double" : JSON.stringify(v);
        throw new TraceError(`line ${i + 1}: \`${k}\` is ${what}, not a finite number`, { where, hint: "Every metric of a trace row is a finite number; leave out one the trace does not have (it reads 0)." });
      }
      return v;
    };
    if (typeof row.step !== "number" || !Number.isInteger(row.step) || row.step < 1) {
      throw new TraceError(`line ${i + 1}: a training row needs an integer \`step\` ≥ 1`, { where, hint: "Number the rows by the step whose metrics they hold: {\"step\": 1, …}." });
    }
    const prev = out[out.length - 1];
    if (prev && row.step <= prev.step) throw new TraceError(`line ${i + 1}: step ${row.step} does not follow step ${prev.step}`, { where, hint: "Steps of a trace must increase." });
    const kl = row.kl;
    let klv: Observation["kl"];
    if (kl && typeof kl === "object" && !Array.isArray(kl)) {
      const k = kl as { mean?: unknown; perTurn?: unknown };
      if (k.perTurn !== undefined && !Array.isArray(k.perTurn)) {
        throw new TraceError(`line ${i + 1}: \`kl.perTurn\` is ${JSON.stringify(k.perTurn)}, not a list`, { where, hint: "`kl.perTurn` lists each turn's KL: numbers, null for a turn no episode reached." });
      }
      // null is allowed here: a turn no episode of the step reached (runtime/learner.ts klSummary).
      const per = (k.perTurn ?? []).map((x) => (x === null ? null : num("kl.perTurn", x)));
      klv = { mean: num("kl.mean", k.mean), perTurn: per };
    } else klv = { mean: num("kl", kl), perTurn: [] };
    out.push({
      step: row.step, successRate: num("successRate", row.successRate), meanReward: num("meanReward", row.meanReward), kl: klv,
      admissibleRate: num("admissibleRate", row.admissibleRate), horizon: num("horizon", row.horizon), prefix: num("prefix", row.prefix),
      studentTurns: num("studentTurns", row.studentTurns),
    });
  });
  return out;
}

/** The observation of a training metrics row. */
export function observationOf(row: Observation): Observation {
  return {
    step: row.step, successRate: row.successRate, meanReward: row.meanReward, kl: { mean: row.kl.mean, perTurn: [...row.kl.perTurn] },
    admissibleRate: row.admissibleRate, horizon: row.horizon, prefix: row.prefix, studentTurns: row.studentTurns,
  };
}

/** The clock when the row of step u is observed: the start of step u + 1 + staleness. */
export function observeClock(u: number, staleness: number, steps: number): ScalarVars {
  return { step: u + 1 + staleness, total_steps: steps };
}

export interface Replay {
  /** Steps 1..steps; at each, the feedback vars and view in force (a fresh tracker walked along the trace). */
  at(step: number): { vars: ScalarVars; view: FeedbackView; summary: FeedbackSummary };
}

/**
 * Replays a trace through a fresh tracker, as a run would: at the start of step t, every
 * observation of a step ≤ t − 1 − staleness has been taken. Steps past the trace's end see no new
 * observation (the state holds).
 */
export function replayTrace(exprs: Record<string, ExprDef>, trace: Observation[], opts: { steps: number; staleness: number; ext?: ExtFns }): Replay {
  let tracker = new FeedbackTracker(exprs, opts.ext);
  let next = 0;
  let current = 0;
  const at = (step: number) => {
    if (step < current) { tracker = new FeedbackTracker(exprs, opts.ext); next = 0; }
    current = step;
    while (next < trace.length && trace[next]!.step <= step - 1 - opts.staleness) {
      tracker.observe(trace[next]!, observeClock(trace[next]!.step, opts.staleness, opts.steps));
      next++;
    }
    return { vars: tracker.vars(), view: tracker.frozenView(), summary: tracker.summary() };
  };
  return { at };
}

export const FEEDBACK_VARIABLES = Object.keys(FEEDBACK_FIELDS) as VariableName[];
