/**
 * CST → AST (grammar/ast.ts). One visitor instance, checked against the grammar by
 * `validateVisitor()` at construction. Each method reads its rule's children through the types of
 * cst.ts (generated from the grammar): a key the rule does not have, or a token read as a node, is a
 * compile error.
 *
 * The visitor is defensive by design: with error recovery on, any child may be missing and any token
 * may be one Chevrotain inserted (empty image, NaN offsets). The rules:
 * - a missing expression becomes `{ kind: "error" }` with a zero-width span where it was expected;
 * - a declaration, field, parameter, import name or sweep axis whose *name* is missing is skipped
 *   (its syntax error is already reported; a nameless node would only cause follow-on errors);
 * - spans come from real tokens only (`start` inclusive, `end` exclusive).
 * Choices: a parenthesized expression's span includes its parentheses; `NumberLit.text` is the
 * literal as written, unit included (`6 steps`); a product type `tasks×rollouts` is one `TypeRef`
 * whose `name` is the normalized text (`×` for `*`) with no args.
 */
import type { CstNode, IToken } from "chevrotain";
import type * as Cst from "./cst.js";
import type {
  Arg, Decl, Expr, Field, FnDecl, ImportDecl, ImportSpec, LetDecl, ModelDecl, CurriculumDecl, NumberLit,
  Param, Span, SweepAxis, SweepDecl, TypeRef, Unit, BinaryOp,
} from "./ast.js";
import { DocBlockComment, Percent, stringValue, True, unitWords } from "./lexer.js";
import { binaryLevel, tcodParser } from "./parser.js";
import type { LineMap } from "./spans.js";

/** Keys of a rule's children that hold tokens / nodes (cst.ts types every rule's children). */
type TokenKey<C> = { [K in keyof C]-?: NonNullable<C[K]> extends IToken[] ? K : never }[keyof C];
type NodeKey<C> = { [K in keyof C]-?: NonNullable<C[K]> extends CstNode[] ? K : never }[keyof C];
type NodeAt<C, K extends keyof C> = NonNullable<C[K]> extends (infer N)[] ? N : never;

const isReal = (t: IToken | undefined): t is IToken =>
  t !== undefined && t.isInsertedInRecovery !== true && Number.isFinite(t.startOffset);

// Under a rule's key the CST holds only nodes, under a token's key only tokens (the key types say
// which), so the lookups below index directly instead of filtering (the visitor runs on every parse;
// allocation is GC).
const none: never[] = [];
function realTokens<C>(ctx: C, key: TokenKey<C>): IToken[] {
  const all = (ctx[key] ?? none) as IToken[];
  return all.some((t) => !isReal(t)) ? all.filter(isReal) : all;
}
function realToken<C>(ctx: C, key: TokenKey<C>, index = 0): IToken | undefined {
  const t = (ctx[key] as IToken[] | undefined)?.[index];
  return isReal(t) ? t : undefined;
}
function nodes<C, K extends NodeKey<C>>(ctx: C, key: K): NodeAt<C, K>[] {
  return (ctx[key] ?? none) as NodeAt<C, K>[];
}
function node<C, K extends NodeKey<C>>(ctx: C, key: K, index = 0): NodeAt<C, K> | undefined {
  return (ctx[key] as NodeAt<C, K>[] | undefined)?.[index];
}
const tokenEnd = (t: IToken): number => t.startOffset + t.image.length;

/** The last real token's end among candidates (in source order), else `fallback`. */
function endAfter(fallback: number, ...candidates: (IToken | undefined)[]): number {
  let end = fallback;
  for (const t of candidates) if (isReal(t)) end = Math.max(end, tokenEnd(t));
  return end;
}

/** [start, end) of a CST node from its real tokens, if it has any. */
function nodeRange(n: CstNode): [number, number] | undefined {
  const loc = n.location;
  if (loc === undefined || !Number.isFinite(loc.startOffset) || !Number.isFinite(loc.endOffset)) return undefined;
  return [loc.startOffset, (loc.endOffset as number) + 1];
}

