/**
 * The fast path of `parse` (index.ts): a hand-written lexer and recursive-descent parser for
 * error-free input that builds exactly the AST the Chevrotain parser (parser.ts) builds — the same
 * nodes, keys in the same order, the same spans and doc comments. It accepts nothing the Chevrotain
 * parser would report an error for: at the first thing it does not accept (a syntax error of any
 * kind, a lexical problem, nesting past the guard of nesting.ts) it gives up (`undefined`), and
 * index.ts parses the whole file again with Chevrotain, whose diagnostics and recovery are
 * unchanged. test/grammar/fast-parser.test.ts compares the two on every file of the repository and
 * thousands of generated and mutated inputs: equal ASTs, or a fallback.
 *
 * Why: Chevrotain makes one token object per token (a 10 MB file has about 1.9 M) and runs its rule
 * machinery per operand; here the tokens are three typed arrays (kind, start, end) and each rule is a
 * plain function. It imports nothing from Chevrotain, so a process that parses only valid files
 * never constructs the Chevrotain lexer or parser (index.ts builds them on first use).
 *
 * Decisions mirror the Chevrotain grammar's LL(3) choices on valid input: `from` is an identifier
 * wherever an identifier is expected; keywords are names where any name is (fields, named
 * arguments, members, type names); a unit word after a number is its unit unless a `:` follows;
 * fields of a `{}` block are newline- or comma-separated; items of calls and lists need their commas
 * (a forgotten one is an error there, so it falls back here); comparisons and `..` do not chain.
 */
import type {
  Arg, BinaryOp, CurriculumDecl, Decl, Expr, Field, FnDecl, ImportDecl, ImportSpec, LetDecl, ModelDecl, Param,
  Span, SweepAxis, SweepDecl, TypeRef, Unit,
} from "./ast.js";
import { docBefore } from "./doc-comments.js";
import { hasRefusedChar, type BadBytes } from "./source-chars.js";
import { LineMap } from "./spans.js";

// ---- token kinds -------------------------------------------------------------------------------

const EOF = 0;
const IDENT = 1;
const FROM = 2;
// Keywords 3..23 (FROM is one too); every kind in [IDENT, FALSE] is a name where any name may be.
const IMPORT = 3, EXPORT = 4, AS = 5, LET = 6, FN = 7, RETURN = 8, MODEL = 9, CURRICULUM = 10, WITH = 11,
  SWEEP = 12, PRODUCT = 13, ZIP = 14, IN = 15, IF = 16, THEN = 17, ELSE = 18, AND = 19, OR = 20, NOT = 21,
  TRUE = 22, FALSE = 23;
const NUMBER = 24, STRING = 25;
const DOTDOT = 26, DOT = 27, LESSEQ = 28, GREATEREQ = 29, EQEQ = 30, NOTEQ = 31, LESS = 32, GREATER = 33,
  EQUALS = 34, STAR = 35, SLASH = 36, PLUS = 37, MINUS = 38, PERCENT = 39, LPAREN = 40, RPAREN = 41,
  LBRACKET = 42, RBRACKET = 43, LCURLY = 44, RCURLY = 45, COMMA = 46, COLON = 47;

const KEYWORDS: readonly [string, number][] = [
  ["import", IMPORT], ["from", FROM], ["export", EXPORT], ["as", AS], ["let", LET], ["fn", FN], ["return", RETURN],
  ["model", MODEL], ["curriculum", CURRICULUM], ["with", WITH], ["sweep", SWEEP], ["product", PRODUCT], ["zip", ZIP],
  ["in", IN], ["if", IF], ["then", THEN], ["else", ELSE], ["and", AND], ["or", OR], ["not", NOT], ["true", TRUE],
  ["false", FALSE],
];

/** Also stated in the TC1007 message of compiler/diagnostics/catalogue.ts; change both together (nesting.ts re-exports it). */
export const MAX_NESTING = 32;

const isName = (k: number) => k >= IDENT && k <= FALSE;
const isIdent = (k: number) => k === IDENT || k === FROM;

/** Binary operator precedence by kind (-1: not a binary operator): `or` 0 … `* /` 5, as parser.ts. */
const LEVEL = new Int8Array(48).fill(-1);
LEVEL[OR] = 0; LEVEL[AND] = 1;
for (const k of [LESSEQ, GREATEREQ, EQEQ, NOTEQ, LESS, GREATER]) LEVEL[k] = 2;
LEVEL[DOTDOT] = 3; LEVEL[PLUS] = 4; LEVEL[MINUS] = 4; LEVEL[STAR] = 5; LEVEL[SLASH] = 5;
const COMPARED = 1;
const RANGED = 2;
const NON_CHAINING = [0, 0, COMPARED, RANGED, 0, 0];

