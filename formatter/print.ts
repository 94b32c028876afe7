/**
 * The canonical layout of a .tcod file, as a document of doc.ts built from the AST and the comments.
 *
 * Layout: declarations keep the blank lines between them (at most one); declaration bodies
 * (`model`, `curriculum`, `with`, `sweep`, block functions) have one field per line, indented by two,
 * no commas; `name: value` with one space; calls, lists, parameters and record literals stay on one
 * line when they fit in 100 columns, else one item per line with a trailing comma (records: no
 * commas); a `let`/`fn` whose value does not fit breaks after `=` unless the value is a list or
 * record (those break inside); a block body without `let`s is written `= value`; binary operators are spaced and break before the right operand;
 * parentheses are exactly those the precedence needs. Numbers, units, strings, types and `×`/`*` are
 * written as in the source (`1e-6`, `1 rollout`, escapes), except that a unit follows its number
 * after one space and `%` directly, and types lose their spaces (`list<turns>`).
 *
 * Comments (`//`, block, and doc comments) are printed verbatim: those before an item stay before it,
 * one after an item on its line stays after it, one before a closing bracket stays there. A comment
 * inside an expression where no item starts (between `a +` and `b`, say), or inside a number or a type
 * (between `2` and `steps`), moves before the next item.
 */
import { tokenMatcher, type IToken } from "chevrotain";
import type {
  Arg, CurriculumDecl, Decl, Expr, Field, FnDecl, ImportDecl, LetDecl, ModelDecl, Param, SourceFile, SweepDecl, TypeRef,
} from "../grammar/ast.js";
import { lexTcod, StringLiteral } from "../grammar/lexer.js";
import { breakParent, group, hardline, hasForcedBreak, ifBreak, indent, join, line, softline, type Doc } from "./doc.js";

/** Comments in source order, handed out as the printer reaches their place. */
class CommentCursor {
  private i = 0;
  constructor(private readonly list: readonly IToken[], private readonly text: string) {}

  /** The not yet printed comments that start before `offset`. */
  before(offset: number): IToken[] {
    const out: IToken[] = [];
    while (this.i < this.list.length && this.list[this.i]!.startOffset < offset) out.push(this.list[this.i++]!);
    return out;
  }

  /** A comment on the same line right after `end` (only spaces or a comma between), taken. */
  trailing(end: number): IToken | undefined {
    const c = this.list[this.i];
    if (c === undefined || c.startOffset < end) return undefined;
    if (!/^[ \t]*,?[ \t]*$/.test(this.text.slice(end, c.startOffset))) return undefined;
    this.i++;
    return c;
  }

  rest(): IToken[] {
    return this.before(Infinity);
  }
}

const image = (c: IToken): string => c.image.replace(/[ \t]+$/gm, "");
const isLine = (c: IToken): boolean => c.image.startsWith("//");
const end = (c: IToken): number => c.startOffset + c.image.length;

interface Item { start: number; end: number; print: () => Doc }

export class Printer {
  private readonly comments: CommentCursor;

  constructor(private readonly file: SourceFile, comments: readonly IToken[]) {
    this.comments = new CommentCursor(comments, file.text);
  }

  private blankBetween(a: number, b: number): boolean {
    return /\n[ \t\r\f\v]*\r?\n/.test(this.file.text.slice(a, b)) || /\r[ \t\f\v]*\r(?!\n)/.test(this.file.text.slice(a, b));
  }

  // ---- containers ------------------------------------------------------------------------------

