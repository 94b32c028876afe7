/**
 * The expressions of a schema-valid plan, checked on load (TC7001): every `{ "expr": NAME }` in a
 * node's params names an expression of `plan.exprs`, and every operator of an expression tree has
 * the number of arguments its evaluators read. A hand-edited plan could otherwise reach the runtime,
 * `explain`, `plot` or `export` with a reference to nothing (an internal error) or an `add` of one
 * argument (NaN at every step, exported without a word).
 */
import { FEEDBACK_OPS, TURN_REDUCTIONS, type ExprTree } from "./expr.js";
import type { Plan } from "./schema.js";

/** Arguments each operator takes: [fewest, most]. `min`/`max` fold any number ≥ 1 (plan/expr.ts `pointwise`). */
const ARITY: Readonly<Record<string, readonly [number, number]>> = {
  ...Object.fromEntries(["neg", "floor", "ceil", "round", "abs", "exp", "log", "sqrt", "cos", "sin", "not", "kl_turn", ...TURN_REDUCTIONS].map((op) => [op, [1, 1] as const])),
  ...Object.fromEntries(["add", "sub", "mul", "div", "pow", "lt", "le", "gt", "ge", "eq", "ne", "and", "or"].map((op) => [op, [2, 2] as const])),
  ...Object.fromEntries(["clamp", "if", ...FEEDBACK_OPS.filter((op) => op !== "kl_turn")].map((op) => [op, [3, 3] as const])),
  min: [1, Infinity],
  max: [1, Infinity],
};

const key = (name: string): string => (/^[A-Za-z_][\w]*$/.test(name) ? `.${name}` : `[${JSON.stringify(name)}]`);

/** Every reference to a missing expression and every operator with the wrong number of arguments, with its JSON path. */
export function planExprIssues(plan: Plan): { path: string; message: string }[] {
  const issues: { path: string; message: string }[] = [];
  const names = Object.keys(plan.exprs);
  // References: any `{ expr: string }` object in node params (ValueRef), found without recursion.
  plan.graph.nodes.forEach((n, i) => {
    const stack: [unknown, string][] = [[n.params, `$.graph.nodes[${i}].params`]];
    while (stack.length > 0) {
      const [v, path] = stack.pop()!;
      if (v === null || typeof v !== "object") continue;
      if (!Array.isArray(v) && typeof (v as { expr?: unknown }).expr === "string" && Object.keys(v).length === 1) {
        const name = (v as { expr: string }).expr;
        if (!Object.hasOwn(plan.exprs, name)) {
          issues.push({ path: `${path}.expr`, message: `the ${n.kind} node "${n.id}" refers to expression "${name}", which is not in $.exprs (${names.length ? `it has ${names.map((x) => `"${x}"`).join(", ")}` : "it is empty"})` });
        }
        continue;
      }
      if (Array.isArray(v)) v.forEach((x, j) => stack.push([x, `${path}[${j}]`]));
      else for (const [k, x] of Object.entries(v)) stack.push([x, `${path}${key(k)}`]);
    }
  });
  // Arity, without recursion (a hand-edited tree may be deep).
  for (const [name, def] of Object.entries(plan.exprs)) {
    const stack: [ExprTree, string][] = [[def.tree, `$.exprs${key(name)}.tree`]];
    while (stack.length > 0) {
      const [t, path] = stack.pop()!;
      if (t.op === "const" || t.op === "var") continue;
      const arity = ARITY[t.op];
      if (arity && (t.args.length < arity[0] || t.args.length > arity[1])) {
        const want = arity[0] === arity[1] ? `${arity[0]}` : `at least ${arity[0]}`;
        issues.push({ path: `${path}.args`, message: `operator ${t.op} takes ${want} argument${want === "1" ? "" : "s"}, got ${t.args.length}` });
      }
      t.args.forEach((a, j) => stack.push([a, `${path}.args[${j}]`]));
    }
  }
  return issues;
}
