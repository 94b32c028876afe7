/**
 * The evaluator: a partial evaluator over the AST. Functions are inlined at each call; constants
 * fold; whatever reads a runtime variable stays an expression tree with a level. Whether a value
 * fits where it goes (its type, unit and binding-time level) is the checker's question (check.ts,
 * over the types of types.ts); this file computes values and asks it.
 */
import type { Expr, FnDecl, Span } from "../grammar/ast.js";
import { maxLevel, VARIABLES, type Level, type VariableName } from "../plan/expr.js";
import { Checker } from "./check.js";
import { catalogue, type CatalogueEntry } from "./diagnostics/catalogue.js";
import { d, didYouMean, dt, h, type Message, type Related } from "./diagnostics/index.js";
import type { LazyCell } from "./modules.js";
import type { DiagnosticSink } from "./sink.js";
import { scalarType, type ScalarType, type TypeTable } from "./types.js";
import { dimDiv, dimMul, dimOf, DIMLESS, formatDim, isDimless } from "./units.js";
import {
  allNames, constScalar, constValue, fixed, invalid, isConst, lookup, op, typeName, varScalar,
  type Builtin, type CallInfo, type Closure, type Loss, type MemoEntry, type Scalar, type Scope, type Value,
} from "./values.js";

export interface EvalContext {
  /** The curriculum's `steps`, once known: `total_steps` folds to it. */
  totalSteps?: number;
}

/** A report as the evaluator emits it (after moving library errors to the user's call). */
export interface Reported { m: Message; span: Span; related: Related[] }

export class Evaluator {
  private readonly stack: FnDecl[] = [];
  readonly origin: string[] = [];
  context: EvalContext = {};
  /** Set while checking a function body with symbolic parameters: suppresses value-dependent errors. */
  abstract = false;

  /** Nesting of inlined calls and of values forced by other values (see `nested`). */
  private depth = 0;
  /** Inlined calls so far in this evaluator, against INLINE_BUDGET. */
  private inlined = 0;
  /** Set once a limit was hit and reported: further calls give up at once, so unwinding is quick. */
  private exhausted = false;

  /** Call sites of the functions being inlined, outermost first. */
  private readonly callSites: Span[] = [];
  /** True for files of the stdlib and of npm packages: errors there are shown at the user's call. */
  isLibrary: (file: string) => boolean = () => false;

  /** While set (see `quietly`), reports are collected here instead of going to the sink. */
  private captured: Reported[] | undefined;

  /** Type, unit and level checks, reporting through `report` below. */
  readonly check: Checker;

  constructor(readonly sink: DiagnosticSink, readonly describeSpan: (s: Span) => string, readonly types: TypeTable) {
    this.check = new Checker(sink, (m, s) => this.report(m, s));
  }

  /** Reports so far (emitted, captured or dropped) and reads of the curriculum context (`total_steps`). */
  private reports = 0;
  contextReads = 0;
  /** The deepest nesting reached (see `mark`). */
  private peak = 0;

  /**
   * The state before evaluating a let or model, for `since`: whether its value could be kept for a
   * later compilation of the same modules. Only a value computed outside any call, curriculum and
   * quiet try can be: then nothing but the module texts decides it.
   */
  mark(sink: DiagnosticSink): { reports: number; items: number; contextReads: number; inlined: number; depth: number; peak: number; clean: boolean } {
    const m = {
      reports: this.reports, items: sink.items.length, contextReads: this.contextReads, inlined: this.inlined, depth: this.depth, peak: this.peak,
      clean: !this.exhausted && !this.captured && this.callSites.length === 0 && this.origin.length === 0 && this.stack.length === 0 && this.context.totalSteps === undefined,
    };
    this.peak = this.depth;
    return m;
  }

  /** After `mark`: what the evaluation cost (inlined calls, nesting it reached) when its value can be kept; else undefined. */
  since(m: ReturnType<Evaluator["mark"]>, sink: DiagnosticSink, needsClean = true): { inlined: number; depth: number } | undefined {
    const depth = this.peak - m.depth;
    this.peak = Math.max(this.peak, m.peak);
    const keep = (m.clean || !needsClean) && !this.exhausted && this.reports === m.reports && sink.items.length === m.items && this.contextReads === m.contextReads;
    return keep ? { inlined: this.inlined - m.inlined, depth } : undefined;
  }

  /**
   * While above 0 (inside a call whose result may be memoized, see `callClosure`): the module values
   * read (cell, value, cell, value, …) and the functions inlined, since the outermost such call began.
   */
  private tracking = 0;
  private readonly touched: unknown[] = [];
  private readonly inlinedFns: FnDecl[] = [];
  /** Inlined calls charged for module values (evaluated, or kept ones accounted for): no call's own cost. */
  private cellInlined = 0;