/** Unit words as written → the `Unit` of ast.ts (singular and plural map to the plural). */
export const unitWords: ReadonlyMap<string, "steps" | "turns" | "tokens" | "tasks" | "episodes" | "rollouts"> =
  new Map([
    ["step", "steps"], ["steps", "steps"], ["turn", "turns"], ["turns", "turns"],
    ["token", "tokens"], ["tokens", "tokens"], ["task", "tasks"], ["tasks", "tasks"],
    ["episode", "episodes"], ["episodes", "episodes"], ["rollout", "rollouts"], ["rollouts", "rollouts"],
  ]);

// ---- lexer -------------------------------------------------------------------------------------

/** Tokens as three parallel arrays; the last token (index `count`) is EOF at the text's end. */
interface Tokens {
  kinds: Uint8Array;
  starts: Int32Array;
  ends: Int32Array;
  count: number;
  /** Doc comments (`///`, `/** *\/`) in order: start, end, and whether it is a block comment. */
  docStarts: number[];
  docEnds: number[];
  docBlock: boolean[];
}

/** Thrown (and caught in `fastParse`) where the fast path gives up. */
const GIVE_UP = { fallback: true };
function giveUp(): never {
  throw GIVE_UP;
}

const isDigit = (c: number) => c >= 48 && c <= 57;

/** ASCII character classes of the lexer: whitespace, a name's first character, a digit (else 0). */
const SPACE = 1, NAME_START = 2, DIGIT = 3;
const CLASS = new Uint8Array(128);
for (const c of [9, 10, 11, 12, 13, 32]) CLASS[c] = SPACE;
for (let c = 65; c <= 90; c++) CLASS[c] = NAME_START;
for (let c = 97; c <= 122; c++) CLASS[c] = NAME_START;
CLASS[95] = NAME_START;
for (let c = 48; c <= 57; c++) CLASS[c] = DIGIT;

/** Keywords by first character and length (`(c << 4) | length`): the candidates to compare. */
const KEYWORD_SLOTS: ([string, number][] | undefined)[] = [];
for (const kw of KEYWORDS) (KEYWORD_SLOTS[(kw[0].charCodeAt(0) << 4) | kw[0].length] ??= []).push([kw[0], kw[1]]);

/**
 * Lexes `text` as lexer.ts does, for input without lexical problems; undefined at the first one.
 * `badBytes` as for lexer.ts's `lexTcod`.
 */
