/**
 * The values the evaluator computes. A number is a `Scalar`: a unit, a binding-time level and an
 * expression tree that folds to `{op:"const"}` when everything it reads is known at compile time.
 */
import type { CurriculumDecl, FnDecl, Span } from "../grammar/ast.js";
import { maxLevel, pointwise, VARIABLES, type ExprTree, type Level, type VariableName } from "../plan/expr.js";
import { DIMLESS, dimOf, type Dim } from "./units.js";

/** Internal trees may hold `param:*` variables while a function body is checked abstractly. */
export type Tree = ExprTree;

export interface Scalar {
  kind: "scalar";
  type: "number" | "bool";
  dim: Dim;
  level: Level;
  tree: Tree;
  /** Runtime variables this value reads, for level diagnostics. */
  reads: string[];
  span: Span;
  /** True while checking a function body with symbolic parameters. */
  abstract?: boolean;
  /** A number written without a unit in the source (`3`), for "write `3 turns`" hints. */
  literal?: boolean;
  /** For a product (`16 tasks × 8 rollouts`): its two factors, so `batch` can be split again. */
  factors?: readonly [Scalar, Scalar];
}

export interface Str { kind: "string"; value: string; span: Span }
export interface List { kind: "list"; items: Value[]; span: Span }
export interface Range { kind: "range"; start: Scalar; end: Scalar; span: Span }
export interface Rec { kind: "record"; fields: Map<string, Value>; span: Span }

/** A typed structured value built by a std/core constructor (model, env, agent, optimizer…). */
export interface Obj {
  kind: "object";
  type: ObjType;
  fields: Map<string, Value>;
  span: Span;
  /** Where the constructor was called, innermost first (for `explain`). */
  origin: string[];
  /** For curricula: the declaration and the scope it was declared in (for `with`). */
  source?: { decl: CurriculumDecl; scope: Scope };
}
export type ObjType =
  | "model" | "env" | "agent" | "optimizer" | "eval" | "depth" | "depth_rule" | "backend" | "curriculum";

export interface LossTerm { kind: "opd" | "grpo" | "sft" | "gkd"; coef: Scalar; params: Map<string, Value>; span: Span }
export interface Loss {
  kind: "loss";
  terms: LossTerm[];
  aggregate?: { mode: string; weight?: Scalar; span: Span };
  weights?: Scalar;
  span: Span;
}

export interface Closure {
  kind: "fn"; decl: FnDecl; scope: Scope; module: string;
  /**
   * Results of calls that reported nothing, by arguments (evaluate.ts `callClosure`): the closure
   * lives as long as its module, so an editor's later compilations that adopt the module reuse them.
   */
  memo?: Map<string, MemoEntry>;
}

/** A memoized call (evaluate.ts `callClosure`, `replayCall`). */
export interface MemoEntry {
  value: Value;
  /** The call's own cost: inlined calls (module values it evaluated not included) and the nesting it reached. */
  inlined: number; depth: number;
  /** The module values it read: cell, value, cell, value, … (modules.ts `LazyCell`). */
  cells: unknown[];
  /** The functions it inlined, itself included. */
  fns: FnDecl[];
  /** For a value other than a number: `origin` and the call's place, as objects made inside it record them. */
  site?: string;
}
export interface Builtin {
  kind: "builtin";
  name: string;
  params: BuiltinParam[];
  doc: string;
  impl: (args: Map<string, Value>, call: CallInfo) => Value;
}
export interface BuiltinParam { name: string; type: string; default?: () => Value; doc?: string }
export interface CallInfo { span: Span; argSpans: Map<string, Span>; report: (m: import("./diagnostics/index.js").Message, span?: Span) => void; abstract: boolean; origin: string[] }

/** `episode`, `turn`, `token`: namespaces of runtime variables. */
export interface Namespace { kind: "namespace"; name: string; span: Span }
/** A value that already caused a diagnostic; operations on it stay silent. */
export interface Invalid { kind: "invalid"; span: Span }