  /**
   * Reads a module value (modules.ts): `value.force()` evaluates it, or accounts for a kept one, when
   * needed. What that charges is the value's cost, not the cost of the call that reads it.
   */
  readCell(cell: LazyCell, value: { force(): Value }): Value {
    this.cellReads[this.cellReads.length - 1]?.push(cell);
    const i0 = this.inlined;
    const c0 = this.cellInlined;
    let v: Value;
    try { v = value.force(); } finally { this.cellInlined = c0 + (this.inlined - i0); }
    if (this.tracking) this.touched.push(cell, v);
    return v;
  }

  /** Per module value being evaluated (innermost last): the module values it read. */
  private readonly cellReads: LazyCell[][] = [];

  /** Before evaluating a module value (modules.ts): for `endCell`. */
  startCell(): number {
    this.cellReads.push([]);
    return this.cellInlined;
  }

  /**
   * After evaluating a module value, given `startCell`'s mark: the module values it read, and the
   * inlined calls charged for them (evaluated or accounted for inside it), which are theirs, not its own.
   */
  endCell(mark: number): { reads: LazyCell[]; forced: number } {
    return { reads: this.cellReads.pop() ?? [], forced: this.cellInlined - mark };
  }

  /**
   * Accounts for kept module values (`LazyCell.keep`) as if they were evaluated here: each of `cells`
   * still owed, and the owed values each read, each once (a kept value's own cost excludes the values
   * it forced: they are charged here, or at their own first use, never twice). False, with nothing
   * charged, when one of them was not evaluated in this compilation and not kept (its evaluation
   * would happen inside), or the evaluation would hit a limit.
   */
  settle(cells: Iterable<LazyCell>): boolean {
    const o = owedCost(cells);
    if (!o || !this.replayCost(o.inlined, o.depth)) return false;
    this.cellInlined += o.inlined;
    for (const c of o.owed) c.owed = false;
    return true;
  }

  /** After `mark`: the inlined calls and the nesting an evaluation took, whatever it reported or read (for `replayCost`). */
  cost(m: ReturnType<Evaluator["mark"]>): { inlined: number; depth: number } {
    const depth = this.peak - m.depth;
    this.peak = Math.max(this.peak, m.peak);
    return { inlined: this.inlined - m.inlined, depth };
  }

  /**
   * Accounts for a kept value (see `since`) as if it were evaluated here: false when that evaluation
   * would hit a limit (it must then run, to report it as `tcod check` does).
   */
  replayCost(inlined: number, depth: number): boolean {
    if (this.exhausted || this.inlined + inlined > INLINE_BUDGET || this.depth + depth > NESTING_LIMIT) return false;
    this.inlined += inlined;
    this.peak = Math.max(this.peak, this.depth + depth);
    return true;
  }

  report(m: Message, span: Span): void {
    this.reports++;
    if (this.abstract && (catalogue[m.code] as CatalogueEntry).valueDependent) return;
    if (this.isLibrary(span.file)) {
      const site = [...this.callSites].reverse().find((s) => !this.isLibrary(s.file));
      if (site) {
        this.emit({ m, span: site, related: [{ span, message: `raised inside ${this.describeSpan(span)}` }] });
        return;
      }
    }
    this.emit({ m, span, related: [] });
  }

  private emit(r: Reported): void {
    this.reports++;
    if (this.captured) this.captured.push(r);
    else this.sink.add(r.m, r.span, r.related);
  }

  /** Runs `fn` with its reports collected rather than emitted: to try an expression, then decide what to say. */
  quietly<T>(fn: () => T): { value: T; reports: Reported[] } {
    const outer = this.captured;
    this.captured = [];
    try {
      const value = fn();
      return { value, reports: this.captured };
    } finally {
      this.captured = outer;
    }
  }

  /** Emits reports collected by `quietly`. */
  replay(reports: readonly Reported[]): void {
    for (const r of reports) this.emit(r);
  }

  // ---- expressions -------------------------------------------------------------------------------

