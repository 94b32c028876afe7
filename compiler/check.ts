/**
 * The checker: does a value fit a type (types.ts), a unit, a binding-time level? Separate from
 * evaluation (evaluate.ts computes values; it asks this module whether they fit where they go) and
 * from lowering (lower.ts asks it for the levels of coefficients). Each check reports through the
 * owner's `report` (which knows about library frames and abstract checking) and returns the value,
 * or `invalid` when it does not fit.
 */
import type { Span } from "../grammar/ast.js";
import { levelRank, VARIABLES, type Level, type VariableName } from "../plan/expr.js";
import { d, h, type Message } from "./diagnostics/index.js";
import { DiagnosticSink } from "./sink.js";
import type { Type } from "./types.js";
import { dimEq, example, formatDim, isDimless } from "./units.js";
import { constValue, invalid, typeName, type Scalar, type Value } from "./values.js";

export type Report = (m: Message, span: Span) => void;

export class Checker {
  constructor(readonly sink: DiagnosticSink, readonly report: Report) {}

  /** Checks a value against a type; reports and returns invalid on mismatch. */
  type(v: Value, t: Type, span: Span, what: string): Value {
    if (v.kind === "invalid" || t.kind === "any") return v;
    switch (t.kind) {
      case "union": {
        // Try each alternative silently; report against the first when none fits. A list with an
        // item already reported (e.g. an out-of-range `evaluate(…)` in `eval: […]`) fits nothing,
        // and a second report that the list is not an eval would only repeat the first.
        if (t.alternatives.some((a) => fits(v, a))) return v;
        if (v.kind === "list" && v.items.some((i) => i.kind === "invalid")) return invalid(span);
        return this.type(v, t.alternatives[0]!, span, what);
      }
      case "list": {
        if (v.kind !== "list") return this.mismatch(t.text, v, span);
        const items = v.items.map((i) => this.type(i, t.item, "span" in i ? inFile(i.span, span) : span, what));
        return items.some((i) => i.kind === "invalid") ? invalid(span) : { ...v, items };
      }
      case "range": {
        if (v.kind !== "range") return this.mismatch(t.text, v, span);
        const s = this.type(v.start, t.item, inFile(v.start.span, span), what);
        const e = this.type(v.end, t.item, inFile(v.end.span, span), what);
        return s.kind === "invalid" || e.kind === "invalid" ? invalid(span) : v;
      }
      case "per_turn": {
        const s = this.type(v, t.item, span, what);
        if (s.kind !== "scalar") return s;
        return this.level(s, "turn", what, span) ? s : invalid(span);
      }
      case "unknown":
        this.report(d.typeMismatch({
          expected: t.text, actual: typeName(v),
          hint: t.generic ? h.unknownGenericType({ type: t.text }) : h.unknownType({ type: t.text }),
        }), span);
        return invalid(span);
      case "bool":
        return v.kind === "scalar" && v.type === "bool" ? v : this.mismatch(t.text, v, span);
      case "string":
        return v.kind === "string" ? v : this.mismatch(t.text, v, span);
      case "quantity":
        return v.kind === "scalar" && v.type === "number" ? v : this.mismatch(t.text, v, span);
      case "structural":
        return v.kind === t.of ? v : this.mismatch(t.text, v, span);
      case "object":
        return v.kind === "object" && v.type === t.of ? v : this.mismatch(t.text, v, span);
      case "function":
        return v.kind === "fn" || v.kind === "builtin" ? v : this.mismatch(t.text, v, span);
      case "unit": {
        if (v.kind !== "scalar" || v.type !== "number") return this.mismatch(t.text, v, span);
        if (dimEq(v.dim, t.dim)) return v;
        if (isDimless(v.dim) && v.literal) {
          this.report(d.missingUnit({ expected: formatDim(t.dim), suggestion: example(constValue(v) ?? 1, t.dim) }), span);
        } else {
          this.report(d.unitMismatch({ expected: formatDim(t.dim), actual: formatDim(v.dim), suggestion: example(constValue(v) ?? 1, t.dim) }), span);
        }
        return invalid(span);
      }
    }
  }

