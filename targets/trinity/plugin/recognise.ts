/**
 * Recognises plans whose pacing is exactly what the official TCOD workflows of the Trinity-RFT fork
 * compute (docs/REFERENCES.md#tcod-f2b, #tcod-b2f), so the export can name those workflows instead of
 * generating a plugin:
 *   f2b: H(t) = min(1 + ⌊t/k⌋, Hmax)                     (TCOD_f2b_<env>_workflow, H0 hard-coded to 1)
 *   b2f: p(t) = clamp(L − 1 − ⌊t/k⌋, 0, L − 1)           (TCOD_b2f_<env>_workflow, L = expert length)
 *
 * Recognition is two-stage: a structural pass finds k (the divisor of `step` inside a `floor`), then a
 * numeric pass checks that the tree equals the official formula at every step of the run (and, for b2f,
 * at every expert length 0..Hmax). A tree that is written differently but computes the same values over
 * the run is therefore recognised; one that differs anywhere is not.
 */
import { evalScalar, type ExprTree, type ExprDef, type ValueRef } from "../../../plan/expr.js";

/** The number of the divisor k in the first `floor(step / k)` of a tree, after constant folding. */
export function findStepDivisor(tree: ExprTree): number | undefined {
  const t = simplify(tree);
  let found: number | undefined;
  const walk = (n: ExprTree): void => {
    if (found !== undefined || n.op === "const" || n.op === "var") return;
    if (n.op === "floor") {
      const a = n.args[0];
      // floor(step / 1) simplifies to floor(step): k = 1.
      if (a && a.op === "var" && a.name === "step") { found = 1; return; }
      if (a && a.op === "div" && a.args[0]?.op === "var" && a.args[0].name === "step" && a.args[1]?.op === "const") {
        found = a.args[1].value;
        return;
      }
    }
    n.args.forEach(walk);
  };
  walk(t);
  return found !== undefined && Number.isInteger(found) && found >= 1 ? found : undefined;
}

/** Folds constant subtrees and drops multiplicative/additive identities (×1, ÷1, +0, −0). */
export function simplify(tree: ExprTree): ExprTree {
  if (tree.op === "const" || tree.op === "var") return tree;
  const args = tree.args.map(simplify);
  if (tree.op !== "ext" && args.every((a) => a.op === "const") && !REDUCTIONS.has(tree.op)) {
    return { op: "const", value: evalScalar({ ...tree, args } as ExprTree, {}) };
  }
  const isConst = (a: ExprTree | undefined, v: number): boolean => a?.op === "const" && a.value === v;
  const [a, b] = args;
  if (tree.op === "mul" && isConst(b, 1)) return a!;
  if (tree.op === "mul" && isConst(a, 1)) return b!;
  if (tree.op === "div" && isConst(b, 1)) return a!;
  if ((tree.op === "add" || tree.op === "sub") && isConst(b, 0)) return a!;
  if (tree.op === "add" && isConst(a, 0)) return b!;
  return { ...tree, args } as ExprTree;
}
const REDUCTIONS = new Set(["zscore", "softmax_over_turns", "episode_mean", "batch_mean"]);

export const officialF2b = (t: number, k: number, hMax: number): number => Math.min(1 + Math.floor(t / k), hMax);
export const officialB2f = (t: number, k: number, expertLength: number): number =>
  Math.max(0, Math.min(expertLength - 1 - Math.floor(t / k), expertLength - 1));

/** The variables a step/episode-level tree may read when checked numerically. */
const PACING_VARS = new Set(["step", "total_steps", "episode.expert_length", "episode.max_turns"]);
function readsOnly(tree: ExprTree, allowed: Set<string>): boolean {
  if (tree.op === "const") return true;
  if (tree.op === "var") return allowed.has(tree.name);
  if (tree.op === "ext") return false;
  return tree.args.every((a) => readsOnly(a, allowed));
}

export interface PacingContext { steps: number; maxTurns: number }

/**
 * k when the horizon (absent = Hmax) is the official f2b schedule over the run, else undefined.
 * The runtime caps any horizon at Hmax, so values are compared after min(·, Hmax).
 */
export function recogniseF2b(horizon: ExprTree, ctx: PacingContext): number | undefined {
  if (!readsOnly(horizon, new Set(["step", "total_steps"]))) return undefined;
  const k = findStepDivisor(horizon);
  if (k === undefined) return undefined;
  for (let t = 1; t <= ctx.steps; t++) {
    const h = Math.min(evalScalar(horizon, { step: t, total_steps: ctx.steps }), ctx.maxTurns);
    if (h !== officialF2b(t, k, ctx.maxTurns)) return undefined;
  }
  return k;
}

/** k when the prefix is the official b2f rule for every step of the run and expert length 0..Hmax. */
export function recogniseB2f(prefix: ExprTree, ctx: PacingContext): number | undefined {
  if (!readsOnly(prefix, PACING_VARS)) return undefined;
  const k = findStepDivisor(prefix);
  if (k === undefined) return undefined;
  for (let t = 1; t <= ctx.steps; t++) {
    for (let len = 0; len <= ctx.maxTurns; len++) {
      const vars = { step: t, total_steps: ctx.steps, "episode.expert_length": len, "episode.max_turns": ctx.maxTurns };
      if (evalScalar(prefix, vars) !== officialB2f(t, k, len)) return undefined;
    }
  }
  return k;
}

/** The tree behind a value reference (a folded constant becomes a `const` tree). */
export function treeOf(ref: ValueRef, exprs: Record<string, ExprDef>): ExprTree {
  if (typeof ref === "number") return { op: "const", value: ref };
  const def = exprs[ref.expr];
  if (!def) throw new Error(`the plan refers to expression '${ref.expr}', which is not in plan.exprs`);
  return def.tree;
}

/** A step-level value that is the same number at every step of the run, else undefined. */
export function constantOverRun(ref: ValueRef, exprs: Record<string, ExprDef>, steps: number): number | undefined {
  if (typeof ref === "number") return ref;
  const tree = treeOf(ref, exprs);
  // readsOnly is false for TypeScript extension calls, which cannot be evaluated here.
  if (!readsOnly(tree, new Set(["step", "total_steps"]))) return undefined;
  const first = evalScalar(tree, { step: 1, total_steps: steps });
  for (let t = 2; t <= steps; t++) if (evalScalar(tree, { step: t, total_steps: steps }) !== first) return undefined;
  return first;
}