  expr(e: Expr, scope: Scope): Value {
    switch (e.kind) {
      case "number": {
        const { dim, scale } = e.unit ? dimOf(e.unit) : { dim: DIMLESS, scale: 1 };
        return constScalar(e.value * scale, dim, e.span, "number", !e.unit);
      }
      case "string": return { kind: "string", value: e.value, span: e.span };
      case "bool": return constScalar(e.value ? 1 : 0, DIMLESS, e.span, "bool");
      case "error": return { kind: "invalid", span: e.span };
      case "name": return this.name(e.name, e.span, scope);
      case "member": return this.member(this.expr(e.object, scope), e.property, e.propertySpan, e.span);
      case "list": return { kind: "list", items: e.items.map((i) => this.expr(i, scope)), span: e.span };
      case "record": {
        const fields = new Map<string, Value>();
        for (const f of e.fields) {
          if (fields.has(f.name)) this.report(d.duplicateField({ field: f.name }), f.nameSpan);
          fields.set(f.name, this.expr(f.value, scope));
        }
        return { kind: "record", fields, span: e.span };
      }
      case "unary": {
        const v = this.expr(e.operand, scope);
        if (v.kind === "invalid") return v;
        if (e.op === "-") {
          if (v.kind === "loss") return scaleLoss(v, constScalar(-1, DIMLESS, e.span), e.span);
          const s = this.check.scalar(v, "number", e.operand.span);
          if (!s) return invalid(e.span);
          const neg = op("neg", [s], s.dim, "number", e.span);
          // `-5` is still a literal: `steps: -5` is a range error, not a missing unit.
          return s.literal ? { ...neg, literal: true } : neg;
        }
        const s = this.check.scalar(v, "bool", e.operand.span);
        return s ? op("not", [s], DIMLESS, "bool", e.span) : invalid(e.span);
      }
      case "binary": {
        // Left-deep chains (`1 + 1 + …`, thousands of terms) are walked down the left spine and
        // folded back up in a loop, so their length never becomes stack depth.
        const spine: Extract<Expr, { kind: "binary" }>[] = [e];
        let leftmost = e.left;
        while (leftmost.kind === "binary") { spine.push(leftmost); leftmost = leftmost.left; }
        let acc = this.expr(leftmost, scope);
        for (let i = spine.length - 1; i >= 0; i--) {
          const node = spine[i]!;
          acc = this.binary(node.op, acc, this.expr(node.right, scope), node);
        }
        return acc;
      }
      case "if": {
        const c = this.expr(e.cond, scope);
        const a = this.expr(e.then, scope);
        const b = this.expr(e.else, scope);
        if (c.kind === "invalid" || a.kind === "invalid" || b.kind === "invalid") return invalid(e.span);
        const cs = this.check.scalar(c, "bool", e.cond.span);
        if (!cs) return invalid(e.span);
        if (isConst(cs)) return constValue(cs) !== 0 ? a : b;
        const as = this.check.scalar(a, undefined, e.then.span);
        const bs = this.check.scalar(b, undefined, e.else.span);
        if (!as || !bs) return invalid(e.span);
        if (as.type !== bs.type) {
          this.report(d.typeMismatch({ expected: as.type, actual: bs.type, hint: h.sameBranchTypes() }), e.else.span);
          return invalid(e.span);
        }
        if (!this.check.sameDim(as, bs, e.else.span)) return invalid(e.span);
        return op("if", [cs, as, bs], as.dim, as.type, e.span);
      }
      case "call": {
        const callee = this.expr(e.callee, scope);
        const args = e.args.map((a) => ({ name: a.name, nameSpan: a.nameSpan, span: a.span, value: this.expr(a.value, scope) }));
        const calleeName = e.callee.kind === "name" ? e.callee.name : e.callee.kind === "member" ? e.callee.property : "expression";
        return this.call(callee, calleeName, args, e.span);
      }
    }
  }

  name(name: string, span: Span, scope: Scope): Value {
    const b = lookup(scope, name);
    if (!b) {
      this.report(d.unknownName({ name, suggestion: didYouMean(name, allNames(scope)) }), span);
      return invalid(span);
    }
    const v = b.get();
    if (v.kind === "scalar" || v.kind === "string") return { ...v, span } as Value;
    return v;
  }

  member(obj: Value, prop: string, propSpan: Span, span: Span): Value {
    switch (obj.kind) {
      case "invalid": return obj;
      case "namespace": {
        const full = `${obj.name}.${prop}`;
        if (!(full in VARIABLES)) {
          const members = Object.keys(VARIABLES).filter((k) => k.startsWith(obj.name + ".")).map((k) => k.slice(obj.name.length + 1));
          this.report(d.noSuchMember({ owner: `'${obj.name}'`, member: prop, suggestion: didYouMean(prop, members), available: members.join(", ") }), propSpan);
          return invalid(span);
        }
        return varScalar(full as VariableName, span);
      }
      case "range": {
        if (prop === "start") return obj.start;
        if (prop === "end") return obj.end;
        this.report(d.noSuchMember({ owner: "a range", member: prop, suggestion: didYouMean(prop, ["start", "end"]), available: "start, end" }), propSpan);
        return invalid(span);
      }
      case "record": case "object": {
        const v = obj.fields.get(prop);
        if (v) return v;
        const names = [...obj.fields.keys()];
        this.report(d.noSuchMember({ owner: obj.kind === "object" ? `this ${obj.type}` : "this record", member: prop, suggestion: didYouMean(prop, names), available: names.join(", ") || "none" }), propSpan);
        return invalid(span);
      }
      default:
        this.report(d.noSuchMember({ owner: `a ${typeName(obj)}`, member: prop, suggestion: "", available: "none" }), propSpan);
        return invalid(span);
    }
  }

  // ---- operators ---------------------------------------------------------------------------------