  /**
   * Items one per line (declarations, fields of a body, lets, sweep axes), with their comments and
   * the source's blank lines between them. `close`: offset of the closing bracket (comments before it
   * stay inside); undefined at the top level.
   */
  private lines(items: Item[], close: number | undefined): Doc[] {
    const out: Doc[] = [];
    let prevEnd: number | undefined;
    const push = (start: number, stop: number, doc: Doc) => {
      if (prevEnd !== undefined) out.push(this.blankBetween(prevEnd, start) ? [hardline, hardline] : hardline);
      out.push(doc);
      prevEnd = stop;
    };
    for (const item of items) {
      for (const c of this.comments.before(item.start)) push(c.startOffset, end(c), image(c));
      const doc = item.print();
      const t = this.comments.trailing(item.end);
      push(item.start, t ? end(t) : item.end, t ? [doc, "  ", image(t)] : doc);
    }
    const dangling = close === undefined ? this.comments.rest() : this.comments.before(close);
    for (const c of dangling) push(c.startOffset, end(c), image(c));
    return out;
  }

  /** `{` lines `}` — always broken; `{}` when empty. */
  private body(items: Item[], close: number): Doc {
    const inner = this.lines(items, close);
    if (inner.length === 0) return "{}";
    return ["{", indent([hardline, inner]), hardline, "}"];
  }

  /**
   * `open item, item close` on one line when it fits, else one item per line. `commas`: a trailing
   * comma when broken (calls, lists, parameters) or no commas at all when broken (records).
   */
  private inline(open: string, items: Item[], close: string, closeAt: number | undefined, style: "commas" | "record" | "braces"): Doc {
    const docs: Doc[] = [];
    items.forEach((item, i) => {
      const leading = this.comments.before(item.start).map((c) => [image(c), isLine(c) ? hardline : " "]);
      const doc = item.print();
      const last = i === items.length - 1;
      const sep = style === "record" ? (last ? "" : ifBreak("", ",")) : last ? ifBreak(",") : ",";
      const t = this.comments.trailing(item.end);
      docs.push([leading, doc, sep, t ? [" ", image(t), isLine(t) ? breakParent : ""] : ""]);
    });
    const dangling = closeAt === undefined ? [] : this.comments.before(closeAt);
    const tail: Doc = dangling.length ? [hardline, join(hardline, dangling.map(image))] : "";
    if (docs.length === 0 && dangling.length === 0) return open + close;
    const pad = style === "commas" ? softline : line;
    return group([open, indent([pad, join(line, docs), tail]), pad, close]);
  }

  // ---- declarations ----------------------------------------------------------------------------

  file_(): Doc {
    const decls = this.lines(this.file.decls.map((d) => this.declItem(d)), undefined);
    return decls.length ? [decls, hardline] : "";
  }

  private declItem(d: Decl): Item {
    return { start: d.span.start.offset, end: d.span.end.offset, print: () => this.decl(d) };
  }

  private decl(d: Decl): Doc {
    switch (d.kind) {
      case "import": return this.importDecl(d);
      case "let": return this.letDecl(d);
      case "fn": return this.fnDecl(d);
      case "model": return this.modelDecl(d);
      case "curriculum": return this.curriculumDecl(d);
      case "sweep": return this.sweepDecl(d);
    }
  }

  private importDecl(d: ImportDecl): Doc {
    const specs = d.names.map((s) => ({ start: s.span.start.offset, end: s.span.end.offset, print: () => (s.alias ? `${s.name} as ${s.alias}` : s.name) }));
    const raw = this.file.text.slice(d.fromSpan.start.offset, d.fromSpan.end.offset);
    const path = raw.startsWith('"') && raw.endsWith('"') && raw.length >= 2 ? raw : JSON.stringify(d.from);
    return ["import ", this.inline("{", specs, "}", this.find("}", d.names.at(-1)?.span.end.offset ?? d.span.start.offset), "braces"), " from ", path];
  }

  private letDecl(d: LetDecl): Doc {
    const head = [d.exported ? "export " : "", "let ", d.name, d.type ? [": ", typeRef(d.type)] : ""];
    return this.assignment(head, d.value);
  }

