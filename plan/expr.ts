/**
 * Expression trees: how a schedule, a prefix rule or a turn weight travels from compiler to runtime.
 * Data, not code. Scalars (step and episode level) evaluate to one number; turn-level trees evaluate
 * vectorised over every turn of a batch, so batch reductions (zscore) and per-episode reductions
 * (softmax_over_turns) are ordinary operators.
 */
import { UserError } from "./errors.js";

/**
 * Binding-time levels, from the earliest known. `feedback` sits between `step` (clock only) and
 * `episode`: known at the start of a step, from the metrics of the run so far (plan/feedback.ts).
 */
export const LEVELS = ["const", "step", "feedback", "episode", "turn", "token"] as const;
export type Level = (typeof LEVELS)[number];
export const levelRank = (l: Level): number => LEVELS.indexOf(l);
export const maxLevel = (a: Level, b: Level): Level => (levelRank(a) >= levelRank(b) ? a : b);

/** Runtime variables and the level at which each becomes known (docs/LANGUAGE.md). */
export const VARIABLES = {
  step: "step",
  total_steps: "const",
  "feedback.step": "feedback",
  "feedback.success": "feedback",
  "feedback.reward": "feedback",
  "feedback.kl": "feedback",
  "feedback.admissible": "feedback",
  "feedback.horizon": "feedback",
  "feedback.prefix": "feedback",
  "feedback.student_turns": "feedback",
  "episode.expert_length": "episode",
  "episode.max_turns": "episode",
  "episode.turns": "turn",
  "turn.index": "turn",
  "turn.kl": "turn",
  "turn.entropy": "turn",
  "turn.tokens": "turn",
  "token.logp_student": "token",
  "token.logp_teacher": "token",
} as const satisfies Record<string, Level>;
export type VariableName = keyof typeof VARIABLES;

/** Pointwise operators (any level). */
export const POINTWISE_OPS = [
  "add", "sub", "mul", "div", "neg", "min", "max", "clamp", "floor", "ceil", "round", "abs",
  "exp", "log", "sqrt", "pow", "cos", "sin", "lt", "le", "gt", "ge", "eq", "ne", "and", "or", "not", "if",
] as const;
/** Reductions over the turns of a batch (turn level only). */
export const TURN_REDUCTIONS = ["zscore", "softmax_over_turns", "episode_mean", "batch_mean"] as const;
/**
 * Feedback operators (plan/feedback.ts): `kl_turn(i)` reads the last observed step's mean KL at turn
 * index i; `ema`, `window_mean` and `stage` are stateful — their state advances once per observed
 * training step and is part of the curriculum state (checkpointed).
 */
export const FEEDBACK_OPS = ["kl_turn", "ema", "window_mean", "stage"] as const;
export const STATEFUL_OPS = ["ema", "window_mean", "stage"] as const;
export type Op = (typeof POINTWISE_OPS)[number] | (typeof TURN_REDUCTIONS)[number] | (typeof FEEDBACK_OPS)[number];

export type ExprTree =
  | { op: "const"; value: number }
  | { op: "var"; name: VariableName }
  | { op: Op; args: ExprTree[] }
  /** A function from a TypeScript extension (plan.bundle.mjs), called pointwise. */
  | { op: "ext"; fn: string; args: ExprTree[] };

export interface ExprDef {
  level: Level;
  /** Unit of the value, e.g. "turns", "steps", "" for dimensionless. Informational for the runtime. */
  unit: string;
  tree: ExprTree;
  /** Where in the source this expression was written, "file:line:col", for `explain` and reports. */
  origin?: string;
}

/** A plan field is either a folded constant or a reference to an expression in `plan.exprs`. */
export type ValueRef = number | { expr: string };

export type ScalarVars = Partial<Record<VariableName, number>>;
export type ExtFns = Record<string, (...args: number[]) => number>;

/**
 * What the feedback operators read: the last observed step's per-turn KL and the value of each
 * stateful node (plan/feedback.ts `FeedbackTracker.view`). Absent where no trace is known.
 */