  binary(opName: string, l: Value, r: Value, e: Extract<Expr, { kind: "binary" }>): Value {
    const span = e.span;
    if (l.kind === "invalid" || r.kind === "invalid") return invalid(span);
    // Loss algebra: scalar × loss, loss × scalar, loss + loss.
    if (l.kind === "loss" || r.kind === "loss") return this.lossOp(opName, l, r, e);
    if (opName === "..") {
      const a = this.check.scalar(l, "number", e.left.span);
      const b = this.check.scalar(r, "number", e.right.span);
      if (!a || !b || !this.check.sameDim(a, b, e.right.span)) return invalid(span);
      return { kind: "range", start: a, end: b, span };
    }
    if (opName === "and" || opName === "or") {
      const a = this.check.scalar(l, "bool", e.left.span);
      const b = this.check.scalar(r, "bool", e.right.span);
      if (!a || !b) return invalid(span);
      return op(opName, [a, b], DIMLESS, "bool", span);
    }
    if ((opName === "==" || opName === "!=") && l.kind === "string" && r.kind === "string") {
      return constScalar((l.value === r.value) === (opName === "==") ? 1 : 0, DIMLESS, span, "bool");
    }
    const a = this.check.scalar(l, "number", e.left.span);
    const b = this.check.scalar(r, "number", e.right.span);
    if (!a || !b) return invalid(span);
    switch (opName) {
      case "+": case "-":
        if (!this.check.sameDim(a, b, e.right.span, e.left.span)) return invalid(span);
        return op(opName === "+" ? "add" : "sub", [a, b], a.dim, "number", span);
      case "*": {
        const product = op("mul", [a, b], dimMul(a.dim, b.dim), "number", span);
        return { ...product, factors: [a, b] };
      }
      case "/":
        if (constValue(b) === 0) { this.report(d.divisionByZero(), e.right.span); return invalid(span); }
        return op("div", [a, b], dimDiv(a.dim, b.dim), "number", span);
      default: {
        const name = { "<": "lt", "<=": "le", ">": "gt", ">=": "ge", "==": "eq", "!=": "ne" }[opName];
        if (!name) { this.report(d.internalError({ message: `operator ${opName}` }), span); return invalid(span); }
        if (!this.check.sameDim(a, b, e.right.span, e.left.span)) return invalid(span);
        return op(name as never, [a, b], DIMLESS, "bool", span);
      }
    }
  }

  private lossOp(opName: string, l: Value, r: Value, e: Extract<Expr, { kind: "binary" }>): Value {
    const span = e.span;
    if (opName === "+" && l.kind === "loss" && r.kind === "loss") return addLoss(l, r, span, (m, s) => this.report(m, s));
    if (opName === "-" && l.kind === "loss" && r.kind === "loss") {
      return addLoss(l, scaleLoss(r, constScalar(-1, DIMLESS, span), span), span, (m, s) => this.report(m, s));
    }
    if (opName === "*" || opName === "/") {
      const [loss, other, otherSpan] = l.kind === "loss" ? [l, r, e.right.span] as const : [r as Loss, l, e.left.span] as const;
      if (opName === "/" && l.kind !== "loss") {
        this.report(d.typeMismatch({ expected: "number", actual: "loss", hint: h.lossDivision() }), e.right.span);
        return invalid(span);
      }
      const s = this.check.scalar(other, "number", otherSpan);
      if (!s) return invalid(span);
      if (!isDimless(s.dim)) {
        this.report(d.unitMismatch({ expected: "number", actual: formatDim(s.dim), suggestion: "0.5 * opd()" }), otherSpan);
        return invalid(span);
      }
      const coef = opName === "/" ? op("div", [constScalar(1, DIMLESS, span), s], DIMLESS, "number", span) : s;
      return scaleLoss(loss, coef, span);
    }
    this.report(d.typeMismatch({ expected: "number", actual: "loss", hint: h.lossAlgebra() }), span);
    return invalid(span);
  }

  // ---- calls ---------------------------------------------------------------------------------------

  call(callee: Value, calleeName: string, args: CallArg[], span: Span): Value {
    if (callee.kind === "invalid") return callee;
    if (callee.kind !== "fn" && callee.kind !== "builtin") {
      this.report(d.notCallable({ name: calleeName, type: typeName(callee) }), span);
      return invalid(span);
    }
    const params = callee.kind === "fn"
      ? callee.decl.params.map((p) => ({ name: p.name, hasDefault: p.default !== undefined }))
      : callee.params.map((p) => ({ name: p.name, hasDefault: p.default !== undefined }));
    const fnName = callee.kind === "fn" ? callee.decl.name : callee.name;
    const bound = this.bindArgs(fnName, params, args, span);
    if (!bound) return invalid(span);
    if (callee.kind === "builtin") return this.callBuiltin(callee, bound, span);
    return this.callClosure(callee, bound, span);
  }