  /** Reports when a value is known later than a field accepts. */
  level(s: Scalar, max: Level, field: string, span: Span): boolean {
    if (levelRank(s.level) <= levelRank(max)) return true;
    // Feedback rules (`ema(…)`, `stage(…)`) are read as feedback-level values.
    const levelOf = (r: string): Level => VARIABLES[r as VariableName] ?? (r.endsWith("(…)") ? "feedback" : "const");
    const reads = s.reads.filter((r) => levelRank(levelOf(r)) > levelRank(max));
    const feedback = s.level === "feedback" && max === "step"
      ? " " + h.feedbackNotStepClock()
      : "";
    this.report(d.levelTooHigh({
      field, max, level: s.level, reads: reads.map((r) => `\`${r}\``).join(", ") || "runtime values",
      hint: (max === "const" ? h.useConstant() : h.levelVariables({ max, variables: levelVars(max) })) + feedback,
    }), span);
    return false;
  }

  /** Reports and returns false when two scalars' units differ. */
  sameDim(a: Scalar, b: Scalar, spanB: Span, spanA?: Span): boolean {
    if (dimEq(a.dim, b.dim)) return true;
    // Blame the bare literal when there is one: `3 + step` → "write 3 steps".
    const [bare, other, at] = b.literal && isDimless(b.dim) ? [b, a, spanB] : a.literal && isDimless(a.dim) && spanA ? [a, b, spanA] : [undefined, a, spanB];
    if (bare) {
      this.report(d.missingUnit({ expected: formatDim(other.dim), suggestion: example(constValue(bare) ?? 1, other.dim) }), at);
    } else {
      this.report(d.unitMismatch({ expected: formatDim(a.dim), actual: formatDim(b.dim), suggestion: example(constValue(b) ?? 1, a.dim) }), spanB);
    }
    return false;
  }

  /** The value as a scalar of `type` (any scalar when undefined), or a report. */
  scalar(v: Value, type: "number" | "bool" | undefined, span: Span): Scalar | undefined {
    if (v.kind === "invalid") return undefined;
    if (v.kind !== "scalar" || (type && v.type !== type)) {
      this.report(d.typeMismatch({ expected: type ?? "number", actual: typeName(v), hint: hintFor(type ?? "number", v) }), span);
      return undefined;
    }
    return v;
  }

  private mismatch(expected: string, v: Value, span: Span): Value {
    this.report(d.typeMismatch({ expected, actual: typeName(v), hint: hintFor(expected, v) }), span);
    return invalid(span);
  }
}

/** Whether a value fits a type, without reporting. */
export function fits(v: Value, t: Type): boolean {
  return silent.type(v, t, NOWHERE, "").kind !== "invalid";
}
const silent = new Checker(new DiagnosticSink(), () => {});
const NOWHERE: Span = { file: "<fits>", start: { offset: 0, line: 1, column: 1 }, end: { offset: 0, line: 1, column: 1 } };

function levelVars(l: Level): string {
  const vars = Object.entries(VARIABLES).filter(([, lv]) => levelRank(lv) <= levelRank(l) && lv !== "const" && lv !== "feedback").map(([k]) => `\`${k}\``);
  // The feedback variables are many: one entry for all of them (docs/LANGUAGE.md#feedback).
  if (levelRank("feedback") <= levelRank(l)) vars.splice(1, 0, "`feedback.*`");
  return vars.length ? `constants, ${vars.join(", ")}` : "constants";
}

function hintFor(expected: string, v: Value): string {
  if (expected === "string" && v.kind === "scalar") return h.quoteString();
  if (v.kind === "fn" || v.kind === "builtin") return h.callFunction();
  if (expected === "loss") return h.buildLoss();
  if (expected === "env") return h.makeEnv();
  if (expected === "model") return h.declareModel();
  return h.expectedA({ type: expected });
}

/**
 * A part's own span where it was written in the file being checked; a value made elsewhere (a
 * prelude namespace, an imported let) is blamed on the enclosing expression, never on its far-away
 * definition.
 */
function inFile(part: Span, whole: Span): Span {
  return part.file === whole.file ? part : whole;
}