interface ExportableParam { exported: boolean; start: number }
type Suffix =
  | { kind: "call"; args: Arg[]; end: number; start: number }
  | { kind: "member"; property: string; propertySpan: Span; end: number; start: number }
  | { kind: "broken"; end: number; start: number };

const BaseVisitor = tcodParser.getBaseCstVisitorConstructor();

/** Top-level declarations parsed before their ASTs are built and their CSTs dropped (AstBuilder.declarationParsed). */
const BATCH = 128;

class AstBuilder extends BaseVisitor {
  private lines!: LineMap;
  private docs: IToken[] = [];

  constructor() {
    super();
    this.validateVisitor();
  }

  /** Declarations built while the file was parsed (`begin` + `declarationParsed`), by their CST node. */
  private built = new Map<CstNode, Decl | undefined>();

  /** Starts a file: `declarationParsed` may then be called for each declaration as it is parsed. */
  begin(lines: LineMap, docs: IToken[]): void {
    this.lines = lines;
    this.docs = docs;
    this.built = new Map();
    this.parsed = [];
  }

  /** Parsed declarations whose AST is not built yet (at most BATCH). */
  private parsed: CstNode[] = [];

  /**
   * A parsed top-level declaration: every BATCH of them, their ASTs are built and their CSTs
   * emptied, so the CST of a large file is never held whole (its nodes are most of a parse's memory).
   * `build` uses the results and builds the rest; a declaration the parser abandoned mid-way (and so
   * never passed here) is built there too. In batches, so that a file of fewer declarations is
   * parsed and built as two phases, as before, and a large one holds at most BATCH CSTs.
   */
  declarationParsed(cst: CstNode): void {
    this.parsed.push(cst);
    if (this.parsed.length < BATCH) return;
    for (const n of this.parsed) {
      this.built.set(n, this.visit(n) as Decl | undefined);
      (n as { children: CstNode["children"] }).children = {};
    }
    this.parsed = [];
  }

  build(cst: CstNode, lines: LineMap, docs: IToken[]): Decl[] {
    this.lines = lines;
    this.docs = docs;
    try {
      return this.visit(cst) as Decl[];
    } finally {
      this.built = new Map();
      this.parsed = [];
    }
  }

  /** The AST of an `expression` CST parsed on its own (grammar/index.ts `parseExpression`). */
  buildExpression(cst: CstNode, lines: LineMap): Expr {
    this.lines = lines;
    this.docs = [];
    return this.expr(cst, 0);
  }

  // ---- helpers ---------------------------------------------------------------------------------

  private span(start: number, end: number): Span {
    return this.lines.span(start, end);
  }
  private tokenSpan(t: IToken): Span {
    return this.span(t.startOffset, tokenEnd(t));
  }
  private nodeSpan(n: CstNode, fallback: number): Span {
    const r = nodeRange(n);
    return r ? this.span(r[0], r[1]) : this.span(fallback, fallback);
  }
  private errorAt(offset: number): Expr {
    return { kind: "error", span: this.span(offset, offset) };
  }
  /** The expression of `n`, or an error expression at `anchor` where it was expected. */
  private expr(n: CstNode | undefined, anchor: number): Expr {
    if (n === undefined) return this.errorAt(anchor);
    return this.visit(n, anchor) as Expr;
  }
  private typeOf(n: CstNode | undefined): TypeRef | undefined {
    return n === undefined ? undefined : (this.visit(n) as TypeRef | undefined);
  }
  private fields(n: CstNode | undefined): Field[] {
    return n === undefined ? [] : (this.visit(n) as Field[]);
  }