  private bindArgs(fn: string, params: { name: string; hasDefault: boolean }[], args: CallArg[], span: Span): Map<string, CallArg> | undefined {
    const out = new Map<string, CallArg>();
    let ok = true;
    let positional = 0;
    for (const a of args) {
      if (a.value.kind === "invalid") ok = false;
      if (a.name === undefined) {
        const p = params[positional++];
        if (!p) {
          this.report(d.tooManyArguments({ fn, max: params.length, count: args.filter((x) => !x.name).length, example: `${params[0]?.name ?? "name"}: ...` }), a.span);
          ok = false;
          continue;
        }
        out.set(p.name, a);
      } else {
        if (!params.some((p) => p.name === a.name)) {
          const names = params.map((p) => p.name);
          this.report(d.unknownArgument({ fn, arg: a.name, suggestion: didYouMean(a.name, names), available: names.join(", ") || "none" }), a.nameSpan ?? a.span);
          ok = false;
          continue;
        }
        if (out.has(a.name)) { this.report(d.duplicateArgument({ arg: a.name }), a.nameSpan ?? a.span); ok = false; continue; }
        out.set(a.name, a);
      }
    }
    for (const p of params) {
      if (!out.has(p.name) && !p.hasDefault) {
        this.report(d.missingArgument({ fn, param: p.name }), span);
        ok = false;
      }
    }
    return ok ? out : undefined;
  }

  private callBuiltin(b: Builtin, bound: Map<string, CallArg>, span: Span): Value {
    const args = new Map<string, Value>();
    const argSpans = new Map<string, Span>();
    for (const p of b.params) {
      const a = bound.get(p.name);
      const v = a ? a.value : p.default!();
      const checked = this.check.type(v, this.types.of(p.type), a ? a.span : span, `argument '${p.name}' of '${b.name}'`);
      if (checked.kind === "invalid") return invalid(span);
      args.set(p.name, checked);
      argSpans.set(p.name, a ? a.span : span);
    }
    const info: CallInfo = {
      span, argSpans, abstract: this.abstract, origin: [...this.origin],
      report: (m, s) => this.report(m, s ?? span),
    };
    return b.impl(args, info);
  }

  /**
   * Runs `f` one level deeper (an inlined call, or a value that needs another value). Past
   * NESTING_LIMIT levels it reports TC2020 at the outermost user position instead of growing the
   * JavaScript stack.
   */
  nested(name: string, span: Span, f: () => Value): Value {
    if (this.exhausted) return invalid(span);
    if (this.depth >= NESTING_LIMIT) {
      this.exhausted = true;
      this.report(d.evaluationTooDeep({ name, limit: NESTING_LIMIT }), this.callSites.find((s) => !this.isLibrary(s.file)) ?? span);
      return invalid(span);
    }
    if (++this.depth > this.peak) this.peak = this.depth;
    try { return f(); } finally { this.depth--; }
  }

  private callClosure(f: Closure, bound: Map<string, CallArg>, span: Span): Value {
    if (this.exhausted) return invalid(span);
    if (++this.inlined > INLINE_BUDGET) {
      this.exhausted = true;
      const outer = this.callSites.find((s) => !this.isLibrary(s.file)) ?? span;
      // A top-level call over the budget on its own count is the one to name (`outerName` is still the previous one's).
      const name = this.callSites.length === 0 ? f.decl.name : this.outerName ?? f.decl.name;
      this.report(d.inliningBudget({ name, limit: INLINE_BUDGET }), outer);
      return invalid(span);
    }
    // While checking bodies with symbolic parameters, a call of a function whose parameters and
    // result all have scalar types needs only its signature (its body is checked on its own): so
    // uncalled chains of functions are checked in linear time, not inlined level by level.
    if (this.abstract) {
      const sig = scalarSignature(f.decl, this.types);
      if (sig) return this.callBySignature(f.decl, sig, bound, span);
    }
    if (this.callSites.length === 0) { this.outerName = f.decl.name; this.outerSets++; }
    // A call that reported nothing gives the same value for the same arguments, while the module
    // values it read are the same (see `replayCall`).
    const key = this.memoKey(f, bound);
    if (key !== undefined) {
      const hit = f.memo?.get(key);
      if (hit && this.replayCall(hit, span)) return hit.value;
    }
    if (key === undefined) return this.nested(f.decl.name, span, () => this.inlineClosure(f, bound, span));
    const before = this.mark(this.sink);
    const t0 = this.touched.length;
    const n0 = this.inlinedFns.length;
    const c0 = this.cellInlined;
    this.tracking++;
    let v: Value;
    try {
      v = this.nested(f.decl.name, span, () => this.inlineClosure(f, bound, span));
    } finally {
      this.tracking--;
    }
    const cost = this.since(before, this.sink, false);
    if (cost && v.kind !== "invalid") {
      // Each module value once; its own evaluation is not the call's cost (it is charged where it happens).
      const cells = new Map<LazyCell, Value>();
      for (let i = t0; i < this.touched.length; i += 2) cells.set(this.touched[i] as LazyCell, this.touched[i + 1] as Value);
      const memo = (f.memo ??= new Map());
      if (memo.size >= CALL_MEMO_SIZE) memo.delete(memo.keys().next().value!);
      memo.set(key, {
        value: v, inlined: cost.inlined - (this.cellInlined - c0), depth: cost.depth,
        cells: [...cells].flat(), fns: [...new Set(this.inlinedFns.slice(n0))],
        // Objects remember where they were made (`origin`): the same only at the same call, in the same calls.
        ...(v.kind !== "scalar" ? { site: this.siteOf(span) } : {}),
      } satisfies MemoEntry);
    }
    if (this.tracking === 0) { this.touched.length = 0; this.inlinedFns.length = 0; }
    return v;
  }