export interface FeedbackView {
  klTurn(index: number): number;
  stateful(node: ExprTree): number;
}

/** A tree that cannot be evaluated here (TC7005). */
export class ExprError extends UserError {
  readonly code = "TC7005";
}

/**
 * A feedback-level value evaluated without a metrics trace (TC7012): `tcod explain` and `tcod plot`
 * need `--trace RUN_DIR/metrics.jsonl` (or a synthetic trace) to show it.
 */
export class NeedsTraceError extends UserError {
  readonly code = "TC7012";
  constructor(message: string) {
    super(message, { hint: "Give a metrics trace: `--trace RUN_DIR/metrics.jsonl`, or a synthetic one (JSON lines with `step` and e.g. `kl`, `successRate`; docs/LANGUAGE.md#feedback)." });
  }
}

/** Does the tree read the run's metrics (a feedback variable or operator)? */
export function readsFeedback(tree: ExprTree): boolean {
  if (tree.op === "const") return false;
  if (tree.op === "var") return VARIABLES[tree.name] === "feedback";
  if ((FEEDBACK_OPS as readonly string[]).includes(tree.op)) return true;
  return tree.args.some(readsFeedback);
}

/** Evaluates a const/step/feedback/episode-level tree to a number (feedback values need `fb`). */
export function evalScalar(tree: ExprTree, vars: ScalarVars, ext: ExtFns = {}, fb?: FeedbackView): number {
  switch (tree.op) {
    case "const": return tree.value;
    case "var": {
      const v = vars[tree.name];
      if (v === undefined) {
        if (VARIABLES[tree.name] === "feedback") throw new NeedsTraceError(`${tree.name} reads the run's metrics and needs a trace`);
        throw new ExprError(`variable ${tree.name} is not available here`);
      }
      return v;
    }
    case "ext": {
      const f = ext[tree.fn];
      if (!f) throw new ExprError(`extension function ${tree.fn} is not loaded`);
      return f(...tree.args.map((a) => evalScalar(a, vars, ext, fb)));
    }
    default: {
      if ((TURN_REDUCTIONS as readonly string[]).includes(tree.op)) {
        throw new ExprError(`${tree.op} needs the turns of a batch`);
      }
      if ((FEEDBACK_OPS as readonly string[]).includes(tree.op)) {
        if (!fb) throw new NeedsTraceError(`${tree.op}(…) reads the run's metrics and needs a trace`);
        return tree.op === "kl_turn" ? fb.klTurn(evalScalar(tree.args[0]!, vars, ext, fb)) : fb.stateful(tree);
      }
      if (tree.op === "if") {
        const [c, a, b] = tree.args;
        return evalScalar(c!, vars, ext, fb) !== 0 ? evalScalar(a!, vars, ext, fb) : evalScalar(b!, vars, ext, fb);
      }
      return pointwise(tree.op, tree.args.map((a) => evalScalar(a, vars, ext, fb)));
    }
  }
}

/**
 * `evalScalar` for one tree at many points: the tree is turned into nested closures once, so each
 * point costs no dispatch on the operator name and no argument arrays (the compiler's range checks
 * evaluate a schedule at every step × expert length). Same results, same errors, at the same points:
 * an `if` evaluates only its chosen branch; an extension function, a turn reduction or a feedback
 * operator (no trace here) throws when evaluated, as in `evalScalar`.
 */