export type Value = Scalar | Str | List | Range | Rec | Obj | Loss | Closure | Builtin | Namespace | Invalid;

export interface Binding {
  get(): Value;
  span: Span;
  kind: "let" | "fn" | "model" | "curriculum" | "import" | "param" | "builtin";
  /** Source description for explain: "let k at file:3:1". */
  describe: string;
}

export interface Scope {
  parent?: Scope;
  names: Map<string, Binding>;
}

export function lookup(scope: Scope | undefined, name: string): Binding | undefined {
  for (let s = scope; s; s = s.parent) {
    const b = s.names.get(name);
    if (b) return b;
  }
  return undefined;
}

export function allNames(scope: Scope | undefined): string[] {
  const out = new Set<string>();
  for (let s = scope; s; s = s.parent) for (const k of s.names.keys()) out.add(k);
  return [...out];
}

export function typeName(v: Value): string {
  switch (v.kind) {
    case "scalar": return v.type === "bool" ? "bool" : "number";
    case "object": return v.type;
    case "fn": case "builtin": return "function";
    default: return v.kind;
  }
}

export const isConst = (s: Scalar): boolean => s.tree.op === "const";
export const constValue = (s: Scalar): number | undefined => (s.tree.op === "const" ? s.tree.value : undefined);

// ---- construction --------------------------------------------------------------------------------

export function constScalar(value: number, dim: Dim, span: Span, type: "number" | "bool" = "number", literal = false): Scalar {
  return { kind: "scalar", type, dim, level: "const", tree: { op: "const", value }, reads: [], span, ...(literal ? { literal: true } : {}) };
}

const STEPS = dimOf("steps").dim;
const TURNS = dimOf("turns").dim;
const variableDims: Partial<Record<VariableName, Dim>> = {
  step: STEPS, total_steps: STEPS, "episode.expert_length": TURNS, "episode.max_turns": TURNS,
  "episode.turns": TURNS, "turn.index": TURNS, "turn.tokens": dimOf("tokens").dim,
  "feedback.step": STEPS, "feedback.horizon": TURNS, "feedback.prefix": TURNS, "feedback.student_turns": TURNS,
};

export function varScalar(name: VariableName, span: Span): Scalar {
  return { kind: "scalar", type: "number", dim: variableDims[name] ?? DIMLESS, level: VARIABLES[name], tree: { op: "var", name }, reads: [name], span };
}

/** Builds an operator node, folding when every argument is constant. */
export function op(name: Parameters<typeof pointwise>[0], args: Scalar[], dim: Dim, type: "number" | "bool", span: Span): Scalar {
  if (args.every(isConst)) {
    const value = pointwise(name, args.map((a) => constValue(a)!));
    return { kind: "scalar", type, dim, level: "const", tree: { op: "const", value }, reads: [], span };
  }
  let level: Level = "const";
  const reads = new Set<string>();
  for (const a of args) { level = maxLevel(level, a.level); a.reads.forEach((r) => reads.add(r)); }
  const abstract = args.some((a) => a.abstract);
  const tree = { op: name, args: args.map((a) => a.tree) } as Tree;
  return { kind: "scalar", type, dim, level, tree, reads: [...reads], span, ...(abstract ? { abstract } : {}) };
}

export function invalid(span: Span): Value { return { kind: "invalid", span }; }

/**
 * A binding whose description (for `explain`) is made only when asked. A class, not an object literal
 * with a `get describe()`: V8 makes such a literal a dictionary-mode object (about half a kilobyte,
 * slower to read), and a file has one binding per declaration.
 */
export class DescribedLater implements Binding {
  constructor(readonly get: () => Value, readonly span: Span, readonly kind: Binding["kind"], private readonly describeNow: () => string) {}
  get describe(): string {
    return this.describeNow();
  }
}

export function fixed(v: Value, span: Span, kind: Binding["kind"], describe: string): Binding {
  return { get: () => v, span, kind, describe };
}