function lex(text: string, badBytes?: readonly BadBytes[]): Tokens | undefined {
  const n = text.length;
  // Real files have about one token per five characters (the 10 MB bench file: 1.9 M): room for
  // that, doubled when full (a copy, and the old arrays live until the next GC).
  let capacity = Math.ceil(n / 5) + 64;
  let kinds = new Uint8Array(capacity);
  let starts = new Int32Array(capacity);
  let ends = new Int32Array(capacity);
  let count = 0;
  const docStarts: number[] = [];
  const docEnds: number[] = [];
  const docBlock: boolean[] = [];
  // Without a `\r`, a line comment ends at the next `\n`, found by `indexOf` (a check runs this
  // code cold, in the interpreter, at ~0.1 µs a character; a file's comments are much of its text).
  const noCr = !text.includes("\r");
  // Bytes that are not UTF-8 (TC1008; a U+FFFD in the text, and any U+FFFD of a text not decoded
  // from bytes), a control character such as a NUL (TC1003) and a bidi control (TC1010) are errors
  // wherever they stand, strings and comments included (lexer.ts), which this lexer would pass over
  // there. (A UTF-16 file read as UTF-8 has NULs: lexer.ts reports it as one TC1009.) A U+FFFD a file
  // holds is a character: taken in a string or comment, refused elsewhere as any other non-ASCII one.
  if ((badBytes !== undefined && badBytes.length > 0) || hasRefusedChar(text, badBytes !== undefined)) return undefined;
  let i = 0;
  for (;;) {
    // Skip whitespace.
    let c = 0;
    while (i < n) {
      c = text.charCodeAt(i);
      if ((c < 128 && CLASS[c] === SPACE) || c === 0xfeff) i++;
      else break;
    }
    if (count + 1 >= capacity) {
      capacity *= 2;
      const k = new Uint8Array(capacity); k.set(kinds); kinds = k;
      const s = new Int32Array(capacity); s.set(starts); starts = s;
      const e = new Int32Array(capacity); e.set(ends); ends = e;
    }
    if (i >= n) break;
    const cls = c < 128 ? CLASS[c]! : 0;
    let kind: number;
    let j = i + 1;
    if (cls === NAME_START) {
      while (j < n) {
        const d = text.charCodeAt(j);
        if (d < 128 && CLASS[d]! >= NAME_START) j++;
        else break;
      }
      kind = IDENT;
      const len = j - i;
      if (len <= 10) {
        const candidates = KEYWORD_SLOTS[(c << 4) | len];
        if (candidates !== undefined) {
          for (let m = 0; m < candidates.length; m++) {
            if (text.startsWith(candidates[m]![0], i)) {
              kind = candidates[m]![1];
              break;
            }
          }
        }
      }
    } else if (cls === DIGIT) {
      while (j < n && isDigit(text.charCodeAt(j))) j++;
      if (text.charCodeAt(j) === 46 && isDigit(text.charCodeAt(j + 1))) {
        j += 2;
        while (j < n && isDigit(text.charCodeAt(j))) j++;
      }
      const e = text.charCodeAt(j);
      if (e === 101 || e === 69) {
        let m = j + 1;
        const sign = text.charCodeAt(m);
        if (sign === 43 || sign === 45) m++;
        if (isDigit(text.charCodeAt(m))) {
          j = m + 1;
          while (j < n && isDigit(text.charCodeAt(j))) j++;
        }
      }
      kind = NUMBER;
    } else {
      switch (c) {
        case 34: { // "…": only closed strings with valid escapes
          for (;;) {
            if (j >= n) return undefined; // unterminated: TC1002
            const d = text.charCodeAt(j);
            if (d === 34) break;
            if (d === 10 || d === 13) return undefined;
            if (d === 92) {
              const e = text.charCodeAt(j + 1);
              if (e !== 34 && e !== 92 && e !== 110 && e !== 116) return undefined; // TC1006
              j += 2;
              continue;
            }
            j++;
          }
          j++;
          kind = STRING;
          break;
        }
        case 47: { // / // /// /* /**
          const d = text.charCodeAt(i + 1);
          if (d === 47) {
            if (noCr) {
              j = text.indexOf("\n", i + 2);
              if (j === -1) j = n;
            } else {
              j = i + 2;
              while (j < n) {
                const e = text.charCodeAt(j);
                if (e === 10 || e === 13) break;
                j++;
              }
            }
            if (text.charCodeAt(i + 2) === 47 && text.charCodeAt(i + 3) !== 47) {
              docStarts.push(i);
              docEnds.push(j);
              docBlock.push(false);
            }
            i = j;
            continue;
          }
          if (d === 42) {
            const doc = text.charCodeAt(i + 2) === 42 && text.charCodeAt(i + 3) !== 47;
            const close = text.indexOf("*/", i + (doc ? 3 : 2));
            if (close === -1) return undefined; // unterminated comment: TC1005
            if (doc) {
              docStarts.push(i);
              docEnds.push(close + 2);
              docBlock.push(true);
            }
            i = close + 2;
            continue;
          }
          kind = SLASH;
          break;
        }
        case 46: // . ..
          if (text.charCodeAt(i + 1) === 46) { kind = DOTDOT; j++; } else kind = DOT;
          break;
        case 60: // < <=
          if (text.charCodeAt(i + 1) === 61) { kind = LESSEQ; j++; } else kind = LESS;
          break;
        case 62: // > >=
          if (text.charCodeAt(i + 1) === 61) { kind = GREATEREQ; j++; } else kind = GREATER;
          break;
        case 61: // = ==
          if (text.charCodeAt(i + 1) === 61) { kind = EQEQ; j++; } else kind = EQUALS;
          break;
        case 33: // !=
          if (text.charCodeAt(i + 1) !== 61) return undefined;
          kind = NOTEQ;
          j++;
          break;
        case 42: case 0xd7: kind = STAR; break;
        case 43: kind = PLUS; break;
        case 45: kind = MINUS; break;
        case 37: kind = PERCENT; break;
        case 40: kind = LPAREN; break;
        case 41: kind = RPAREN; break;
        case 91: kind = LBRACKET; break;
        case 93: kind = RBRACKET; break;
        case 123: kind = LCURLY; break;
        case 125: kind = RCURLY; break;
        case 44: kind = COMMA; break;
        case 58: kind = COLON; break;
        default:
          return undefined; // an invalid character: TC1003
      }
    }
    kinds[count] = kind;
    starts[count] = i;
    ends[count] = j;
    count++;
    i = j;
  }
  kinds[count] = EOF;
  starts[count] = n;
  ends[count] = n;
  return { kinds, starts, ends, count, docStarts, docEnds, docBlock };
}

/**
 * nesting.ts's `firstTooDeep` over the kinds: true where the Chevrotain path would cut the parse and
 * report TC1007. Kept in step with it (the same roles, the same count).
 */