export function compileScalar(tree: ExprTree, ext: ExtFns = {}): (vars: ScalarVars) => number {
  switch (tree.op) {
    case "const": { const value = tree.value; return () => value; }
    case "var": {
      const name = tree.name;
      return (vars) => {
        const v = vars[name];
        return v === undefined ? evalScalar(tree, vars, ext) : v; // evalScalar throws the error
      };
    }
    case "ext": {
      const args = tree.args.map((a) => compileScalar(a, ext));
      const fn = tree.fn;
      return (vars) => {
        const f = ext[fn];
        if (!f) throw new ExprError(`extension function ${fn} is not loaded`);
        return f(...args.map((a) => a(vars)));
      };
    }
    default: {
      if ((TURN_REDUCTIONS as readonly string[]).includes(tree.op) || (FEEDBACK_OPS as readonly string[]).includes(tree.op)) {
        return (vars) => evalScalar(tree, vars, ext);
      }
      const args = tree.args.map((a) => compileScalar(a, ext));
      const [a = nan, b = nan, c = nan] = args;
      const n = args.length;
      switch (tree.op) {
        case "if": if (n === 3) return (v) => (a(v) !== 0 ? b(v) : c(v)); break;
        case "add": if (n === 2) return (v) => a(v) + b(v); break;
        case "sub": if (n === 2) return (v) => a(v) - b(v); break;
        case "mul": if (n === 2) return (v) => a(v) * b(v); break;
        case "div": if (n === 2) return (v) => a(v) / b(v); break;
        case "neg": if (n === 1) return (v) => -a(v); break;
        case "min": if (n === 2) return (v) => Math.min(a(v), b(v)); break;
        case "max": if (n === 2) return (v) => Math.max(a(v), b(v)); break;
        case "floor": if (n === 1) return (v) => Math.floor(a(v)); break;
        case "lt": if (n === 2) return (v) => (a(v) < b(v) ? 1 : 0); break;
        case "le": if (n === 2) return (v) => (a(v) <= b(v) ? 1 : 0); break;
        case "gt": if (n === 2) return (v) => (a(v) > b(v) ? 1 : 0); break;
        case "ge": if (n === 2) return (v) => (a(v) >= b(v) ? 1 : 0); break;
        case "eq": if (n === 2) return (v) => (a(v) === b(v) ? 1 : 0); break;
        case "ne": if (n === 2) return (v) => (a(v) !== b(v) ? 1 : 0); break;
        case "and": if (n === 2) return (v) => { const x = a(v); const y = b(v); return x !== 0 && y !== 0 ? 1 : 0; }; break;
        case "or": if (n === 2) return (v) => { const x = a(v); const y = b(v); return x !== 0 || y !== 0 ? 1 : 0; }; break;
        case "pow": if (n === 2) return (v) => { const x = a(v); return Math.pow(x, b(v)); }; break;
        case "not": if (n === 1) return (v) => (a(v) === 0 ? 1 : 0); break;
        // As `pointwise`, every argument first, in order (without an array per evaluation).
        case "clamp": if (n === 3) return (v) => { const x = a(v); const y = b(v); const z = c(v); return Math.max(y, Math.min(x, z)); }; break;
        case "ceil": if (n === 1) return (v) => Math.ceil(a(v)); break;
        case "round": if (n === 1) return (v) => Math.round(a(v)); break;
        case "abs": if (n === 1) return (v) => Math.abs(a(v)); break;
        case "exp": if (n === 1) return (v) => Math.exp(a(v)); break;
        case "log": if (n === 1) return (v) => Math.log(a(v)); break;
        case "sqrt": if (n === 1) return (v) => Math.sqrt(a(v)); break;
        case "cos": if (n === 1) return (v) => Math.cos(a(v)); break;
        case "sin": if (n === 1) return (v) => Math.sin(a(v)); break;
      }
      const op = tree.op;
      return (v) => pointwise(op, args.map((x) => x(v)));
    }
  }
}
const nan = (): number => NaN;

/**
 * A value over a grid of steps (rows) × expert lengths (columns): one number, one per row, one per
 * column, or one per point (row-major). `shape` has bit 1 when it varies with the row, bit 2 with
 * the column.
 */
interface GridValue { shape: 0 | 1 | 2 | 3; v: Float64Array }