  /** `head = value`: breaks inside a list or record value, else after `=` first. */
  private assignment(head: Doc, value: Expr): Doc {
    const v = this.expr(value, 0);
    // A call that must break anyway (a `//` comment among its arguments) breaks inside, not after `=`.
    if (value.kind === "list" || value.kind === "record" || (value.kind === "call" && hasForcedBreak(v))) return [head, " = ", v];
    return group([head, " =", indent([line, v])]);
  }

  private fnDecl(d: FnDecl): Doc {
    const params = d.params.map((p) => ({ start: p.span.start.offset, end: p.span.end.offset, print: () => this.param(p) }));
    const head: Doc = [
      d.exported ? "export " : "", "fn ", d.name,
      this.inline("(", params, ")", this.find(")", d.params.at(-1)?.span.end.offset ?? d.nameSpan.end.offset), "commas"),
      d.returnType ? [": ", typeRef(d.returnType)] : "",
    ];
    // `{ return x }` without lets is the same function as `= x` (the same AST): written `= x`.
    if (d.lets.length === 0) return this.assignment(head, d.body);
    const items: Item[] = d.lets.map((l) => ({ start: l.span.start.offset, end: l.span.end.offset, print: () => this.letDecl(l) }));
    items.push({ start: d.body.span.start.offset, end: d.body.span.end.offset, print: () => ["return ", this.expr(d.body, 0)] });
    return [head, " ", this.body(items, d.span.end.offset - 1)];
  }

  /** Offset of the first `ch` at or after `from` outside comments and strings (the text's end if none). */
  private find(ch: string, from: number): number {
    const t = this.file.text;
    for (let i = from; i < t.length; i++) {
      const c = t[i]!;
      if (c === ch) return i;
      if (c === '"') { i++; while (i < t.length && t[i] !== '"' && t[i] !== "\n") i += t[i] === "\\" ? 2 : 1; continue; }
      if (c === "/" && t[i + 1] === "/") { while (i < t.length && t[i] !== "\n") i++; continue; }
      if (c === "/" && t[i + 1] === "*") { const e = t.indexOf("*/", i + 2); i = e < 0 ? t.length : e + 1; continue; }
    }
    return t.length;
  }

  private param(p: Param): Doc {
    return [p.name, p.type ? [": ", typeRef(p.type)] : "", p.default ? [" = ", this.expr(p.default, 0)] : ""];
  }

  private fieldItems(fields: Field[]): Item[] {
    return fields.map((f) => ({ start: f.span.start.offset, end: f.span.end.offset, print: () => [f.name, ": ", this.expr(f.value, 0)] }));
  }

  private modelDecl(d: ModelDecl): Doc {
    return [d.exported ? "export " : "", "model ", d.name, " ", this.body(this.fieldItems(d.fields), d.span.end.offset - 1)];
  }

  private curriculumDecl(d: CurriculumDecl): Doc {
    const base = d.base ? [" = ", d.base.name, " with"] : "";
    return [d.exported ? "export " : "", "curriculum ", d.name, base, " ", this.body(this.fieldItems(d.fields), d.span.end.offset - 1)];
  }

  private sweepDecl(d: SweepDecl): Doc {
    const axes = d.axes.map((a) => ({
      start: a.span.start.offset, end: a.span.end.offset,
      print: () => [a.target.join("."), ": ", this.list(a.values, a.span.end.offset - 1)],
    }));
    return ["sweep ", d.name, " ", d.mode, " ", this.body(axes, d.span.end.offset - 1)];
  }

  // ---- expressions -----------------------------------------------------------------------------

  private list(items: Expr[], closeAt: number): Doc {
    return this.inline("[", items.map((e) => ({ start: e.span.start.offset, end: e.span.end.offset, print: () => this.expr(e, 0) })), "]", closeAt, "commas");
  }

  /** `e` printed where precedence `min` is needed: parenthesized when it binds more loosely. */
  expr(e: Expr, min: number): Doc {
    const doc = this.bare(e);
    return precedence(e) < min ? ["(", doc, ")"] : doc;
  }

