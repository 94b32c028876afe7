/**
 * Tokens of the tcod language (docs/LANGUAGE.md, "Lexical").
 *
 * - Keywords are `longer_alt: Identifier`, so `imports` or `fnord` stay identifiers. Every keyword
 *   and Identifier also belongs to the `AnyName` category: field names, named arguments, member
 *   properties and type names may be keywords (`model: …`, `x.in`, `list<model>`).
 * - Unit words (`steps`, `turn`, …) are ordinary identifiers; the parser attaches them to a number.
 * - `×` and `*` are the same token (`Star`).
 * - `//` and `/* *\/` comments go to the `comments` group (the parser never sees them; the formatter
 *   and the language server do); `///` and `/** *\/` doc comments go to the `docs` group so the AST
 *   builder can give declarations their `doc`.
 * - Malformed input never throws: an unterminated string is still a `StringLiteral` (category) so the
 *   parser carries on, an unterminated block comment goes to the `errors` group, and invalid
 *   characters are Chevrotain lexer errors. `lexTcod` turns all three into `LexDiagnostic`s.
 * - Some characters are errors wherever they stand, inside comments and strings too (source-chars.ts):
 *   control characters but whitespace (TC1003), bidi controls (TC1010), and bytes that are not UTF-8
 *   (TC1008; each is a U+FFFD in the text). A UTF-16 or UTF-32 file read as UTF-8, or such text after
 *   UTF-8 text, is one TC1009 and nothing else.
 */
import { createToken, Lexer, type IToken, type TokenType } from "chevrotain";
import { BIDI_CHARS, BIDI_CONTROLS, CONTROL_CHARS, wrongEncoding, type BadBytes } from "./source-chars.js";

// ---- categories --------------------------------------------------------------------------------

/** Anything usable as a name where a keyword cannot be meant: field/arg names, members, type names. */
export const AnyName = createToken({ name: "AnyName", pattern: Lexer.NA, label: "a name" });
export const AddOp = createToken({ name: "AddOp", pattern: Lexer.NA, label: "'+' or '-'" });
export const MulOp = createToken({ name: "MulOp", pattern: Lexer.NA, label: "'*', '×' or '/'" });
export const CompareOp = createToken({ name: "CompareOp", pattern: Lexer.NA, label: "a comparison" });

// ---- trivia ------------------------------------------------------------------------------------

export const WhiteSpace = createToken({
  name: "WhiteSpace", pattern: /[ \t\r\n\f\v\uFEFF]+/, start_chars_hint: [" ", "\t", "\r", "\n", "\f", "\v", "\uFEFF"], group: Lexer.SKIPPED, line_breaks: true,
});
/** `/// text`; `////…` is an ordinary comment (a ruler, not documentation). */
export const DocLineComment = createToken({
  name: "DocLineComment", pattern: /\/\/\/(?!\/)[^\r\n]*/, start_chars_hint: ["/"], group: "docs", line_breaks: false,
});
export const LineComment = createToken({ name: "LineComment", pattern: /\/\/[^\r\n]*/, start_chars_hint: ["/"], group: "comments", line_breaks: false });
/** `/** text *\/`; `/**\/` is an empty ordinary comment. */
export const DocBlockComment = createToken({
  name: "DocBlockComment", pattern: /\/\*\*(?!\/)[\s\S]*?\*\//, start_chars_hint: ["/"], group: "docs", line_breaks: true,
});
export const BlockComment = createToken({
  name: "BlockComment", pattern: /\/\*[\s\S]*?\*\//, start_chars_hint: ["/"], group: "comments", line_breaks: true,
});
/** A `/*` that is never closed swallows the rest of the file; reported as TC1005. */
export const UnterminatedComment = createToken({
  name: "UnterminatedComment", pattern: /\/\*[\s\S]*/, start_chars_hint: ["/"], group: "errors", line_breaks: true,
});

// ---- literals ----------------------------------------------------------------------------------