  /** The doc comment directly above `offset` (only whitespace between), as plain text. */
  private docBefore(offset: number): string | undefined {
    // The last doc comment ending at or before `offset` (the docs are in source order): a binary
    // search, so a file of n documented declarations costs O(n log n), not O(n²).
    let lo = 0;
    let hi = this.docs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (tokenEnd(this.docs[mid]!) <= offset) lo = mid + 1;
      else hi = mid;
    }
    let i = lo - 1;
    const onlySpaceBetween = (from: number, to: number) => /^\s*$/.test(this.lines.text.slice(from, to));
    const first = this.docs[i];
    if (first === undefined || !onlySpaceBetween(tokenEnd(first), offset)) return undefined;
    if (first.tokenType === DocBlockComment) {
      const body = first.image.slice(3, -2).split(/\r\n|\r|\n/).map((l) => l.replace(/^\s*\*? ?/, ""));
      return nonEmpty(body.join("\n").trim());
    }
    const lines: string[] = [];
    let at = offset;
    for (let d = this.docs[i]; d !== undefined && d.tokenType !== DocBlockComment; d = this.docs[--i]) {
      if (!onlySpaceBetween(tokenEnd(d), at)) break;
      lines.unshift(d.image.slice(3).replace(/^ /, ""));
      at = d.startOffset;
    }
    return nonEmpty(lines.join("\n").trim());
  }

  // ---- declarations ----------------------------------------------------------------------------

  sourceFile(ctx: Cst.SourceFileCstChildren): Decl[] {
    return nodes(ctx, "declaration")
      .map((n) => (this.built.has(n) ? this.built.get(n) : (this.visit(n) as Decl | undefined)))
      .filter((d): d is Decl => d !== undefined);
  }

  declaration(ctx: Cst.DeclarationCstChildren): Decl | undefined {
    const n = node(ctx, "importDeclaration") ?? node(ctx, "exportableDeclaration") ?? node(ctx, "sweepDeclaration");
    return n === undefined ? undefined : (this.visit(n) as Decl | undefined);
  }

  importDeclaration(ctx: Cst.ImportDeclarationCstChildren): ImportDecl | undefined {
    const from = realToken(ctx, "StringLiteral");
    const start = realToken(ctx, "Import");
    if (from === undefined || start === undefined) return undefined;
    const names = nodes(ctx, "importSpec")
      .map((n) => this.visit(n) as ImportSpec | undefined)
      .filter((s): s is ImportSpec => s !== undefined);
    return {
      kind: "import", names, from: stringValue(from), fromSpan: this.tokenSpan(from),
      span: this.span(start.startOffset, tokenEnd(from)),
    };
  }

  importSpec(ctx: Cst.ImportSpecCstChildren): ImportSpec | undefined {
    const name = realToken(ctx, "name");
    if (name === undefined) return undefined;
    const alias = realToken(ctx, "alias");
    return {
      name: name.image, nameSpan: this.tokenSpan(name),
      ...(alias !== undefined ? { alias: alias.image } : {}),
      span: this.span(name.startOffset, endAfter(tokenEnd(name), alias)),
    };
  }

  exportableDeclaration(ctx: Cst.ExportableDeclarationCstChildren): Decl | undefined {
    const exportToken = realToken(ctx, "Export");
    const inner = node(ctx, "letDeclaration") ?? node(ctx, "fnDeclaration") ?? node(ctx, "modelDeclaration")
      ?? node(ctx, "curriculumDeclaration");
    if (inner === undefined) return undefined;
    const innerStart = nodeRange(inner)?.[0];
    if (innerStart === undefined) return undefined;
    const param: ExportableParam = { exported: exportToken !== undefined, start: exportToken?.startOffset ?? innerStart };
    return this.visit(inner, param) as Decl | undefined;
  }

  letDeclaration(ctx: Cst.LetDeclarationCstChildren, param?: ExportableParam): LetDecl | undefined {
    const name = realToken(ctx, "Identifier");
    const keyword = realToken(ctx, "Let");
    if (name === undefined) return undefined;
    const start = param?.start ?? keyword?.startOffset ?? name.startOffset;
    const type = this.typeOf(node(ctx, "typeRef"));
    const anchor = endAfter(type ? type.span.end.offset : tokenEnd(name), realToken(ctx, "Equals"));
    const value = this.expr(node(ctx, "expression"), anchor);
    const doc = this.docBefore(start);
    return {
      kind: "let", exported: param?.exported ?? false, name: name.image, nameSpan: this.tokenSpan(name),
      ...(type ? { type } : {}), value, ...(doc !== undefined ? { doc } : {}),
      span: this.span(start, Math.max(value.span.end.offset, anchor)),
    };
  }

  fnDeclaration(ctx: Cst.FnDeclarationCstChildren, param: ExportableParam): FnDecl | undefined {
    const name = realToken(ctx, "Identifier");
    if (name === undefined) return undefined;
    const params = nodes(ctx, "param")
      .map((n) => this.visit(n) as Param | undefined)
      .filter((p): p is Param => p !== undefined);
    const returnType = this.typeOf(node(ctx, "typeRef"));
    const anchor = Math.max(
      endAfter(tokenEnd(name), realToken(ctx, "RParen"), realToken(ctx, "Colon")),
      returnType?.span.end.offset ?? 0,
    );
    const bodyNode = node(ctx, "fnBody");
    const { lets, body } = bodyNode !== undefined
      ? (this.visit(bodyNode, anchor) as { lets: LetDecl[]; body: Expr })
      : { lets: [], body: this.errorAt(anchor) };
    const end = bodyNode !== undefined ? (nodeRange(bodyNode)?.[1] ?? anchor) : anchor;
    const doc = this.docBefore(param.start);
    return {
      kind: "fn", exported: param.exported, name: name.image, nameSpan: this.tokenSpan(name), params,
      ...(returnType ? { returnType } : {}), lets, body, ...(doc !== undefined ? { doc } : {}),
      span: this.span(param.start, Math.max(end, body.span.end.offset)),
    };
  }

  param(ctx: Cst.ParamCstChildren): Param | undefined {
    const name = realToken(ctx, "Identifier");
    if (name === undefined) return undefined;
    const type = this.typeOf(node(ctx, "typeRef"));
    const equals = realToken(ctx, "Equals");
    const defaultNode = node(ctx, "expression");
    const fallback = equals !== undefined || defaultNode !== undefined
      ? this.expr(defaultNode, endAfter(type?.span.end.offset ?? tokenEnd(name), equals))
      : undefined;
    const end = Math.max(tokenEnd(name), type?.span.end.offset ?? 0, fallback?.span.end.offset ?? 0, endAfter(0, equals));
    return {
      name: name.image, nameSpan: this.tokenSpan(name), ...(type ? { type } : {}),
      ...(fallback ? { default: fallback } : {}), span: this.span(name.startOffset, end),
    };
  }

  fnBody(ctx: Cst.FnBodyCstChildren, anchor: number): { lets: LetDecl[]; body: Expr } {
    const n = node(ctx, "expressionBody") ?? node(ctx, "blockBody");
    return n === undefined ? { lets: [], body: this.errorAt(anchor) } : (this.visit(n, anchor) as { lets: LetDecl[]; body: Expr });
  }

  expressionBody(ctx: Cst.ExpressionBodyCstChildren, anchor: number): { lets: LetDecl[]; body: Expr } {
    return { lets: [], body: this.expr(node(ctx, "expression"), endAfter(anchor, realToken(ctx, "Equals"))) };
  }

  blockBody(ctx: Cst.BlockBodyCstChildren, anchor: number): { lets: LetDecl[]; body: Expr } {
    const lets = nodes(ctx, "letDeclaration")
      .map((n) => this.visit(n) as LetDecl | undefined)
      .filter((l): l is LetDecl => l !== undefined);
    const lastLetEnd = lets.at(-1)?.span.end.offset ?? 0;
    const bodyAnchor = Math.max(endAfter(anchor, realToken(ctx, "LCurly"), realToken(ctx, "Return")), lastLetEnd);
    return { lets, body: this.expr(node(ctx, "expression"), bodyAnchor) };
  }

  modelDeclaration(ctx: Cst.ModelDeclarationCstChildren, param: ExportableParam): ModelDecl | undefined {
    const name = realToken(ctx, "Identifier");
    if (name === undefined) return undefined;
    const block = node(ctx, "fieldBlock");
    const doc = this.docBefore(param.start);
    return {
      kind: "model", exported: param.exported, name: name.image, nameSpan: this.tokenSpan(name),
      fields: this.fields(block), ...(doc !== undefined ? { doc } : {}),
      span: this.span(param.start, Math.max(tokenEnd(name), (block && nodeRange(block)?.[1]) ?? 0)),
    };
  }

  curriculumDeclaration(ctx: Cst.CurriculumDeclarationCstChildren, param: ExportableParam): CurriculumDecl | undefined {
    const name = realToken(ctx, "Identifier");
    const bodyNode = node(ctx, "curriculumBody");
    if (name === undefined || bodyNode === undefined) return undefined;
    const body = this.visit(bodyNode) as { fields: Field[]; base?: { name: string; span: Span } } | undefined;
    if (body === undefined) return undefined;
    const doc = this.docBefore(param.start);
    return {
      kind: "curriculum", exported: param.exported, name: name.image, nameSpan: this.tokenSpan(name),
      ...(body.base ? { base: body.base } : {}), fields: body.fields, ...(doc !== undefined ? { doc } : {}),
      span: this.span(param.start, Math.max(tokenEnd(name), nodeRange(bodyNode)?.[1] ?? 0)),
    };
  }

  curriculumBody(ctx: Cst.CurriculumBodyCstChildren): { fields: Field[]; base?: { name: string; span: Span } } | undefined {
    const derived = node(ctx, "derivedCurriculum");
    if (derived !== undefined) return this.visit(derived) as { fields: Field[]; base: { name: string; span: Span } } | undefined;
    const block = node(ctx, "fieldBlock");
    return block === undefined ? undefined : { fields: this.fields(block) };
  }

  derivedCurriculum(ctx: Cst.DerivedCurriculumCstChildren): { fields: Field[]; base: { name: string; span: Span } } | undefined {
    const base = realToken(ctx, "Identifier");
    // Without its base, a derived curriculum would be checked as a full one: skip it instead.
    if (base === undefined) return undefined;
    return { base: { name: base.image, span: this.tokenSpan(base) }, fields: this.fields(node(ctx, "fieldBlock")) };
  }

  fieldBlock(ctx: Cst.FieldBlockCstChildren): Field[] {
    return nodes(ctx, "field")
      .map((n) => this.visit(n) as Field | undefined)
      .filter((f): f is Field => f !== undefined);
  }

  field(ctx: Cst.FieldCstChildren): Field | undefined {
    const name = realToken(ctx, "AnyName");
    if (name === undefined) return undefined;
    const value = this.expr(node(ctx, "expression"), endAfter(tokenEnd(name), realToken(ctx, "Colon")));
    return {
      name: name.image, nameSpan: this.tokenSpan(name), value,
      span: this.span(name.startOffset, Math.max(tokenEnd(name), value.span.end.offset)),
    };
  }

  sweepDeclaration(ctx: Cst.SweepDeclarationCstChildren): SweepDecl | undefined {
    const keyword = realToken(ctx, "Sweep");
    const name = realToken(ctx, "Identifier");
    const modeNode = node(ctx, "sweepMode");
    const mode = modeNode === undefined ? undefined : (this.visit(modeNode) as "product" | "zip" | undefined);
    if (keyword === undefined || name === undefined || mode === undefined) return undefined;
    const axes = nodes(ctx, "sweepAxis")
      .map((n) => this.visit(n) as SweepAxis | undefined)
      .filter((a): a is SweepAxis => a !== undefined);
    const end = endAfter(Math.max(tokenEnd(name), axes.at(-1)?.span.end.offset ?? 0), realToken(ctx, "RCurly"));
    return {
      kind: "sweep", name: name.image, nameSpan: this.tokenSpan(name), mode, axes,
      span: this.span(keyword.startOffset, end),
    };
  }

  sweepMode(ctx: Cst.SweepModeCstChildren): "product" | "zip" | undefined {
    if (realToken(ctx, "Product") !== undefined) return "product";
    if (realToken(ctx, "Zip") !== undefined) return "zip";
    return undefined;
  }

  sweepAxis(ctx: Cst.SweepAxisCstChildren): SweepAxis | undefined {
    const head = realToken(ctx, "Identifier");
    const rest = ctx.AnyName ?? none;
    const list = node(ctx, "listLiteral");
    // A partial target (`cur.`) or a missing value list would only produce follow-on errors.
    if (head === undefined || !rest.every(isReal) || list === undefined) return undefined;
    const values = this.visit(list, tokenEnd(head)) as Expr;
    if (values.kind !== "list") return undefined;
    const last = rest.at(-1) ?? head;
    return {
      target: [head.image, ...rest.map((t) => t.image)], targetSpan: this.span(head.startOffset, tokenEnd(last)),
      values: values.items, span: this.span(head.startOffset, values.span.end.offset),
    };
  }

  // ---- types -----------------------------------------------------------------------------------

  typeRef(ctx: Cst.TypeRefCstChildren): TypeRef | undefined {
    const terms = nodes(ctx, "typeTerm").map((n) => this.visit(n) as TypeRef | undefined);
    const first = terms[0];
    if (first === undefined || terms.some((t) => t === undefined)) return undefined;
    if (terms.length === 1) return first;
    const ops = realTokens(ctx, "MulOp").map((t) => (t.image === "/" ? "/" : "×"));
    const parts = terms as TypeRef[];
    const name = parts.map((t, i) => (i === 0 ? t.text : `${ops[i - 1] ?? "×"}${t.text}`)).join("");
    const span = this.span(first.span.start.offset, parts.at(-1)!.span.end.offset);
    return { name, args: [], text: this.lines.text.slice(span.start.offset, span.end.offset), span };
  }

  typeTerm(ctx: Cst.TypeTermCstChildren): TypeRef | undefined {
    const name = realToken(ctx, "AnyName");
    if (name === undefined) return undefined;
    const args = nodes(ctx, "typeRef")
      .map((n) => this.visit(n) as TypeRef | undefined)
      .filter((t): t is TypeRef => t !== undefined);
    const end = endAfter(Math.max(tokenEnd(name), args.at(-1)?.span.end.offset ?? 0), realToken(ctx, "Greater"));
    const span = this.span(name.startOffset, end);
    return { name: name.image, args, text: this.lines.text.slice(span.start.offset, span.end.offset), span };
  }

  // ---- expressions -----------------------------------------------------------------------------

  expression(ctx: Cst.ExpressionCstChildren, anchor: number): Expr {
    return this.expr(node(ctx, "ifExpression") ?? node(ctx, "binaryExpression"), anchor);
  }

  ifExpression(ctx: Cst.IfExpressionCstChildren, anchor: number): Expr {
    const ifToken = realToken(ctx, "If");
    const start = ifToken?.startOffset ?? anchor;
    const cond = this.expr(node(ctx, "cond"), endAfter(start, ifToken));
    const then = this.expr(node(ctx, "then"), endAfter(cond.span.end.offset, realToken(ctx, "Then")));
    const otherwise = this.expr(node(ctx, "else"), endAfter(then.span.end.offset, realToken(ctx, "Else")));
    return { kind: "if", cond, then, else: otherwise, span: this.span(start, otherwise.span.end.offset) };
  }

  /**
   * A chain `operand (operator operand?)*` in source order (an operand may be missing: the parser
   * reported it), built into a tree by precedence (`binaryLevel`; every level left-associative) with
   * an explicit stack, so a chain of 10^5 terms needs no deep recursion.
   *
   * An operand that failed keeps what it had parsed (Chevrotain attaches the partial CST of each
   * rule an error passes through), as the level rules' frames did.
   */
  binaryExpression(ctx: Cst.BinaryExpressionCstChildren, anchor: number): Expr {
    const chain = ctx.chain ?? none;
    if (chain.length === 1) return this.expr(chain[0] as CstNode, anchor); // the common case: no operator
    const operands: (CstNode | undefined)[] = [chain[0] as CstNode];
    const operators: IToken[] = [];
    for (let at = 1; at < chain.length;) {
      operators.push(chain[at++] as IToken);
      operands.push(at < chain.length && !isToken(chain[at]!) ? (chain[at++] as CstNode) : undefined);
    }
    // Precedence: reduce while the operator on the stack binds at least as tightly (left-associative).
    const values: Expr[] = [];
    const pending: IToken[] = [];
    const pendingLevels: number[] = [];
    const reduce = (): void => {
      const right = values.pop()!;
      const left = values.pop()!;
      const op = pending.pop()!;
      pendingLevels.pop();
      values.push({
        kind: "binary", op: binaryOp(op), left, right, opSpan: this.tokenSpan(op),
        span: this.span(left.span.start.offset, Math.max(right.span.end.offset, tokenEnd(op))),
      });
    };
    values.push(this.expr(operands[0], anchor));
    for (let i = 0; i < operators.length; i++) {
      const op = operators[i]!;
      const level = binaryLevel(op.tokenType)!;
      while (pendingLevels.length > 0 && pendingLevels.at(-1)! >= level) reduce();
      pending.push(op);
      pendingLevels.push(level);
      values.push(this.expr(operands[i + 1], tokenEnd(op)));
    }
    while (pending.length > 0) reduce();
    return values[0]!;
  }

  unary(ctx: Cst.UnaryCstChildren, anchor: number): Expr {
    const prefixed = node(ctx, "negation") ?? node(ctx, "logicalNot");
    if (prefixed !== undefined) return this.visit(prefixed, anchor) as Expr;
    let result = this.primary(ctx, anchor);
    if (ctx.callSuffix === undefined && ctx.memberSuffix === undefined) return result;
    const suffixes = [...nodes(ctx, "callSuffix"), ...nodes(ctx, "memberSuffix")]
      .map((n) => this.visit(n, result.span.end.offset) as Suffix)
      .sort((a, b) => a.start - b.start);
    for (const s of suffixes) {
      const span = this.span(result.span.start.offset, Math.max(s.end, result.span.end.offset));
      if (s.kind === "call") result = { kind: "call", callee: result, args: s.args, span };
      else if (s.kind === "member") result = { kind: "member", object: result, property: s.property, propertySpan: s.propertySpan, span };
      else result = { kind: "error", span };
    }
    return result;
  }

  negation(ctx: Cst.NegationCstChildren, anchor: number): Expr {
    return this.prefixed(realToken(ctx, "Minus"), node(ctx, "unary"), "-", anchor);
  }
  logicalNot(ctx: Cst.LogicalNotCstChildren, anchor: number): Expr {
    return this.prefixed(realToken(ctx, "Not"), node(ctx, "unary"), "not", anchor);
  }
  private prefixed(opToken: IToken | undefined, operandNode: CstNode | undefined, op: "-" | "not", anchor: number): Expr {
    const start = opToken?.startOffset ?? anchor;
    const operand = this.expr(operandNode, endAfter(start, opToken));
    return { kind: "unary", op, operand, span: this.span(start, operand.span.end.offset) };
  }

  callSuffix(ctx: Cst.CallSuffixCstChildren, anchor: number): Suffix {
    const open = realToken(ctx, "LParen");
    const start = open?.startOffset ?? anchor;
    const args: Arg[] = [];
    let at = endAfter(start, open);
    for (const n of nodes(ctx, "argument")) {
      const arg = this.visit(n, at) as Arg;
      args.push(arg);
      at = arg.span.end.offset;
    }
    const close = realToken(ctx, "RParen");
    return { kind: "call", args, start, end: endAfter(at, close) };
  }

  argument(ctx: Cst.ArgumentCstChildren, anchor: number): Arg {
    const named = node(ctx, "namedArgument");
    if (named !== undefined) return this.visit(named, anchor) as Arg;
    const value = this.expr(node(ctx, "expression"), anchor);
    return { value, span: value.span };
  }

  namedArgument(ctx: Cst.NamedArgumentCstChildren, anchor: number): Arg {
    const name = realToken(ctx, "AnyName");
    const start = name?.startOffset ?? anchor;
    const value = this.expr(node(ctx, "expression"), endAfter(start, name, realToken(ctx, "Colon")));
    const span = this.span(start, value.span.end.offset);
    return name === undefined ? { value, span } : { name: name.image, nameSpan: this.tokenSpan(name), value, span };
  }

  memberSuffix(ctx: Cst.MemberSuffixCstChildren, anchor: number): Suffix {
    const dot = realToken(ctx, "Dot");
    const property = realToken(ctx, "AnyName");
    const start = dot?.startOffset ?? anchor;
    if (property === undefined) return { kind: "broken", start, end: endAfter(start, dot) };
    return { kind: "member", property: property.image, propertySpan: this.tokenSpan(property), start, end: tokenEnd(property) };
  }

  /** The primary of a `unary` (its literal, name, list, record or parentheses), or an error at `anchor`. */
  private primary(ctx: Cst.UnaryCstChildren, anchor: number): Expr {
    const sub = node(ctx, "numberLiteral") ?? node(ctx, "listLiteral") ?? node(ctx, "fieldBlock") ?? node(ctx, "parenthesized");
    if (sub !== undefined) {
      if (sub.name === "fieldBlock") return { kind: "record", fields: this.fields(sub), span: this.nodeSpan(sub, anchor) };
      return this.visit(sub, anchor) as Expr;
    }
    const str = realToken(ctx, "StringLiteral");
    if (str) return { kind: "string", value: stringValue(str), span: this.tokenSpan(str) };
    const bool = realToken(ctx, "True") ?? realToken(ctx, "False");
    if (bool) return { kind: "bool", value: bool.tokenType === True, span: this.tokenSpan(bool) };
    const name = realToken(ctx, "Identifier");
    if (name) return { kind: "name", name: name.image, span: this.tokenSpan(name) };
    return this.errorAt(anchor);
  }

  numberLiteral(ctx: Cst.NumberLiteralCstChildren, anchor: number): Expr {
    const num = realToken(ctx, "NumberLiteral");
    if (num === undefined) return this.errorAt(anchor);
    const unitToken = realToken(ctx, "unit");
    const unit: Unit | undefined = unitToken === undefined ? undefined
      : unitToken.tokenType === Percent ? "%" : unitWords.get(unitToken.image);
    const end = unit !== undefined && unitToken !== undefined ? tokenEnd(unitToken) : tokenEnd(num);
    const lit: NumberLit = {
      kind: "number", value: Number(num.image), ...(unit !== undefined ? { unit } : {}),
      text: this.lines.text.slice(num.startOffset, end), span: this.span(num.startOffset, end),
    };
    return lit;
  }

  listLiteral(ctx: Cst.ListLiteralCstChildren, anchor: number): Expr {
    const open = realToken(ctx, "LBracket");
    const start = open?.startOffset ?? anchor;
    const items: Expr[] = [];
    let at = endAfter(start, open);
    for (const n of nodes(ctx, "expression")) {
      const item = this.expr(n, at);
      items.push(item);
      at = item.span.end.offset;
    }
    return { kind: "list", items, span: this.span(start, endAfter(at, realToken(ctx, "RBracket"))) };
  }

  parenthesized(ctx: Cst.ParenthesizedCstChildren, anchor: number): Expr {
    const open = realToken(ctx, "LParen");
    const start = open?.startOffset ?? anchor;
    const inner = this.expr(node(ctx, "expression"), endAfter(start, open));
    const end = endAfter(inner.span.end.offset, realToken(ctx, "RParen"));
    return { ...inner, span: this.span(start, end) };
  }
}

/** The AST operator of an operator token (`×` is `*`). */
function binaryOp(t: IToken): BinaryOp {
  switch (binaryLevel(t.tokenType)) {
    case 0: return "or";
    case 1: return "and";
    case 2: return t.image as BinaryOp;
    case 3: return "..";
    case 4: return t.image === "-" ? "-" : "+";
    default: return t.image === "/" ? "/" : "*";
  }
}

const isToken = (x: IToken | CstNode): x is IToken => "image" in x;

function nonEmpty(s: string): string | undefined {
  return s.length > 0 ? s : undefined;
}

/** The one AST builder of the process (its visitor is validated against the grammar once). */
export const astBuilder = new AstBuilder();