  private bare(e: Expr): Doc {
    switch (e.kind) {
      case "number": return numberText(withoutComments(e.text));
      case "string": return this.stringText(e.span.start.offset, e.span.end.offset);
      case "bool": return String(e.value);
      case "name": return e.name;
      case "member": return [this.expr(e.object, POSTFIX), ".", e.property];
      case "call": {
        const args = e.args.map((a) => ({ start: a.span.start.offset, end: a.span.end.offset, print: () => this.arg(a) }));
        return [this.expr(e.callee, POSTFIX), this.inline("(", args, ")", e.span.end.offset - 1, "commas")];
      }
      case "list": return this.list(e.items, e.span.end.offset - 1);
      case "record": return this.inline("{", this.fieldItems(e.fields), "}", e.span.end.offset - 1, "record");
      case "binary": {
        const p = BINARY[e.op]!;
        const chains = e.op !== ".." && p !== COMPARISON;
        // `×` and `*` are one operator: the source's spelling is kept.
        const op = e.op === "*" ? this.file.text.slice(e.opSpan.start.offset, e.opSpan.end.offset) : e.op;
        return group([this.expr(e.left, chains ? p : p + 1), " ", op === "×" ? "×" : e.op, indent([line, this.expr(e.right, p + 1)])]);
      }
      case "unary": return [e.op === "not" ? "not " : "-", this.expr(e.operand, UNARY)];
      case "if": return group([
        "if ", this.expr(e.cond, 0), indent([line, "then ", this.expr(e.then, 0)]), indent([line, "else ", this.expr(e.else, 0)]),
      ]);
      case "error": throw new Error("the formatter never prints a file with syntax errors");
    }
  }

  /** A string literal as written (escapes kept); its span may include parentheses and comments around it. */
  private stringText(start: number, stop: number): string {
    const token = lexTcod(this.file.text.slice(start, stop)).tokens.find((t) => tokenMatcher(t, StringLiteral));
    return token?.image ?? this.file.text.slice(start, stop);
  }

  private arg(a: Arg): Doc {
    return a.name !== undefined ? [a.name, ": ", this.expr(a.value, 0)] : this.expr(a.value, 0);
  }
}

const COMPARISON = 3;
const UNARY = 7;
const POSTFIX = 8;
const BINARY: Record<string, number> = {
  "or": 1, "and": 2, "<": COMPARISON, "<=": COMPARISON, ">": COMPARISON, ">=": COMPARISON, "==": COMPARISON, "!=": COMPARISON,
  "..": 4, "+": 5, "-": 5, "*": 6, "/": 6,
};

function precedence(e: Expr): number {
  switch (e.kind) {
    case "if": return 0;
    case "binary": return BINARY[e.op]!;
    case "unary": return UNARY;
    default: return POSTFIX;
  }
}

/**
 * A number's or a type's source text without the comments it spans (a block comment between a number and its unit): the printer
 * hands every comment out once, through its cursor, so one kept inside such a text would be printed
 * twice, and once more on every run.
 */
export function withoutComments(text: string): string {
  return text.replace(/\/\*[\s\S]*?\*\/|\/\/[^\r\n]*/g, " ");
}

/** `16 tasks`, `16tasks` → `16 tasks`; `50 %` → `50%`. */
function numberText(text: string): string {
  const m = /^(\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)\s*(%|[A-Za-z_]\w*)?$/.exec(text);
  if (!m) return text;
  return m[2] === undefined ? m[1]! : m[2] === "%" ? `${m[1]}%` : `${m[1]} ${m[2]}`;
}

/** `list<turns>`; a compound type (`tasks×rollouts`, `steps/turns`) as written, without spaces. */
export function typeRef(t: TypeRef): string {
  if (t.args.length > 0) return `${t.name}<${t.args.map(typeRef).join(", ")}>`;
  return withoutComments(t.text).replace(/\s+/g, "");
}