function tooDeep(kinds: Uint8Array, count: number, limit = MAX_NESTING): boolean {
  let brackets = 0;
  let prefixRun = 0;
  const ifs: number[] = [];
  for (let i = 0; i < count; i++) {
    const k = kinds[i]!;
    const role = ROLE[k]!;
    if (role === 0) {
      if (kinds[i + 1] === COLON) {
        while (ifs.length > 0 && ifs[ifs.length - 1]! >= brackets) ifs.pop();
      }
      prefixRun = 0;
      continue;
    }
    if (role === OPENER) brackets++;
    else if (role === CLOSER) {
      brackets = Math.max(0, brackets - 1);
      while (ifs.length > 0 && ifs[ifs.length - 1]! >= brackets + 1) ifs.pop();
    } else if (k === IF) ifs.push(brackets);
    else if (role === ENDER || kinds[i + 1] === COLON) {
      while (ifs.length > 0 && ifs[ifs.length - 1]! >= brackets) ifs.pop();
    }
    prefixRun = role === PREFIX ? prefixRun + 1 : 0;
    if (brackets + ifs.length + prefixRun > limit) return true;
  }
  return false;
}

/** Each kind's role for `tooDeep` (nesting.ts's roles, plus `if` and the prefix operators). */
const OPENER = 1, CLOSER = 2, ENDER = 3, PREFIX = 4, IF_ROLE = 5;
const ROLE = new Uint8Array(48);
for (const k of [LPAREN, LBRACKET, LCURLY]) ROLE[k] = OPENER;
for (const k of [RPAREN, RBRACKET, RCURLY]) ROLE[k] = CLOSER;
for (const k of [COMMA, LET, FN, MODEL, CURRICULUM, SWEEP, IMPORT, EXPORT, RETURN]) ROLE[k] = ENDER;
ROLE[MINUS] = PREFIX;
ROLE[NOT] = PREFIX;
ROLE[IF] = IF_ROLE;

// ---- parser ------------------------------------------------------------------------------------

class FastParser {
  private p = 0;
  private readonly kinds: Uint8Array;
  private readonly starts: Int32Array;
  private readonly ends: Int32Array;

  constructor(private readonly text: string, private readonly lines: LineMap, private readonly t: Tokens) {
    this.kinds = t.kinds;
    this.starts = t.starts;
    this.ends = t.ends;
  }

  // ---- tokens and spans

  /** `first` and the items after it, each after a `,`, up to `close` (a trailing `,` is taken; `close` is not). */
  private commaSeparated<T>(first: T, close: number, item: () => T): T[] {
    const items = [first];
    while (this.kinds[this.p] === COMMA && this.kinds[this.p + 1] !== close) {
      this.p++;
      items.push(item());
    }
    if (this.kinds[this.p] === COMMA) this.p++;
    return items;
  }

