/**
 * The grammar phase: text → AST plus syntax errors. Never throws on any input; the AST is usable
 * (declarations around an error are kept, broken expressions are `{ kind: "error" }`).
 *
 * ```ts
 * const { ast, errors } = parse(text, "examples/f2b.tcod");
 * ```
 * Two parsers build the same AST: valid input takes the fast path (fast.ts: a hand-written lexer
 * and recursive-descent parser); anything it does not accept, every file with a syntax error among
 * them, is parsed again whole by the Chevrotain parser (recovering.ts, parser.ts), which reports the
 * errors and recovers. The check snapshot leaves recovering.ts out and loads it when first needed
 * (scripts/build.mjs).
 *
 * Error codes are the TC1xxx entries of compiler/diagnostics/catalogue.ts (this folder does not
 * import the compiler; the codes are plain strings here):
 * TC1001 unexpected token {found, expected} · TC1002 unterminated string · TC1003 invalid character
 * {char} · TC1004 missing token {expected} · TC1005 unterminated block comment · TC1006 invalid escape {char}
 * · TC1007 nesting too deep (`limit` carries MAX_NESTING) · TC1008 not UTF-8 {bytes} (anywhere) · TC1009
 * the file is UTF-16 or UTF-32 {encoding} (then the only error) · TC1010 a bidi control {char} (anywhere).
 */
import type { Expr, SourceFile, Span } from "./ast.js";
import { fastParse, fastParseExpression } from "./fast.js";
import { parseExpressionRecovering, parseRecovering } from "./recovering.js";
import type { BadBytes } from "./source-chars.js";

export { parseExpressionRecovering, parseRecovering };

export type SyntaxErrorCode = "TC1001" | "TC1002" | "TC1003" | "TC1004" | "TC1005" | "TC1006" | "TC1007" | "TC1008" | "TC1009" | "TC1010";

export interface SyntaxErrorInfo {
  kind: "lexer" | "parser";
  code: SyntaxErrorCode;
  span: Span;
  /** TC1001: the unexpected token, quoted (`'with'`) or `end of file`. */
  found?: string;
  /** TC1001/TC1004: what the grammar wanted, in words (`'}'`, `an expression`, `a field name`). */
  expected?: string;
  /** TC1003: the invalid character; TC1006: the escape sequence; TC1010: the bidi control. */
  char?: string;
  /**
   * TC1008 in a text decoded from a file's bytes: the bytes that are not UTF-8 ([0xE9]); absent in a
   * text that did not come from bytes (an editor's buffer), where the U+FFFD is all there is to say.
   */
  bytes?: readonly number[];
  /** TC1009: the encoding the file is in, e.g. "UTF-16 (little-endian, with a byte-order mark)". */
  encoding?: string;
  /** TC1007: the nesting limit. */
  limit?: number;
}

export interface ParseResult { ast: SourceFile; errors: SyntaxErrorInfo[] }

/**
 * The AST and syntax errors of a file (fast path first, Chevrotain on anything it does not accept).
 * `badBytes`: for a text decoded from a file's bytes (`SourceText` of source-chars.ts, as
 * plan/read-file.ts `readSourceFile` reads a source), where bytes that are not UTF-8 stood, each
 * reported by name (TC1008), any other U+FFFD being the character the file holds. Absent for a text
 * that did not come from bytes (an editor's buffer): there every U+FFFD is TC1008.
 */
export function parse(text: string, file: string, badBytes?: readonly BadBytes[]): ParseResult {
  const decls = fastParse(text, file, badBytes);
  if (decls !== undefined) return { ast: { path: file, text, decls }, errors: [] };
  return parseRecovering(text, file, badBytes);
}

export interface ExpressionParseResult { expr: Expr; errors: SyntaxErrorInfo[] }

/**
 * Parses `text` as one expression (a `--set` value, a sweep point typed on the command line): the
 * grammar's `expression` rule as the entry point, and anything after the expression is a syntax error.
 * Spans are offsets into `text`; blank out a prefix (`" ".repeat(n) + value`) to keep the columns of
 * a longer line. Such a text did not come from a file's bytes: every U+FFFD in it is TC1008.
 */
export function parseExpression(text: string, file: string): ExpressionParseResult {
  const expr = fastParseExpression(text, file);
  if (expr !== undefined) return { expr, errors: [] };
  return parseExpressionRecovering(text, file);
}