  /** The calls being inlined and this call's place, as objects made inside it would record them. */
  private siteOf(span: Span): string {
    return `${this.origin.join("\n")}\n${this.describeSpan(span)}`;
  }

  /**
   * Stands a memoized call's result in for evaluating it again, when that evaluation would do exactly
   * what was recorded: the module values it read are the same values, evaluated already in this
   * compilation (a kept one not yet accounted for is accounted for here, as reading it would), none
   * of the functions it inlined is being inlined now (that would be a recursion, reported), an
   * object's origin would be the same, and its cost fits the evaluator's limits. Else false, and the
   * call is evaluated.
   */
  private replayCall(hit: MemoEntry, span: Span): boolean {
    if (this.exhausted) return false;
    if (this.stack.length) for (const fn of hit.fns) if (this.stack.includes(fn)) return false;
    const cells = hit.cells;
    for (let i = 0; i < cells.length; i += 2) {
      const c = cells[i] as LazyCell;
      if (c.state !== "done" || c.value !== cells[i + 1]) return false;
    }
    if (hit.site !== undefined && hit.site !== this.siteOf(span)) return false;
    // Kept values it read, not yet accounted for in this compilation, are (with the owed values they
    // read), as reading them would.
    const o = owedCost(cells.filter((_, i) => i % 2 === 0) as LazyCell[]);
    if (!o) return false;
    // (A kept value read inside the call nests at most the call's depth deeper.)
    const depth = hit.depth + o.depth;
    if (this.inlined + hit.inlined + o.inlined > INLINE_BUDGET || this.depth + depth > NESTING_LIMIT) return false;
    this.inlined += hit.inlined + o.inlined;
    this.cellInlined += o.inlined;
    this.peak = Math.max(this.peak, this.depth + depth);
    for (const c of o.owed) c.owed = false;
    // The module value being evaluated, if any, read these (through the call).
    const reads = this.cellReads[this.cellReads.length - 1];
    if (reads) for (let i = 0; i < cells.length; i += 2) reads.push(cells[i] as LazyCell);
    if (this.tracking) {
      for (let i = 0; i < cells.length; i++) this.touched.push(cells[i]);
      for (const fn of hit.fns) this.inlinedFns.push(fn);
    }
    return true;
  }

  /**
   * The memo key of a call (see `Closure.memo`): its arguments (numbers and strings only) as the body
   * can see them, and the checking mode; undefined when the call is not memoized. Not an argument's
   * own span: a parameter is read by name, which gives the value the span of the name (`name`), so
   * the call's value cannot depend on where its arguments were written, and an edit that moves the
   * call (a line typed above it) must not make its entry stale. Not the curriculum's steps either: a
   * call that read `total_steps` is not memoized (`since`), and one that did not gives the same value
   * whatever the steps (an edit of `steps` reuses every other call).
   */
  private memoKey(f: Closure, bound: Map<string, CallArg>): string | undefined {
    let key = this.abstract ? "a" : "c";
    for (const p of f.decl.params) {
      const a = bound.get(p.name);
      if (!a) { key += "|-"; continue; }
      if (a.value.kind !== "scalar" && a.value.kind !== "string") return undefined;
      key += "|" + argKey(a.value);
    }
    return key;
  }

  /** The function named at the outermost inlined call (for TC2019). */
  private outerName: string | undefined;
  /** How many times `outerName` was set (a recorded evaluation that set it sets it again when replayed). */
  private outerSets = 0;