  private expect(kind: number): number {
    const p = this.p;
    if (this.kinds[p] !== kind) giveUp();
    this.p = p + 1;
    return p;
  }
  private expectIdent(): number {
    const p = this.p;
    if (!isIdent(this.kinds[p]!)) giveUp();
    this.p = p + 1;
    return p;
  }
  private expectName(): number {
    const p = this.p;
    if (!isName(this.kinds[p]!)) giveUp();
    this.p = p + 1;
    return p;
  }
  private image(i: number): string {
    return this.text.slice(this.starts[i]!, this.ends[i]!);
  }
  private span(start: number, end: number): Span {
    return this.lines.span(start, end);
  }
  private tokenSpan(i: number): Span {
    return this.lines.span(this.starts[i]!, this.ends[i]!);
  }
  /** The value of the string token `i` (valid escapes only: the lexer gave up on others). */
  private stringValue(i: number): string {
    const body = this.text.slice(this.starts[i]! + 1, this.ends[i]! - 1);
    if (!body.includes("\\")) return body;
    return body.replace(/\\(.?)/g, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c));
  }
  /** `name :` ahead: the next field of a `{}` block, never an operand. */
  private fieldAhead(): boolean {
    return this.kinds[this.p + 1] === COLON && isName(this.kinds[this.p]!);
  }

  /** The doc comment directly above `offset` (doc-comments.ts, as the Chevrotain side reads it). */
  private docBefore(offset: number): string | undefined {
    const { docStarts, docEnds, docBlock } = this.t;
    if (docStarts.length === 0) return undefined;
    return docBefore(this.text, { count: docStarts.length, start: (i) => docStarts[i]!, end: (i) => docEnds[i]!, block: (i) => docBlock[i]! }, offset);
  }

  // ---- declarations

  sourceFile(): Decl[] {
    const decls: Decl[] = [];
    for (;;) {
      switch (this.kinds[this.p]) {
        case EOF: return decls;
        case IMPORT: decls.push(this.importDeclaration()); break;
        case SWEEP: decls.push(this.sweepDeclaration()); break;
        case EXPORT: case LET: case FN: case MODEL: case CURRICULUM: decls.push(this.exportable()); break;
        default: giveUp();
      }
    }
  }

  private exportable(): Decl {
    const exported = this.kinds[this.p] === EXPORT;
    const start = this.starts[this.p]!;
    if (exported) this.p++;
    switch (this.kinds[this.p]) {
      case LET: return this.letDeclaration(exported, start);
      case FN: return this.fnDeclaration(exported, start);
      case MODEL: return this.modelDeclaration(exported, start);
      case CURRICULUM: return this.curriculumDeclaration(exported, start);
      default: return giveUp();
    }
  }

  private importDeclaration(): ImportDecl {
    const start = this.starts[this.p++]!;
    this.expect(LCURLY);
    const names: ImportSpec[] = this.commaSeparated(this.importSpec(), RCURLY, () => this.importSpec());
    this.expect(RCURLY);
    this.expect(FROM);
    const from = this.expect(STRING);
    return { kind: "import", names, from: this.stringValue(from), fromSpan: this.tokenSpan(from), span: this.span(start, this.ends[from]!) };
  }

  private importSpec(): ImportSpec {
    const name = this.expectIdent();
    let alias = -1;
    if (this.kinds[this.p] === AS) {
      this.p++;
      alias = this.expectIdent();
    }
    const start = this.starts[name]!;
    if (alias < 0) return { name: this.image(name), nameSpan: this.tokenSpan(name), span: this.span(start, this.ends[name]!) };
    return { name: this.image(name), nameSpan: this.tokenSpan(name), alias: this.image(alias), span: this.span(start, this.ends[alias]!) };
  }

  private letDeclaration(exported: boolean, start: number): LetDecl {
    this.p++; // let
    const name = this.expectIdent();
    let type: TypeRef | undefined;
    if (this.kinds[this.p] === COLON) {
      this.p++;
      type = this.typeRef();
    }
    const equals = this.expect(EQUALS);
    const value = this.expression();
    const decl = { kind: "let", exported, name: this.image(name), nameSpan: this.tokenSpan(name) } as LetDecl;
    if (type) decl.type = type;
    decl.value = value;
    const doc = this.docBefore(start);
    if (doc !== undefined) decl.doc = doc;
    decl.span = this.span(start, Math.max(value.span.end.offset, this.ends[equals]!));
    return decl;
  }

  private fnDeclaration(exported: boolean, start: number): FnDecl {
    this.p++; // fn
    const name = this.expectIdent();
    this.expect(LPAREN);
    const params: Param[] = isIdent(this.kinds[this.p]!) ? this.commaSeparated(this.param(), RPAREN, () => this.param()) : [];
    this.expect(RPAREN);
    let returnType: TypeRef | undefined;
    if (this.kinds[this.p] === COLON) {
      this.p++;
      returnType = this.typeRef();
    }
    const lets: LetDecl[] = [];
    let body: Expr;
    if (this.kinds[this.p] === EQUALS) {
      this.p++;
      body = this.expression();
    } else if (this.kinds[this.p] === LCURLY) {
      this.p++;
      while (this.kinds[this.p] === LET) lets.push(this.letDeclaration(false, this.starts[this.p]!));
      this.expect(RETURN);
      body = this.expression();
      this.expect(RCURLY);
    } else {
      return giveUp();
    }
    const end = this.ends[this.p - 1]!;
    const decl = { kind: "fn", exported, name: this.image(name), nameSpan: this.tokenSpan(name), params } as FnDecl;
    if (returnType) decl.returnType = returnType;
    decl.lets = lets;
    decl.body = body;
    const doc = this.docBefore(start);
    if (doc !== undefined) decl.doc = doc;
    decl.span = this.span(start, Math.max(end, body.span.end.offset));
    return decl;
  }

  private param(): Param {
    const name = this.expectIdent();
    let type: TypeRef | undefined;
    let fallback: Expr | undefined;
    let equalsEnd = 0;
    if (this.kinds[this.p] === COLON) {
      this.p++;
      type = this.typeRef();
    }
    if (this.kinds[this.p] === EQUALS) {
      equalsEnd = this.ends[this.p++]!;
      fallback = this.expression();
    }
    const end = Math.max(this.ends[name]!, type?.span.end.offset ?? 0, fallback?.span.end.offset ?? 0, equalsEnd);
    const param = { name: this.image(name), nameSpan: this.tokenSpan(name) } as Param;
    if (type) param.type = type;
    if (fallback) param.default = fallback;
    param.span = this.span(this.starts[name]!, end);
    return param;
  }

  private modelDeclaration(exported: boolean, start: number): ModelDecl {
    this.p++; // model
    const name = this.expectIdent();
    const fields = this.fieldBlock();
    const end = this.ends[this.p - 1]!;
    const doc = this.docBefore(start);
    return {
      kind: "model", exported, name: this.image(name), nameSpan: this.tokenSpan(name),
      fields, ...(doc !== undefined ? { doc } : {}),
      span: this.span(start, Math.max(this.ends[name]!, end)),
    };
  }

  private curriculumDeclaration(exported: boolean, start: number): CurriculumDecl {
    this.p++; // curriculum
    const name = this.expectIdent();
    let base: { name: string; span: Span } | undefined;
    let fields: Field[];
    if (this.kinds[this.p] === LCURLY) {
      fields = this.fieldBlock();
    } else if (this.kinds[this.p] === EQUALS) {
      this.p++;
      const b = this.expectIdent();
      this.expect(WITH);
      fields = this.fieldBlock();
      base = { name: this.image(b), span: this.tokenSpan(b) };
    } else {
      return giveUp();
    }
    const end = this.ends[this.p - 1]!;
    const doc = this.docBefore(start);
    return {
      kind: "curriculum", exported, name: this.image(name), nameSpan: this.tokenSpan(name),
      ...(base ? { base } : {}), fields, ...(doc !== undefined ? { doc } : {}),
      span: this.span(start, Math.max(this.ends[name]!, end)),
    };
  }

  /** `{ name: expr … }`: fields separated by newlines or optional commas. */
  private fieldBlock(): Field[] {
    this.expect(LCURLY);
    const fields: Field[] = [];
    for (;;) {
      const k = this.kinds[this.p]!;
      if (!(isName(k) && (k === IDENT || this.kinds[this.p + 1] === COLON))) break;
      fields.push(this.field());
      if (this.kinds[this.p] === COMMA) this.p++;
    }
    this.expect(RCURLY);
    return fields;
  }

  private field(): Field {
    const name = this.p++;
    this.expect(COLON);
    const value = this.expression();
    const start = this.starts[name]!;
    return {
      name: this.image(name), nameSpan: this.tokenSpan(name), value,
      span: this.span(start, Math.max(this.ends[name]!, value.span.end.offset)),
    };
  }

  private sweepDeclaration(): SweepDecl {
    const start = this.starts[this.p++]!;
    const name = this.expectIdent();
    const k = this.kinds[this.p];
    if (k !== PRODUCT && k !== ZIP) giveUp();
    this.p++;
    this.expect(LCURLY);
    const axes: SweepAxis[] = [];
    while (isIdent(this.kinds[this.p]!)) {
      axes.push(this.sweepAxis());
      if (this.kinds[this.p] === COMMA) this.p++;
    }
    const close = this.expect(RCURLY);
    const end = Math.max(this.ends[name]!, axes.at(-1)?.span.end.offset ?? 0, this.ends[close]!);
    return {
      kind: "sweep", name: this.image(name), nameSpan: this.tokenSpan(name), mode: k === PRODUCT ? "product" : "zip", axes,
      span: this.span(start, end),
    };
  }

  private sweepAxis(): SweepAxis {
    const head = this.expectIdent();
    const target = [this.image(head)];
    let last = head;
    while (this.kinds[this.p] === DOT) {
      this.p++;
      last = this.expectName();
      target.push(this.image(last));
    }
    this.expect(COLON);
    if (this.kinds[this.p] !== LBRACKET) giveUp();
    const list = this.listLiteral() as Extract<Expr, { kind: "list" }>;
    const start = this.starts[head]!;
    return { target, targetSpan: this.span(start, this.ends[last]!), values: list.items, span: this.span(start, list.span.end.offset) };
  }

  // ---- types

  private typeRef(): TypeRef {
    const first = this.typeTerm();
    let k = this.kinds[this.p];
    if (k !== STAR && k !== SLASH) return first;
    let name = first.text;
    let last = first;
    while (k === STAR || k === SLASH) {
      const op = this.p++;
      last = this.typeTerm();
      name += `${this.text.charCodeAt(this.starts[op]!) === 47 ? "/" : "×"}${last.text}`;
      k = this.kinds[this.p];
    }
    const span = this.span(first.span.start.offset, last.span.end.offset);
    return { name, args: [], text: this.text.slice(span.start.offset, span.end.offset), span };
  }

  private typeTerm(): TypeRef {
    const name = this.expectName();
    const args: TypeRef[] = [];
    let end = this.ends[name]!;
    if (this.kinds[this.p] === LESS) {
      this.p++;
      args.push(this.typeRef());
      while (this.kinds[this.p] === COMMA) {
        this.p++;
        args.push(this.typeRef());
      }
      const greater = this.expect(GREATER);
      end = Math.max(end, args[args.length - 1]!.span.end.offset, this.ends[greater]!);
    }
    const span = this.span(this.starts[name]!, end);
    const image = this.image(name);
    return { name: image, args, text: args.length === 0 ? image : this.text.slice(span.start.offset, span.end.offset), span };
  }

  // ---- expressions

  /** All input read. */
  atEnd(): boolean {
    return this.kinds[this.p] === EOF;
  }

  expression(): Expr {
    return this.kinds[this.p] === IF ? this.ifExpression() : this.binaryExpression();
  }

  private ifExpression(): Expr {
    const start = this.starts[this.p++]!;
    const cond = this.expression();
    this.expect(THEN);
    const then = this.expression();
    this.expect(ELSE);
    const otherwise = this.expression();
    return { kind: "if", cond, then, else: otherwise, span: this.span(start, otherwise.span.end.offset) };
  }

  /** `unary (operator unary)*`, the tree built by precedence as build.ts `chain` builds it. */
  private binaryExpression(): Expr {
    const first = this.unary();
    let level = LEVEL[this.kinds[this.p]!]!;
    if (level < 0) return first;
    const values: Expr[] = [first];
    const ops: number[] = [];
    const levels: number[] = [];
    let flags = 0;
    while (level >= 0) {
      // A second comparison or `..` in one group ends the chain there, and nothing takes the operator.
      if ((flags & NON_CHAINING[level]!) !== 0) giveUp();
      flags = level <= 1 ? 0 : level === 2 ? COMPARED : level === 3 ? flags | RANGED : flags;
      const op = this.p++;
      if (this.fieldAhead()) giveUp(); // an operator without its operand
      const right = this.unary();
      while (levels.length > 0 && levels[levels.length - 1]! >= level) this.reduce(values, ops, levels);
      ops.push(op);
      levels.push(level);
      values.push(right);
      level = LEVEL[this.kinds[this.p]!]!;
    }
    while (ops.length > 0) this.reduce(values, ops, levels);
    return values[0]!;
  }

  private reduce(values: Expr[], ops: number[], levels: number[]): void {
    const right = values.pop()!;
    const left = values.pop()!;
    const op = ops.pop()!;
    const level = levels.pop()!;
    const opEnd = this.ends[op]!;
    values.push({
      kind: "binary", op: this.binaryOp(op, level), left, right, opSpan: this.tokenSpan(op),
      span: this.span(left.span.start.offset, Math.max(right.span.end.offset, opEnd)),
    });
  }

  private binaryOp(op: number, level: number): BinaryOp {
    switch (level) {
      case 0: return "or";
      case 1: return "and";
      case 2: return this.image(op) as BinaryOp;
      case 3: return "..";
      case 4: return this.kinds[op] === MINUS ? "-" : "+";
      default: return this.kinds[op] === SLASH ? "/" : "*";
    }
  }

  private unary(): Expr {
    const k = this.kinds[this.p];
    if (k === MINUS || k === NOT) {
      const start = this.starts[this.p++]!;
      if (this.fieldAhead()) giveUp();
      const operand = this.unary();
      return { kind: "unary", op: k === MINUS ? "-" : "not", operand, span: this.span(start, operand.span.end.offset) };
    }
    let target = this.primary();
    for (;;) {
      const s = this.kinds[this.p];
      if (s === LPAREN) target = this.callSuffix(target);
      else if (s === DOT) target = this.memberSuffix(target);
      else return target;
    }
  }

  private primary(): Expr {
    const p = this.p;
    switch (this.kinds[p]) {
      case NUMBER: return this.numberLiteral();
      case STRING:
        this.p++;
        return { kind: "string", value: this.stringValue(p), span: this.tokenSpan(p) };
      case TRUE: case FALSE:
        this.p++;
        return { kind: "bool", value: this.kinds[p] === TRUE, span: this.tokenSpan(p) };
      case IDENT: case FROM:
        this.p++;
        return { kind: "name", name: this.image(p), span: this.tokenSpan(p) };
      case LBRACKET: return this.listLiteral();
      case LCURLY: {
        const start = this.starts[p]!;
        const fields = this.fieldBlock();
        return { kind: "record", fields, span: this.span(start, this.ends[this.p - 1]!) };
      }
      case LPAREN: {
        const start = this.starts[p]!;
        this.p++;
        const inner = this.expression();
        const close = this.expect(RPAREN);
        return { ...inner, span: this.span(start, Math.max(inner.span.end.offset, this.ends[close]!)) };
      }
      default: return giveUp();
    }
  }

  private numberLiteral(): Expr {
    const num = this.p++;
    const start = this.starts[num]!;
    const numEnd = this.ends[num]!;
    let end = numEnd;
    let unit: Unit | undefined;
    const next = this.kinds[this.p];
    if (next === PERCENT) {
      unit = "%";
      end = this.ends[this.p++]!;
    } else if (next === IDENT && this.kinds[this.p + 1] !== COLON) {
      const word = unitAt(this.text, this.starts[this.p]!, this.ends[this.p]!);
      if (word !== undefined) {
        unit = word;
        end = this.ends[this.p++]!;
      }
    }
    const text = this.text.slice(start, end);
    const value = end === numEnd ? Number(text) : numberValue(this.text, start, numEnd);
    const span = this.span(start, end);
    return unit !== undefined ? { kind: "number", value, unit, text, span } : { kind: "number", value, text, span };
  }

  private listLiteral(): Expr {
    const start = this.starts[this.p++]!;
    const k = this.kinds[this.p];
    const items: Expr[] = k !== RBRACKET && k !== COMMA ? this.commaSeparated(this.expression(), RBRACKET, () => this.expression()) : [];
    const close = this.expect(RBRACKET); // gives up at a missing `,` or `]`
    return { kind: "list", items, span: this.span(start, this.ends[close]!) };
  }

  private callSuffix(callee: Expr): Expr {
    this.p++; // (
    const k = this.kinds[this.p];
    const args: Arg[] = k !== RPAREN && k !== COMMA ? this.commaSeparated(this.argument(), RPAREN, () => this.argument()) : [];
    const close = this.expect(RPAREN);
    return { kind: "call", callee, args, span: this.span(callee.span.start.offset, Math.max(this.ends[close]!, callee.span.end.offset)) };
  }

  private argument(): Arg {
    if (this.fieldAhead()) {
      const name = this.p;
      this.p += 2;
      const value = this.expression();
      return { name: this.image(name), nameSpan: this.tokenSpan(name), value, span: this.span(this.starts[name]!, value.span.end.offset) };
    }
    const value = this.expression();
    return { value, span: value.span };
  }

  private memberSuffix(object: Expr): Expr {
    this.p++; // .
    const property = this.expectName();
    const span = this.span(object.span.start.offset, Math.max(this.ends[property]!, object.span.end.offset));
    return { kind: "member", object, property: this.image(property), propertySpan: this.tokenSpan(property), span };
  }
}