/**
 * `evalScalar` at every point of a grid at once: `steps` × `lengths` (`step` and
 * `episode.expert_length`), with `total_steps` and `episode.max_turns` fixed; the values row by row.
 * For the compiler's range checks, which evaluate a schedule at thousands of points: a node that
 * reads only the step (or only the expert length, or neither) is computed once per row (column, or
 * once), and the rest in one loop per node, with no call per node and point. Undefined for a tree
 * whose evaluation can throw at some point (an extension function, a turn reduction, a feedback
 * operator, another variable) or an operator arity `compileScalar` has no closure for: those are
 * evaluated point by point, which reports each point's error. Every point gets the value
 * `evalScalar` gives it: the same operations on the same doubles (an `if` computes both branches,
 * which cannot throw here, and keeps the chosen one).
 */
export function evalScalarGrid(tree: ExprTree, steps: Float64Array, lengths: Float64Array, fixed: { total_steps: number; "episode.max_turns": number }): Float64Array | undefined {
  const R = steps.length;
  const C = lengths.length;
  const one = (x: number): GridValue => ({ shape: 0, v: Float64Array.of(x) });
  // The value of `a` at (r, c) is a.v[r·rowStride(a) + c·colStride(a)].
  const rowStride = (a: GridValue): number => (a.shape & 1 ? (a.shape & 2 ? C : 1) : 0);
  const colStride = (a: GridValue): number => (a.shape & 2 ? 1 : 0);
  const map = (op: number, x: GridValue, y: GridValue, z: GridValue): GridValue => {
    const shape = (x.shape | y.shape | z.shape) as GridValue["shape"];
    const rows = shape & 1 ? R : 1;
    const cols = shape & 2 ? C : 1;
    const out = new Float64Array(rows * cols);
    const xr = rowStride(x), xc = colStride(x), yr = rowStride(y), yc = colStride(y), zr = rowStride(z), zc = colStride(z);
    const xv = x.v, yv = y.v, zv = z.v;
    for (let r = 0, k = 0; r < rows; r++) for (let c = 0; c < cols; c++) out[k++] = gridOp(op, xv[r * xr + c * xc]!, yv[r * yr + c * yc]!, zv[r * zr + c * zc]!);
    return { shape, v: out };
  };
  const ev = (t: ExprTree): GridValue | undefined => {
    switch (t.op) {
      case "const": return one(t.value);
      case "var":
        return t.name === "step" ? { shape: 1, v: steps } : t.name === "episode.expert_length" ? { shape: 2, v: lengths }
          : t.name === "total_steps" ? one(fixed.total_steps) : t.name === "episode.max_turns" ? one(fixed["episode.max_turns"]) : undefined;
      case "ext": return undefined;
    }
    const op = GRID_OPS.get(`${t.op}/${t.args.length}`);
    if (op === undefined) return undefined;
    const args = t.args.map(ev);
    if (args.includes(undefined)) return undefined;
    const [x, y = NO_ARG, z = NO_ARG] = args as GridValue[];
    return map(op, x!, y, z);
  };
  const out = ev(tree);
  if (!out) return undefined;
  return out.shape === 3 ? out.v : broadcast(out, R, C);
}
/** A grid value as one number per point. */
function broadcast(a: GridValue, R: number, C: number): Float64Array {
  const out = new Float64Array(R * C);
  for (let r = 0, k = 0; r < R; r++) for (let c = 0; c < C; c++) out[k++] = a.v[a.shape === 0 ? 0 : a.shape === 1 ? r : c]!;
  return out;
}
/** The operators (with their arity) of `compileScalar`'s closures; `gridOp` computes operator i. */
const GRID_OPS = new Map([
  "add/2", "sub/2", "mul/2", "div/2", "neg/1", "min/2", "max/2", "floor/1", "ceil/1", "round/1", "abs/1",
  "exp/1", "log/1", "sqrt/1", "cos/1", "sin/1", "pow/2", "lt/2", "le/2", "gt/2", "ge/2", "eq/2", "ne/2",
  "and/2", "or/2", "not/1", "clamp/3", "if/3",
].map((name, i) => [name, i]));
/** The argument an operator of fewer than three arguments does not have (its value is never read). */
const NO_ARG: GridValue = { shape: 0, v: Float64Array.of(NaN) };
// One function with a switch rather than a function per operator: the loop above stays one
// optimized loop (a call per point through a different function per node was the slow part).
function gridOp(op: number, x: number, y: number, z: number): number {
  switch (op) {
    case 0: return x + y;
    case 1: return x - y;
    case 2: return x * y;
    case 3: return x / y;
    case 4: return -x;
    case 5: return Math.min(x, y);
    case 6: return Math.max(x, y);
    case 7: return Math.floor(x);
    case 8: return Math.ceil(x);
    case 9: return Math.round(x);
    case 10: return Math.abs(x);
    case 11: return Math.exp(x);
    case 12: return Math.log(x);
    case 13: return Math.sqrt(x);
    case 14: return Math.cos(x);
    case 15: return Math.sin(x);
    case 16: return Math.pow(x, y);
    case 17: return x < y ? 1 : 0;
    case 18: return x <= y ? 1 : 0;
    case 19: return x > y ? 1 : 0;
    case 20: return x >= y ? 1 : 0;
    case 21: return x === y ? 1 : 0;
    case 22: return x !== y ? 1 : 0;
    case 23: return x !== 0 && y !== 0 ? 1 : 0;
    case 24: return x !== 0 || y !== 0 ? 1 : 0;
    case 25: return x === 0 ? 1 : 0;
    case 26: return Math.max(y, Math.min(x, z)); // clamp(x, lo, hi)
    default: return x !== 0 ? y : z; // if(k, a, b)
  }
}

