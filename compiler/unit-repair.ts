/**
 * One edit that fixes a field's units. A field of a unit type (`horizon: turns`) whose expression
 * mixes units — `horizon: 3 + step / 20` — gets errors at each piece, and fixing the first as its
 * hint says (`3 steps`) leads to the next. Here the whole expression is rewritten to the field's unit
 * at once, the way the stdlib writes schedules (`floor(step / every) * 1 turn`):
 *   - a bare number in a sum takes the unit:                  3            → 3 turns
 *   - a term of another unit V is counted in V, then in turns: step / 20    → step / 20 steps * 1 turn
 *                                                             total_steps  → total_steps / 1 step * 1 turn
 *   - a plain number (a ratio) is scaled:                     x            → x * 1 turn
 * The rewrite is evaluated (quietly) before it is offered: a suggestion always checks.
 */
import type { Binary, Expr, NumberLit, Span, Unit } from "../grammar/ast.js";
import type { Evaluator, Reported } from "./evaluate.js";
import { BASE_UNITS, dimEq, isDimless, type BaseUnit, type Dim } from "./units.js";
import type { Scope, Value } from "./values.js";

/** The unit of a dimension that is one base unit to the first power, if it is one. */
function singleUnit(dim: Dim): BaseUnit | undefined {
  const used = BASE_UNITS.filter((u) => (dim[u] ?? 0) !== 0);
  return used.length === 1 && dim[used[0]!] === 1 ? used[0] : undefined;
}

const lit = (value: number, text: string, unit: Unit, span: Span): NumberLit => ({ kind: "number", value, text, unit, span });
const bin = (op: Binary["op"], left: Expr, right: Expr, span: Span): Binary => ({ kind: "binary", op, left, right, span, opSpan: span });
const UNIT_CODES = new Set(["TC2001", "TC2012"]);

const inside = (s: Span, outer: Span): boolean => s.file === outer.file && s.start.offset >= outer.start.offset && s.end.offset <= outer.end.offset;

/**
 * A rewrite of `expr` in unit `unitType` that checks, when every report of the field is a unit error
 * inside the expression itself; undefined otherwise (the reports then stand as they are).
 * `check` evaluates an expression as the field would, returning its value (or invalid).
 */
export function unitRepair(expr: Expr, scope: Scope, fieldDim: Dim, reports: readonly Reported[], ev: Evaluator, check: (e: Expr) => Value): string | undefined {
  const target = singleUnit(fieldDim);
  if (!target || reports.length === 0) return undefined;
  if (!reports.every((r) => UNIT_CODES.has(r.m.code) && inside(r.span, expr.span))) return undefined;
  const dimOf = (x: Expr): Dim | undefined => {
    const { value } = ev.quietly(() => ev.expr(x, scope));
    return value.kind === "scalar" && value.type === "number" ? value.dim : undefined;
  };
  const one = (unit: Unit, span: Span) => lit(1, "1", unit, span);
  const repair = (x: Expr): Expr | undefined => {
    if (x.kind === "binary" && (x.op === "+" || x.op === "-")) {
      const l = repair(x.left), r = repair(x.right);
      return l && r ? bin(x.op, l, r, x.span) : undefined;
    }
    if (x.kind === "unary" && x.op === "-") {
      const o = repair(x.operand);
      return o ? { ...x, operand: o } : undefined;
    }
    if (x.kind === "number") return x.unit === undefined ? lit(x.value, x.text, target, x.span) : x.unit === target ? x : undefined;
    const dim = dimOf(x);
    if (!dim) return undefined;
    if (dimEq(dim, fieldDim)) return x;
    if (isDimless(dim)) return bin("*", x, one(target, x.span), x.span);
    const from = singleUnit(dim);
    if (!from) return undefined;
    // `step / 20` counts in steps: `step / 20 steps` is the plain number, times one turn.
    const counted = x.kind === "binary" && x.op === "/" && x.right.kind === "number" && x.right.unit === undefined
      ? bin("/", x.left, lit(x.right.value, x.right.text, from, x.right.span), x.span)
      : bin("/", x, one(from, x.span), x.span);
    return bin("*", counted, one(target, x.span), x.span);
  };
  const fixed = repair(expr);
  if (!fixed) return undefined;
  const tried = ev.quietly(() => check(fixed));
  if (tried.reports.length > 0 || tried.value.kind !== "scalar" || !dimEq(tried.value.dim, fieldDim)) return undefined;
  return printExpr(fixed);
}

const PREC: Record<Binary["op"], number> = { or: 1, and: 2, "==": 3, "!=": 3, "<": 3, "<=": 3, ">": 3, ">=": 3, "..": 4, "+": 5, "-": 5, "*": 6, "/": 6 };

/** The source text of the expressions a repair builds (numbers, names, members, calls, operators). */
export function printExpr(e: Expr): string {
  switch (e.kind) {
    case "number": {
      if (!e.unit) return e.text;
      const unit = e.unit === "%" ? "%" : e.value === 1 ? e.unit.replace(/s$/, "") : e.unit;
      return `${e.text} ${unit}`;
    }
    case "string": return JSON.stringify(e.value);
    case "bool": return String(e.value);
    case "name": return e.name;
    case "member": return `${printExpr(e.object)}.${e.property}`;
    case "call": return `${printExpr(e.callee)}(${e.args.map((a) => `${a.name ? `${a.name}: ` : ""}${printExpr(a.value)}`).join(", ")})`;
    case "list": return `[${e.items.map(printExpr).join(", ")}]`;
    case "unary": {
      const o = printExpr(e.operand);
      const wrap = e.operand.kind === "binary" ? `(${o})` : o;
      return e.op === "-" ? `-${wrap}` : `not ${wrap}`;
    }
    case "binary": {
      const side = (x: Expr, right: boolean) => {
        const s = printExpr(x);
        if (x.kind !== "binary") return s;
        const p = PREC[x.op], q = PREC[e.op];
        return p < q || (right && p === q && (e.op === "-" || e.op === "/")) ? `(${s})` : s;
      };
      return `${side(e.left, false)} ${e.op} ${side(e.right, true)}`;
    }
    case "record": return `{ ${e.fields.map((f) => `${f.name}: ${printExpr(f.value)}`).join(", ")} }`;
    case "if": return `if ${printExpr(e.cond)} then ${printExpr(e.then)} else ${printExpr(e.else)}`;
    case "error": return "…";
  }
}