/** `text[from, to)` is whitespace only (as `/^\s*$/` says), as build.ts. */
/** The unit a unit word `text[start, end)` names, else undefined (`unitWords` without slicing). */
function unitAt(text: string, start: number, end: number): Unit | undefined {
  const len = end - start;
  if (len < 4 || len > 8) return undefined;
  for (let i = 0; i < UNIT_WORDS.length; i++) {
    const [word, unit] = UNIT_WORDS[i]!;
    if (word.length === len && text.startsWith(word, start)) return unit;
  }
  return undefined;
}
const UNIT_WORDS = [...unitWords];

/** `Number(text.slice(start, end))`, without the slice for a plain integer that is exact in a double. */
function numberValue(text: string, start: number, end: number): number {
  if (end - start > 15) return Number(text.slice(start, end));
  let v = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) return Number(text.slice(start, end));
    v = v * 10 + (c - 48);
  }
  return v;
}


function setUp(text: string, file: string, badBytes?: readonly BadBytes[]): FastParser | undefined {
  const tokens = lex(text, badBytes);
  if (tokens === undefined || tooDeep(tokens.kinds, tokens.count)) return undefined;
  return new FastParser(text, new LineMap(file, text), tokens);
}

function attempt<T>(run: () => T): T | undefined {
  try {
    return run();
  } catch (e) {
    // A stack overflow is left to the Chevrotain path too (it reports TC1007).
    if (e === GIVE_UP || e instanceof RangeError) return undefined;
    throw e;
  }
}

/**
 * The declarations of `text` if it is free of syntax errors and the fast path accepts it; else
 * undefined. `badBytes` as for lexer.ts's `lexTcod` (any makes it undefined: TC1008).
 */
export function fastParse(text: string, file: string, badBytes?: readonly BadBytes[]): Decl[] | undefined {
  const parser = setUp(text, file, badBytes);
  return parser === undefined ? undefined : attempt(() => parser.sourceFile());
}

/** `parseExpression`'s fast path: one expression and nothing after it, else undefined. */
export function fastParseExpression(text: string, file: string): Expr | undefined {
  const parser = setUp(text, file);
  return parser === undefined ? undefined : attempt(() => {
    const expr = parser.expression();
    return parser.atEnd() ? expr : undefined;
  });
}