/** Evaluates a scalar-level value reference. */
export function evalRef(ref: ValueRef, exprs: Record<string, ExprDef>, vars: ScalarVars, ext: ExtFns = {}, fb?: FeedbackView): number {
  if (typeof ref === "number") return ref;
  const def = exprs[ref.expr];
  if (!def) throw new ExprError(`expression ${ref.expr} is not in the plan`);
  return evalScalar(def.tree, vars, ext, fb);
}

export function pointwise(op: string, a: number[]): number {
  const [x = NaN, y = NaN, z3 = NaN] = a;
  switch (op) {
    case "add": return x + y;
    case "sub": return x - y;
    case "mul": return x * y;
    case "div": return x / y;
    case "neg": return -x;
    case "min": return Math.min(...a);
    case "max": return Math.max(...a);
    case "clamp": return Math.max(y, Math.min(x, z3)); // clamp(x, lo, hi) = max(lo, min(x, hi)), as TCOD b2f
    case "floor": return Math.floor(x);
    case "ceil": return Math.ceil(x);
    case "round": return Math.round(x);
    case "abs": return Math.abs(x);
    case "exp": return Math.exp(x);
    case "log": return Math.log(x);
    case "sqrt": return Math.sqrt(x);
    case "pow": return Math.pow(x, y);
    case "cos": return Math.cos(x);
    case "sin": return Math.sin(x);
    case "lt": return x < y ? 1 : 0;
    case "le": return x <= y ? 1 : 0;
    case "gt": return x > y ? 1 : 0;
    case "ge": return x >= y ? 1 : 0;
    case "eq": return x === y ? 1 : 0;
    case "ne": return x !== y ? 1 : 0;
    case "and": return x !== 0 && y !== 0 ? 1 : 0;
    case "or": return x !== 0 || y !== 0 ? 1 : 0;
    case "not": return x === 0 ? 1 : 0;
    case "if": return x !== 0 ? y : z3;
    default: throw new ExprError(`unknown operator ${op}`);
  }
}

