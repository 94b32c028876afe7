import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileScalar, evalScalar, evalScalarGrid, type ExprTree, type ScalarVars } from "../../plan/expr.js";

/** A tree of the pointwise operators over step, total_steps, the episode variables and constants. */
const tree: fc.Arbitrary<ExprTree> = fc.letrec<{ t: ExprTree }>((tie) => ({
  t: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.double({ noNaN: false }).map((value) => ({ op: "const" as const, value })),
    fc.constantFrom("step", "total_steps", "episode.expert_length", "episode.max_turns", "turn.kl").map((name) => ({ op: "var" as const, name: name as never })),
    fc.tuple(fc.constantFrom("add", "sub", "mul", "div", "min", "max", "pow", "lt", "le", "gt", "ge", "eq", "ne", "and", "or"), tie("t"), tie("t")).map(([op, a, b]) => ({ op: op as never, args: [a, b] })),
    fc.tuple(fc.constantFrom("neg", "floor", "ceil", "round", "abs", "exp", "log", "sqrt", "not", "cos", "sin"), tie("t")).map(([op, a]) => ({ op: op as never, args: [a] })),
    fc.tuple(tie("t"), tie("t"), tie("t")).map(([a, b, c]) => ({ op: "if" as const, args: [a, b, c] })),
    fc.tuple(tie("t"), tie("t"), tie("t")).map(([a, b, c]) => ({ op: "clamp" as const, args: [a, b, c] })),
    fc.array(tie("t"), { minLength: 1, maxLength: 4 }).map((args) => ({ op: "min" as const, args })),
    tie("t").map((a) => ({ op: "ema" as const, args: [a] })),
    tie("t").map((a) => ({ op: "ext" as const, fn: "f", args: [a] })),
  ),
})).t;

const outcome = (f: () => number): { value: number } | { error: string } => {
  try { return { value: f() }; } catch (e) { return { error: `${(e as Error).constructor.name}: ${(e as Error).message}` }; }
};

describe("compileScalar", () => {
  it("gives evalScalar's value or error at every point", () => {
    fc.assert(fc.property(tree, fc.integer({ min: 1, max: 50 }), fc.integer({ min: 0, max: 30 }), (t, step, len) => {
      const vars: ScalarVars = { step, total_steps: 50, "episode.expert_length": len, "episode.max_turns": 30 };
      const compiled = compileScalar(t);
      expect(outcome(() => compiled(vars))).toEqual(outcome(() => evalScalar(t, vars)));
    }), { numRuns: 2000 });
  });
});

describe("evalScalarGrid", () => {
  /**
   * The trees evaluated point by point instead: those whose evaluation can throw (an extension
   * function, a feedback operator, a variable the grid does not set) and a `min` of other than two.
   */
  const pointByPoint = (t: ExprTree): boolean => {
    if (t.op === "const") return false;
    if (t.op === "var") return !["step", "total_steps", "episode.expert_length", "episode.max_turns"].includes(t.name);
    if (t.op === "ext" || t.op === "ema" || (t.op === "min" && t.args.length !== 2)) return true;
    return t.args.some(pointByPoint);
  };

  it("gives evalScalar's value at every point of the grid, or declines the trees evaluated point by point", () => {
    const steps = fc.uniqueArray(fc.integer({ min: 1, max: 60 }), { minLength: 1, maxLength: 6 }).map((xs) => Float64Array.from(xs));
    const lengths = fc.uniqueArray(fc.integer({ min: 0, max: 30 }), { minLength: 1, maxLength: 5 }).map((xs) => Float64Array.from(xs));
    fc.assert(fc.property(tree, steps, lengths, (t, rows, cols) => {
      const grid = evalScalarGrid(t, rows, cols, { total_steps: 60, "episode.max_turns": 30 });
      if (pointByPoint(t)) { expect(grid).toBeUndefined(); return; }
      expect(grid).toBeDefined();
      const want: number[] = [];
      for (const step of rows) for (const len of cols) want.push(evalScalar(t, { step, total_steps: 60, "episode.expert_length": len, "episode.max_turns": 30 }));
      // Object.is per point: NaN equals NaN, and −0 is not 0.
      expect([...grid!].map((v, i) => Object.is(v, want[i]))).toEqual(want.map(() => true));
    }), { numRuns: 2000 });
  });
});