// Strings are matched "unrolled" (`[^"\\]*(?:\\.[^"\\]*)*`): an alternation inside `*` makes the
// regexp engine backtrack per character, which overflows its stack on a string of a few MB.
export const StringLiteral = createToken({
  name: "StringLiteral", pattern: /"[^"\\\r\n]*(?:\\.[^"\\\r\n]*)*"/, start_chars_hint: ['"'], line_breaks: false, label: "a string",
});
/**
 * A string cut off by the end of the line or file. It is a `StringLiteral` for the parser (so one
 * missing quote is one error, not a cascade) and reported by the lexer as TC1002.
 */
export const UnterminatedString = createToken({
  name: "UnterminatedString", pattern: /"[^"\\\r\n]*(?:\\.[^"\\\r\n]*)*\\?/, start_chars_hint: ['"'], line_breaks: false, categories: [StringLiteral], label: "a string",
});
export const NumberLiteral = createToken({
  name: "NumberLiteral", pattern: /\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/, start_chars_hint: [..."0123456789"], line_breaks: false, label: "a number",
});
export const Identifier = createToken({
  name: "Identifier", pattern: /[A-Za-z_][A-Za-z0-9_]*/, start_chars_hint: [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_"], line_breaks: false, categories: [AnyName], label: "a name",
});

// ---- keywords ----------------------------------------------------------------------------------

function keyword(word: string): TokenType {
  const name = word[0]!.toUpperCase() + word.slice(1);
  return createToken({
    name, pattern: new RegExp(word), longer_alt: Identifier, categories: [AnyName], label: `'${word}'`,
    start_chars_hint: [word[0]!], line_breaks: false,
  });
}

export const Import = keyword("import");
/** `from` is contextual: a keyword only after an import's `}`, a name elsewhere (`linear(from: 1.0, …)`,
 *  `fn linear(from: quantity, …) = from + …`). Its Identifier category lets every name position accept it. */
export const From = createToken({
  name: "From", pattern: /from/, start_chars_hint: ["f"], line_breaks: false, longer_alt: Identifier, categories: [AnyName, Identifier], label: "'from'",
});
export const Export = keyword("export");
export const As = keyword("as");
export const Let = keyword("let");
export const Fn = keyword("fn");
export const Return = keyword("return");
export const Model = keyword("model");
export const Curriculum = keyword("curriculum");
export const With = keyword("with");
export const Sweep = keyword("sweep");
export const Product = keyword("product");
export const Zip = keyword("zip");
export const In = keyword("in");
export const If = keyword("if");
export const Then = keyword("then");
export const Else = keyword("else");
export const And = keyword("and");
export const Or = keyword("or");
export const Not = keyword("not");
export const True = keyword("true");
export const False = keyword("false");

export const keywords: readonly TokenType[] = [
  Import, From, Export, As, Let, Fn, Return, Model, Curriculum, With, Sweep, Product, Zip, In,
  If, Then, Else, And, Or, Not, True, False,
];

// ---- punctuation and operators -----------------------------------------------------------------

/**
 * The characters a punctuation pattern can start with. Every token carries `start_chars_hint`, so the
 * lexer's first-character table is built without analysing each regular expression at start-up
 * (test/grammar/precomputed.test.ts checks the hints against Chevrotain's own analysis).
 */
function startChars(pattern: RegExp): string[] {
  const src = pattern.source;
  if (src === "\\*|×") return ["*", "×"];
  return [src.startsWith("\\") ? src[1]! : src[0]!];
}

const punct = (name: string, pattern: RegExp, label: string, categories: TokenType[] = []): TokenType =>
  createToken({ name, pattern, label, categories, start_chars_hint: startChars(pattern), line_breaks: false });

export const DotDot = punct("DotDot", /\.\./, "'..'");
export const Dot = punct("Dot", /\./, "'.'");
export const LessEq = punct("LessEq", /<=/, "'<='", [CompareOp]);
export const GreaterEq = punct("GreaterEq", />=/, "'>='", [CompareOp]);
export const EqEq = punct("EqEq", /==/, "'=='", [CompareOp]);
export const NotEq = punct("NotEq", /!=/, "'!='", [CompareOp]);
export const Less = punct("Less", /</, "'<'", [CompareOp]);
export const Greater = punct("Greater", />/, "'>'", [CompareOp]);
export const Equals = punct("Equals", /=/, "'='");
/** `*` and `×` are one operator. */
export const Star = punct("Star", /\*|×/, "'*'", [MulOp]);
export const Slash = punct("Slash", /\//, "'/'", [MulOp]);
export const Plus = punct("Plus", /\+/, "'+'", [AddOp]);
export const Minus = punct("Minus", /-/, "'-'", [AddOp]);
export const Percent = punct("Percent", /%/, "'%'");
export const LParen = punct("LParen", /\(/, "'('");
export const RParen = punct("RParen", /\)/, "')'");
export const LBracket = punct("LBracket", /\[/, "'['");
export const RBracket = punct("RBracket", /]/, "']'");
export const LCurly = punct("LCurly", /{/, "'{'");
export const RCurly = punct("RCurly", /}/, "'}'");
export const Comma = punct("Comma", /,/, "','");
export const Colon = punct("Colon", /:/, "':'");

/** Order matters: longer and more specific patterns first. */
export const allTokens: readonly TokenType[] = [
  WhiteSpace,
  DocLineComment, LineComment, DocBlockComment, BlockComment, UnterminatedComment,
  StringLiteral, UnterminatedString, NumberLiteral,
  ...keywords, Identifier,
  DotDot, Dot, LessEq, GreaterEq, EqEq, NotEq, Less, Greater, Equals,
  Star, Slash, Plus, Minus, Percent,
  LParen, RParen, LBracket, RBracket, LCurly, RCurly, Comma, Colon,
  AnyName, AddOp, MulOp, CompareOp,
];

/** Unit words as written → the `Unit` of ast.ts (one table, in fast.ts). */
export { unitWords } from "./fast.js";

// Spans are computed from offsets by one line table (spans.ts), so lexer, parser and AST agree on
// line/column by construction. Tokens carry only `image` and `startOffset` ("onlyOffset": no line,
// column or end fields to count and store; a token ends at `startOffset + image.length`).
// Made on first use: a check of valid files lexes with fast.ts only.
let tcodLexer: Lexer | undefined;
const lexer = (): Lexer => (tcodLexer ??= new Lexer(allTokens as TokenType[], {
  positionTracking: "onlyOffset",
  ensureOptimizations: true,
  // The bundled CLI skips the lexer's start-up validations (tests run them on the sources).
  skipValidations: process.env.TCOD_SKIP_GRAMMAR_VALIDATION === "1",
}));

/** A lexical problem, by offset range (end exclusive). Codes are the TC1xxx strings of the catalogue. */
export interface LexDiagnostic {
  code: "TC1002" | "TC1003" | "TC1005" | "TC1006" | "TC1008" | "TC1009" | "TC1010";
  start: number;
  end: number;
  /** TC1003, TC1010: the offending character; TC1006: the escape sequence. */
  char?: string;
  /** TC1008 in a text decoded from a file's bytes: the bytes that are not UTF-8 ([0xE9]). */
  bytes?: readonly number[];
  /** TC1009: the encoding the file is in ("UTF-16 (little-endian, with a byte-order mark)"; "UTF-16 from here on (UTF-8 before it)"). */
  encoding?: string;
}

export interface LexResult {
  tokens: IToken[];
  docs: IToken[];
  /** Ordinary `//` and `/* *\/` comments (not given to the parser). */
  comments: IToken[];
  diagnostics: LexDiagnostic[];
  /** Offset where an unterminated block comment starts (everything after it is comment), if any. */
  unterminatedCommentAt?: number;
}

const validEscapes = new Set(['"', "\\", "n", "t"]);
const REPLACEMENT = "\uFFFD";

const CONTROL = new RegExp(`[${CONTROL_CHARS}]`, "g");
const BIDI = new RegExp(`[${BIDI_CHARS}]`, "g");

/**
 * Tokenizes `text`; never throws. `badBytes`: for a text decoded from a file's bytes (source-chars.ts
 * `decodeSource`), where bytes that are not UTF-8 stood; absent for a text that did not come from
 * bytes (an editor's buffer), whose every U+FFFD may stand for such bytes.
 */
export function lexTcod(text: string, badBytes?: readonly BadBytes[]): LexResult {
  const result = lexer().tokenize(text);

  // A UTF-16 or UTF-32 file read as UTF-8 is one error at its start (or where such text starts after
  // UTF-8 text), not one per NUL beside each character: nothing in it is tcod as written
  // (recovering.ts does not parse it either).
  const wrong = wrongEncoding(text);
  if (wrong !== undefined) {
    return {
      tokens: result.tokens, docs: result.groups["docs"] ?? [], comments: result.groups["comments"] ?? [],
      diagnostics: [{ code: "TC1009", start: wrong.offset, end: Math.min(wrong.offset + 1, text.length), encoding: wrong.encoding }],
    };
  }
  const diagnostics: LexDiagnostic[] = [];
  const bad = badBytes && new Set(badBytes.map((b) => b.offset));

  // Chevrotain reports a run of unmatched characters as one error; report each character, because
  // TC1003 names one character and each is a separate thing to fix.
  for (const e of result.errors) {
    const run = text.slice(e.offset, e.offset + e.length);
    let at = e.offset;
    for (const ch of run) {
      // Bytes that are not UTF-8 (a U+FFFD, in a text not decoded here any U+FFFD) are TC1008 and a
      // bidi control TC1010, below, wherever they stand; a U+FFFD the file holds is a character.
      const notUtf8 = ch === REPLACEMENT && (bad === undefined || bad.has(at));
      if (!notUtf8 && !BIDI_CONTROLS.has(ch)) diagnostics.push({ code: "TC1003", start: at, end: at + ch.length, char: ch });
      at += ch.length;
    }
  }

  // A control character (a NUL, an ESC…) is TC1003 wherever it stands: outside tokens the lexer
  // reports it above; inside a `//` or `/* */` comment (doc comments too) or a string, whose patterns
  // take any other character, here. Nothing writes one into a text file on purpose (a NUL cuts C
  // strings short, an ESC starts a terminal escape sequence), it shows as nothing or as a box, and
  // one in a string would reach the plan.
  const reported = new Set(diagnostics.map((x) => x.start));
  for (const m of text.matchAll(CONTROL)) {
    if (!reported.has(m.index)) diagnostics.push({ code: "TC1003", start: m.index, end: m.index + 1, char: m[0] });
  }

  // Bidi embeddings, overrides and isolates, wherever they stand (Trojan Source, CVE-2021-42574).
  for (const m of text.matchAll(BIDI)) diagnostics.push({ code: "TC1010", start: m.index, end: m.index + 1, char: m[0] });

  // Sources are decoded as UTF-8 with each invalid byte sequence read as U+FFFD. Inside a string it
  // would reach the plan as U+FFFD, the original bytes lost; inside a comment, `tcod fmt` would write
  // it back over them: each is an error, naming its bytes. A text not decoded from bytes (an editor's
  // buffer arrives decoded) does not say which U+FFFD replaced bytes and which is the character: there
  // every U+FFFD is an error.
  if (badBytes) {
    for (const b of badBytes) diagnostics.push({ code: "TC1008", start: b.offset, end: b.offset + 1, bytes: b.bytes });
  } else {
    for (let at = text.indexOf(REPLACEMENT); at !== -1; at = text.indexOf(REPLACEMENT, at + 1)) {
      diagnostics.push({ code: "TC1008", start: at, end: at + 1 });
    }
  }

  for (const t of result.tokens) {
    if (t.tokenType !== StringLiteral && t.tokenType !== UnterminatedString) continue;
    if (t.tokenType === UnterminatedString) {
      diagnostics.push({ code: "TC1002", start: t.startOffset, end: t.startOffset + t.image.length });
    }
    for (const m of t.image.matchAll(/\\(.?)/g)) {
      if (validEscapes.has(m[1]!)) continue;
      const start = t.startOffset + m.index;
      // A lone trailing `\` of an unterminated string is already covered by TC1002.
      if (m[1] === "") continue;
      diagnostics.push({ code: "TC1006", start, end: start + m[0].length, char: m[0] });
    }
  }

  const unterminated = result.groups["errors"] ?? [];
  let unterminatedCommentAt: number | undefined;
  for (const t of unterminated) {
    unterminatedCommentAt ??= t.startOffset;
    diagnostics.push({ code: "TC1005", start: t.startOffset, end: t.startOffset + Math.min(2, t.image.length) });
  }

  diagnostics.sort((a, b) => a.start - b.start);
  return {
    tokens: result.tokens,
    docs: result.groups["docs"] ?? [],
    comments: result.groups["comments"] ?? [],
    diagnostics,
    ...(unterminatedCommentAt !== undefined ? { unterminatedCommentAt } : {}),
  };
}

/** The value of a string token: quotes removed, escapes decoded (an invalid escape keeps its character). */
export function stringValue(token: IToken): string {
  const closed = token.tokenType !== UnterminatedString;
  const body = token.image.slice(1, closed ? -1 : undefined);
  return body.replace(/\\(.?)/g, (_, c: string) => (c === "n" ? "\n" : c === "t" ? "\t" : c));
}