  /**
   * Evaluates `fn`, a curriculum field of a sweep point (at the top: in no call, module value or
   * function body), recording what `callClosure` records for a memoized call: its value, its own cost,
   * the module values it read and the functions it inlined. No record when it reported anything, read
   * the curriculum context (`total_steps`) or hit a limit. `replayRecorded` stands the record in for
   * evaluating the same field again in another point, under the same conditions as a memoized call.
   */
  recorded(fn: () => Value): { value: Value; record?: RecordedEval } {
    const before = this.mark(this.sink);
    const t0 = this.touched.length;
    const n0 = this.inlinedFns.length;
    const c0 = this.cellInlined;
    const o0 = this.outerSets;
    this.tracking++;
    let v: Value;
    try {
      v = fn();
    } finally {
      this.tracking--;
    }
    const cost = this.since(before, this.sink, false);
    let record: RecordedEval | undefined;
    if (cost && v.kind !== "invalid") {
      const cells = new Map<LazyCell, Value>();
      for (let i = t0; i < this.touched.length; i += 2) cells.set(this.touched[i] as LazyCell, this.touched[i + 1] as Value);
      record = {
        value: v, inlined: cost.inlined - (this.cellInlined - c0), depth: cost.depth,
        cells: [...cells].flat(), fns: [...new Set(this.inlinedFns.slice(n0))],
        ...(this.outerSets !== o0 ? { outer: this.outerName } : {}),
      };
    }
    if (this.tracking === 0) { this.touched.length = 0; this.inlinedFns.length = 0; }
    return { value: v, ...(record ? { record } : {}) };
  }

  /** Inlined calls so far (for `compileFile`'s check that skipped stdlib body checks could not have hit the budget). */
  get inlinedSoFar(): number { return this.inlined; }
  /** Whether a limit was hit and reported. */
  get limitHit(): boolean { return this.exhausted; }

  /** Accounts for a `recorded` evaluation as if it ran here (see `replayCall`); false when it must run. */
  replayRecorded(r: RecordedEval, span: Span): boolean {
    if (!this.replayCall(r, span)) return false;
    if ("outer" in r) { this.outerName = r.outer; this.outerSets++; }
    return true;
  }

  private callBySignature(decl: FnDecl, sig: ScalarSignature, bound: Map<string, CallArg>, span: Span): Value {
    let level: Level = "const";
    const reads = new Set<string>();
    for (const p of decl.params) {
      const a = bound.get(p.name);
      if (!a) continue;
      const checked = this.check.type(a.value, this.types.ofRef(p.type!), a.span, `argument '${p.name}' of '${decl.name}'`);
      if (checked.kind === "invalid") return invalid(span);
      if (checked.kind === "scalar") { level = maxLevel(level, checked.level); checked.reads.forEach((r) => reads.add(r)); }
    }
    if (sig.result.perTurn) level = maxLevel(level, "turn");
    return {
      kind: "scalar", type: sig.result.type, dim: sig.result.dim, level, reads: [...reads], span, abstract: true,
      tree: { op: "var", name: `call:${decl.name}` as never },
    };
  }

  private inlineClosure(f: Closure, bound: Map<string, CallArg>, span: Span): Value {
    if (this.stack.includes(f.decl)) {
      const chain = [...this.stack.slice(this.stack.indexOf(f.decl)), f.decl].map((x) => x.name).join(" → ");
      this.report(d.recursiveFunction({ name: f.decl.name, chain }), span);
      return invalid(span);
    }
    const scope: Scope = { parent: f.scope, names: new Map() };
    for (const p of f.decl.params) {
      const a = bound.get(p.name);
      // Defaults are evaluated in the function's own scope, where it was declared.
      const v = a ? a.value : this.withStack(f.decl, () => this.expr(p.default!, scope));
      const checked = p.type ? this.check.type(v, this.types.ofRef(p.type), a ? a.span : p.default!.span, `argument '${p.name}' of '${f.decl.name}'`) : v;
      if (checked.kind === "invalid") return invalid(span);
      scope.names.set(p.name, fixed(checked, p.nameSpan, "param", `parameter ${p.name} of ${f.decl.name}`));
    }
    if (this.tracking) this.inlinedFns.push(f.decl);
    this.origin.push(`${f.decl.name} (${this.describeSpan(f.decl.nameSpan)}) called at ${this.describeSpan(span)}`);
    this.callSites.push(span);
    try {
      return this.withStack(f.decl, () => this.fnBody(f.decl, scope));
    } finally {
      this.origin.pop();
      this.callSites.pop();
    }
  }

  fnBody(decl: FnDecl, scope: Scope): Value {
    const inner: Scope = { parent: scope, names: new Map() };
    for (const l of decl.lets) {
      const v = this.expr(l.value, inner);
      const checked = l.type ? this.check.type(v, this.types.ofRef(l.type), l.value.span, `'${l.name}'`) : v;
      inner.names.set(l.name, fixed(checked, l.nameSpan, "let", `let ${l.name}`));
    }
    const result = this.expr(decl.body, inner);
    return decl.returnType ? this.check.type(result, this.types.ofRef(decl.returnType), decl.body.span, `the result of '${decl.name}'`) : result;
  }

  private withStack<T>(decl: FnDecl, f: () => T): T {
    this.stack.push(decl);
    try { return f(); } finally { this.stack.pop(); }
  }
}

