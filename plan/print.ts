/** Expression trees as readable infix text: `min(1 + floor(step / 6) * 1, 30)`. */
import type { ExprTree } from "./expr.js";

const INFIX: Record<string, [string, number]> = {
  or: ["or", 1], and: ["and", 2], lt: ["<", 3], le: ["<=", 3], gt: [">", 3], ge: [">=", 3], eq: ["==", 3], ne: ["!=", 3],
  add: ["+", 4], sub: ["-", 4], mul: ["*", 5], div: ["/", 5],
};

export function printExpr(t: ExprTree, parent = 0): string {
  switch (t.op) {
    case "const": return Number.isInteger(t.value) ? String(t.value) : String(Number(t.value.toPrecision(10)));
    case "var": return t.name;
    case "ext": return `${t.fn}(${t.args.map((a) => printExpr(a)).join(", ")})`;
    default: {
      const inf = INFIX[t.op];
      if (inf) {
        const [sym, prec] = inf;
        const s = `${printExpr(t.args[0]!, prec)} ${sym} ${printExpr(t.args[1]!, prec + 1)}`;
        return prec < parent ? `(${s})` : s;
      }
      if (t.op === "neg") return `-${printExpr(t.args[0]!, 6)}`;
      if (t.op === "not") return `not ${printExpr(t.args[0]!, 6)}`;
      if (t.op === "if") return `(if ${printExpr(t.args[0]!)} then ${printExpr(t.args[1]!)} else ${printExpr(t.args[2]!)})`;
      return `${t.op}(${t.args.map((a) => printExpr(a)).join(", ")})`;
    }
  }
}

/**
 * A number for a message, to 6 significant digits — but never rounded onto a whole number it is not:
 * ranges are bounded by whole numbers (≥ 1 turn, ≥ 0), and "must be ≥ 1, got 1" for 0.9999995 hides
 * why it failed; such a value gets the digits that keep it off the whole number (0.9999995).
 */
export function showNumber(v: number): string {
  if (!Number.isFinite(v) || Number.isInteger(v)) return String(v);
  for (let p = 6; p <= 17; p++) {
    const r = Number(v.toPrecision(p));
    if (!Number.isInteger(r)) return String(r);
  }
  return String(v);
}