/** The turns of a batch, flattened: turn i belongs to episode `episodeOf[i]`. */
export interface TurnBatch {
  n: number;
  episodeOf: Int32Array;
  /** Turn-level variables, one entry per turn (`turn.kl`, `turn.index`, `episode.turns`…). */
  vars: Partial<Record<VariableName, Float64Array>>;
  /** Step-level and episode-level scalars known for the whole batch (`step`). */
  scalars: ScalarVars;
  /** The feedback in force for the batch's step (plan/feedback.ts), when the plan reads any. */
  feedback?: FeedbackView;
}

const ZSCORE_EPS = 1e-6;

/** Evaluates a turn-level tree over every turn of a batch. */
export function evalTurns(tree: ExprTree, batch: TurnBatch, ext: ExtFns = {}): Float64Array {
  const n = batch.n;
  switch (tree.op) {
    case "const": return new Float64Array(n).fill(tree.value);
    case "var": {
      const v = batch.vars[tree.name];
      if (v) return v;
      const s = batch.scalars[tree.name];
      if (s === undefined) throw new ExprError(`variable ${tree.name} is not available for turns`);
      return new Float64Array(n).fill(s);
    }
    case "ext": {
      const cols = tree.args.map((a) => evalTurns(a, batch, ext));
      const f = ext[tree.fn];
      if (!f) throw new ExprError(`extension function ${tree.fn} is not loaded`);
      return Float64Array.from({ length: n }, (_, i) => f(...cols.map((c) => c[i]!)));
    }
    case "zscore": {
      const x = evalTurns(tree.args[0]!, batch, ext);
      let mean = 0;
      for (let i = 0; i < n; i++) mean += x[i]!;
      mean /= Math.max(n, 1);
      let v = 0;
      for (let i = 0; i < n; i++) v += (x[i]! - mean) ** 2;
      const sd = Math.sqrt(v / Math.max(n, 1));
      return x.map((xi) => (xi - mean) / (sd + ZSCORE_EPS));
    }
    case "softmax_over_turns": {
      const x = evalTurns(tree.args[0]!, batch, ext);
      const maxBy = new Map<number, number>();
      for (let i = 0; i < n; i++) {
        const e = batch.episodeOf[i]!;
        maxBy.set(e, Math.max(maxBy.get(e) ?? -Infinity, x[i]!));
      }
      const sumBy = new Map<number, number>();
      const out = new Float64Array(n);
      for (let i = 0; i < n; i++) {
        const e = batch.episodeOf[i]!;
        out[i] = Math.exp(x[i]! - maxBy.get(e)!);
        sumBy.set(e, (sumBy.get(e) ?? 0) + out[i]!);
      }
      for (let i = 0; i < n; i++) out[i]! /= sumBy.get(batch.episodeOf[i]!)!;
      return out;
    }
    case "episode_mean": {
      const x = evalTurns(tree.args[0]!, batch, ext);
      const sum = new Map<number, number>();
      const cnt = new Map<number, number>();
      for (let i = 0; i < n; i++) {
        const e = batch.episodeOf[i]!;
        sum.set(e, (sum.get(e) ?? 0) + x[i]!);
        cnt.set(e, (cnt.get(e) ?? 0) + 1);
      }
      return Float64Array.from({ length: n }, (_, i) => sum.get(batch.episodeOf[i]!)! / cnt.get(batch.episodeOf[i]!)!);
    }
    case "batch_mean": {
      const x = evalTurns(tree.args[0]!, batch, ext);
      let s = 0;
      for (let i = 0; i < n; i++) s += x[i]!;
      return new Float64Array(n).fill(n > 0 ? s / n : 0);
    }
    case "kl_turn": case "ema": case "window_mean": case "stage":
      return new Float64Array(n).fill(evalScalar(tree, batch.scalars, ext, batch.feedback));
    default: {
      const cols = tree.args.map((a) => evalTurns(a, batch, ext));
      const out = new Float64Array(n);
      const row: number[] = new Array(cols.length);
      for (let i = 0; i < n; i++) {
        for (let j = 0; j < cols.length; j++) row[j] = cols[j]![i]!;
        out[i] = pointwise(tree.op, row);
      }
      return out;
    }
  }
}
