/**
 * AST construction for the parser's embedded actions (grammar/parser.ts): spans, doc comments, and
 * the nodes whose shape takes more than one line. Each rule of the parser builds its node from the
 * tokens and child nodes it has when it ends — normally, or early when an error passes through it,
 * with whatever it had parsed by then. So every builder here is defensive:
 * - any token may be missing or one Chevrotain inserted during recovery (empty image, NaN offsets):
 *   only real tokens count (`isReal`);
 * - a missing expression becomes `{ kind: "error" }` with a zero-width span where it was expected
 *   (the "anchor": the end of what came before it);
 * - a declaration, field, parameter, import name or sweep axis whose *name* is missing is skipped
 *   (its syntax error is already reported; a nameless node would only cause follow-on errors);
 * - spans come from real tokens only (`start` inclusive, `end` exclusive).
 * Choices: a parenthesized expression's span includes its parentheses; `NumberLit.text` is the
 * literal as written, unit included (`6 steps`); a product type `tasks×rollouts` is one `TypeRef`
 * whose `name` is the normalized text (`×` for `*`) with no args.
 */
import type { IToken } from "chevrotain";
import type { BinaryOp, Expr, Field, LetDecl, Span, TypeRef } from "./ast.js";
import { docBefore } from "./doc-comments.js";
import { DocBlockComment } from "./lexer.js";
import type { LineMap } from "./spans.js";

/** A token from the source (not one inserted by error recovery). */
export const isReal = (t: IToken | undefined): t is IToken =>
  t !== undefined && t.isInsertedInRecovery !== true && Number.isFinite(t.startOffset);

export const tokenEnd = (t: IToken): number => t.startOffset + t.image.length;

/** The end of the last real token among `a`, `b` (in source order), else `fallback`. */
export function endAfter(fallback: number, a?: IToken, b?: IToken): number {
  let end = fallback;
  if (isReal(a)) end = Math.max(end, tokenEnd(a));
  if (isReal(b)) end = Math.max(end, tokenEnd(b));
  return end;
}

/** How an exported-or-not declaration starts (its `export` keyword, else its own keyword). */
export interface DeclStart { exported: boolean; start: number }

/** A `{ … }` block of fields as a declaration body: its fields, and the end of its last real token. */
export interface FieldBlockResult { fields: Field[]; end: number | undefined }
/** A curriculum's body: `{ … }`, or `= base with { … }`. */
export interface CurriculumBodyValue { base?: { name: string; span: Span }; fields: Field[] }
/** A function's body: `= expr` or `{ let …; return expr }`; `end`: its last real token's end. */
export interface FnBodyResult { lets: LetDecl[]; body: Expr; end: number | undefined }

/** One file's (or one expression's) line table and doc comments, and the node constructors that read them. */
export class AstBuilder {
  lines!: LineMap;
  private docs: readonly IToken[] = [];

  reset(lines: LineMap, docs: readonly IToken[]): void {
    this.lines = lines;
    this.docs = docs;
  }

  span(start: number, end: number): Span {
    return this.lines.span(start, end);
  }
  tokenSpan(t: IToken): Span {
    return this.lines.span(t.startOffset, tokenEnd(t));
  }
  errorAt(offset: number): Expr {
    return { kind: "error", span: this.span(offset, offset) };
  }
  text(start: number, end: number): string {
    return this.lines.text.slice(start, end);
  }

  /** The doc comment directly above `offset` (only whitespace between), as plain text. */
  docBefore(offset: number): string | undefined {
    const docs = this.docs;
    return docBefore(this.lines.text, {
      count: docs.length, start: (i) => docs[i]!.startOffset, end: (i) => tokenEnd(docs[i]!), block: (i) => docs[i]!.tokenType === DocBlockComment,
    }, offset);
  }

  /**
   * A chain `operand (operator operand?)*` (`items[from..]`, in source order; an operand is
   * undefined where the parser reported it missing) as a tree by precedence (`levelOf`; every level
   * left-associative), with explicit stacks, so a chain of 10^5 terms needs no deep recursion.
   */
  chain(items: readonly (Expr | IToken | undefined)[], from: number, anchor: number, levelOf: (t: IToken) => number): Expr {
    const count = items.length - from;
    const first = items[from] as Expr | undefined;
    if (count <= 1) return first ?? this.errorAt(anchor);
    const values: Expr[] = [first ?? this.errorAt(anchor)];
    const pending: IToken[] = [];
    const pendingLevels: number[] = [];
    const reduce = (): void => {
      const right = values.pop()!;
      const left = values.pop()!;
      const op = pending.pop()!;
      pendingLevels.pop();
      values.push({
        kind: "binary", op: binaryOp(op, levelOf(op)), left, right, opSpan: this.tokenSpan(op),
        span: this.span(left.span.start.offset, Math.max(right.span.end.offset, tokenEnd(op))),
      });
    };
    for (let at = from + 1; at < items.length; at += 2) {
      const op = items[at] as IToken;
      const level = levelOf(op);
      while (pendingLevels.length > 0 && pendingLevels[pendingLevels.length - 1]! >= level) reduce();
      pending.push(op);
      pendingLevels.push(level);
      values.push((items[at + 1] as Expr | undefined) ?? this.errorAt(tokenEnd(op)));
    }
    while (pending.length > 0) reduce();
    return values[0]!;
  }

  /** `tasks×rollouts`: one `TypeRef` whose name is the normalized text; a missing term drops the type. */
  typeRef(terms: readonly (TypeRef | undefined)[], ops: readonly IToken[]): TypeRef | undefined {
    const first = terms[0];
    if (first === undefined || terms.some((t) => t === undefined)) return undefined;
    if (terms.length === 1) return first;
    const names = ops.filter(isReal).map((t) => (t.image === "/" ? "/" : "×"));
    const parts = terms as TypeRef[];
    const name = parts.map((t, i) => (i === 0 ? t.text : `${names[i - 1] ?? "×"}${t.text}`)).join("");
    const span = this.span(first.span.start.offset, parts[parts.length - 1]!.span.end.offset);
    return { name, args: [], text: this.text(span.start.offset, span.end.offset), span };
  }

  typeTerm(name: IToken | undefined, args: readonly (TypeRef | undefined)[], greater: IToken | undefined): TypeRef | undefined {
    if (!isReal(name)) return undefined;
    const real = args.filter((t): t is TypeRef => t !== undefined);
    const end = endAfter(Math.max(tokenEnd(name), real.at(-1)?.span.end.offset ?? 0), greater);
    const span = this.span(name.startOffset, end);
    return { name: name.image, args: real, text: this.text(span.start.offset, span.end.offset), span };
  }
}

/** The AST operator of an operator token of precedence `level` (`×` is `*`). */
function binaryOp(t: IToken, level: number): BinaryOp {
  switch (level) {
    case 0: return "or";
    case 1: return "and";
    case 2: return t.image as BinaryOp;
    case 3: return "..";
    case 4: return t.image === "-" ? "-" : "+";
    default: return t.image === "/" ? "/" : "*";
  }
}