/**
 * An argument in a memoized call's key: its JSON but for its own span (see `memoKey`); the spans inside
 * it (a product's factors) are written, since the body sees those (values keep their spans, and plans
 * show lines and columns). JSON writes NaN and ±Infinity as null and −0 as 0: a value holding one is
 * written with them kept apart.
 */
function argKey(v: Value): string {
  // Values are never changed once made, and a memoized call's value is passed on as the same object
  // (a schedule read by several calls, a point's `when:` rule): its key is written once.
  let key = argKeys.get(v);
  if (key === undefined) {
    const seen = { ...v, span: undefined };
    argKeys.set(v, (key = oddNumbers(seen) ? JSON.stringify(seen, exactNumbers) : JSON.stringify(seen)));
  }
  return key;
}
const argKeys = new WeakMap<Value, string>();
const exactNumbers = (_k: string, v: unknown): unknown => (typeof v === "number" && (!Number.isFinite(v) || Object.is(v, -0)) ? `#${Object.is(v, -0) ? "-0" : v}` : v);
/** Whether a value holds a number that JSON does not keep (NaN, ±Infinity, −0); without recursion (trees may be deep). */
function oddNumbers(root: unknown): boolean {
  const todo: unknown[] = [root];
  while (todo.length) {
    const v = todo.pop();
    if (typeof v === "number") { if (!Number.isFinite(v) || Object.is(v, -0)) return true; }
    else if (v !== null && typeof v === "object") {
      if (Array.isArray(v)) { for (const x of v) todo.push(x); }
      else for (const k in v) todo.push((v as Record<string, unknown>)[k]);
    }
  }
  return false;
}

/**
 * What accounting for kept module values costs (see `Evaluator.settle`): each of `cells` still owed and
 * the owed values each read, transitively, each once; undefined when one of them is neither evaluated
 * in this compilation nor kept.
 */
function owedCost(cells: Iterable<LazyCell>): { inlined: number; depth: number; owed: LazyCell[] } | undefined {
  let inlined = 0;
  let depth = 0;
  const owed: LazyCell[] = [];
  const seen = new Set<LazyCell>();
  const todo = [...cells];
  while (todo.length) {
    const c = todo.pop()!;
    if (seen.has(c)) continue;
    seen.add(c);
    if (c.state !== "done" || (c.owed && !c.keep)) return undefined;
    if (!c.owed || !c.keep) continue;
    inlined += c.keep.inlined;
    depth = Math.max(depth, c.keep.depth);
    owed.push(c);
    for (const r of c.keep.reads) todo.push(r);
  }
  return { inlined, depth, owed };
}

/** A recorded evaluation (`Evaluator.recorded`): a memoized call's record, and the outermost function it named, if it named one. */
export interface RecordedEval extends MemoEntry { outer?: string | undefined }

export interface CallArg { name?: string; nameSpan?: Span; span: Span; value: Value }

/** Memoized calls kept per function (the oldest goes first): an editor's session keeps its modules for long. */
const CALL_MEMO_SIZE = 1024;

/** Inlined calls one evaluator makes at most (a file's checks and one curriculum's evaluation). */
export const INLINE_BUDGET = 50_000;
/** Nesting of inlined calls and of values reading values, at most. */
export const NESTING_LIMIT = 100;

interface ScalarSignature { result: ScalarType }

/** The function's signature when every parameter and the result have scalar types. */
function scalarSignature(decl: FnDecl, types: TypeTable): ScalarSignature | undefined {
  const result = scalarType(decl.returnType && types.ofRef(decl.returnType));
  if (!result || !decl.params.every((p) => scalarType(p.type && types.ofRef(p.type)))) return undefined;
  return { result };
}

function scaleLoss(l: Loss, coef: Scalar, span: Span): Loss {
  return { ...l, span, terms: l.terms.map((t) => ({ ...t, coef: op("mul", [coef, t.coef], DIMLESS, "number", span) })) };
}

function addLoss(a: Loss, b: Loss, span: Span, report: (m: Message, s: Span) => void): Value {
  if (a.aggregate && b.aggregate && a.aggregate.mode !== b.aggregate.mode) {
    report(d.invalidValue({ what: "loss sum", detail: dt.aggregatesDiffer({ a: a.aggregate.mode, b: b.aggregate.mode }), hint: h.sameAggregate() }), span);
    return invalid(span);
  }
  if (a.weights && b.weights) {
    report(d.invalidValue({ what: "loss sum", detail: dt.bothWeighted(), hint: h.weightedOnceOnSum() }), span);
    return invalid(span);
  }
  const aggregate = a.aggregate ?? b.aggregate;
  const weights = a.weights ?? b.weights;
  return { kind: "loss", terms: [...a.terms, ...b.terms], span, ...(aggregate ? { aggregate } : {}), ...(weights ? { weights } : {}) };
}
