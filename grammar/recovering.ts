/**
 * The Chevrotain side of `parse` (index.ts): the whole file lexed by lexer.ts and parsed by
 * parser.ts with error recovery, every syntax error collected and described. index.ts runs it for
 * whatever the fast path (fast.ts) does not accept. The check snapshot bundles it separately
 * (dist/snapshot/recovering.cjs, loaded on first use), so a check of valid files never loads
 * Chevrotain at all.
 */
import { EOF, type IRecognitionException, type IToken } from "chevrotain";
import type { ExpressionParseResult, ParseResult, SyntaxErrorInfo } from "./index.js";
import { lexTcod } from "./lexer.js";
import type { BadBytes } from "./source-chars.js";
import { firstTooDeep, MAX_NESTING } from "./nesting.js";
import { tcodParser } from "./parser.js";
import { LineMap } from "./spans.js";

/** `parse` by the Chevrotain parser alone (no fast path): for the differential tests. */
export function parseRecovering(text: string, file: string, badBytes?: readonly BadBytes[]): ParseResult {
  const { result, errors } = run(text, file, () => tcodParser().sourceFile(), badBytes);
  return { ast: { path: file, text, decls: result ?? [] }, errors };
}

/** `parseExpression` by the Chevrotain parser alone (no fast path): for the differential tests. */
export function parseExpressionRecovering(text: string, file: string): ExpressionParseResult {
  const { result, errors } = run(text, file, () => tcodParser().expression());
  return { expr: result ?? { kind: "error", span: new LineMap(file, text).span(0, 0) }, errors };
}

/** Lexes, guards the nesting depth, runs one entry rule and collects every syntax error, in order. */
function run<T>(text: string, file: string, entry: () => T, badBytes?: readonly BadBytes[]): { result: T | undefined; errors: SyntaxErrorInfo[] } {
  const lines = new LineMap(file, text);
  const lexed = lexTcod(text, badBytes);
  const errors: SyntaxErrorInfo[] = lexed.diagnostics.map((d) => ({
    kind: "lexer", code: d.code, span: lines.span(d.start, d.end), ...(d.char !== undefined ? { char: d.char } : {}),
    ...(d.encoding !== undefined ? { encoding: d.encoding } : {}), ...(d.bytes !== undefined ? { bytes: d.bytes } : {}),
  }));
  // A UTF-16 or UTF-32 file (TC1009) is that one error: not parsed, so nothing else is said about it.
  if (errors.some((e) => e.code === "TC1009")) return { result: undefined, errors };

  // Too deep to parse recursively: parse up to that token only; what follows is not looked at.
  let tokens = lexed.tokens;
  let cutoff = lexed.unterminatedCommentAt ?? Infinity;
  const tooDeep = firstTooDeep(tokens);
  if (tooDeep !== undefined) {
    const at = tokens[tooDeep]!;
    errors.push({ kind: "parser", code: "TC1007", span: lines.span(at.startOffset, at.startOffset + at.image.length), limit: MAX_NESTING });
    tokens = tokens.slice(0, tooDeep);
    // Missing closers at the cut are a consequence, not news.
    cutoff = Math.min(cutoff, tokens.length > 0 ? tokenEnd(tokens.at(-1)!) : 0);
  }

  let result: T;
  let parseErrors: IRecognitionException[];
  const parser = tcodParser();
  try {
    parser.load(tokens, lines, lexed.docs);
    result = entry();
    parseErrors = parser.errors;
  } catch (e) {
    // Last line of defence for "never throws": the nesting guard is a token-level estimate, and the
    // stack left to us depends on the caller. On overflow, report TC1007 at the file's start.
    if (!(e instanceof RangeError)) throw e;
    errors.push({ kind: "parser", code: "TC1007", span: lines.span(0, 0), limit: MAX_NESTING });
    return { result: undefined, errors: sortByPosition(errors) };
  }

  const missing = new Set(parser.insertions.map((i) => i.error).filter((e) => e !== undefined));
  const seen = new Set<string>();
  for (const e of parseErrors) {
    // A token the file ends without is as "missing" as one Chevrotain could insert.
    const endedEarly = e.name === "MismatchedTokenException" && !isRealToken(e.token);
    const info = describeParseError(e, missing.has(e) || endedEarly, lines, text.length);
    // An unterminated `/*` swallowed the rest of the file (or a too-deep nest cut it): what the
    // parser says from there on, including at the end of the input, is noise.
    if (info.span.start.offset >= cutoff || (cutoff !== Infinity && !isRealToken(e.token))) continue;
    const key = `${info.code}@${info.span.start.offset}`;
    if (seen.has(key)) continue; // nested rules re-syncing at one token report it once
    seen.add(key);
    errors.push(info);
  }
  for (const op of parser.danglingOperators) {
    if (op.startOffset + op.image.length >= cutoff) continue;
    errors.push({ kind: "parser", code: "TC1004", span: lines.span(op.startOffset, op.startOffset + op.image.length), expected: `an expression after '${op.image}'` });
  }
  for (const t of parser.missingCommas) {
    const at = t.startOffset + t.image.length;
    if (at >= cutoff) continue;
    errors.push({ kind: "parser", code: "TC1004", span: lines.span(at, at), expected: "','" });
  }
  parser.release();
  return { result, errors: sortByPosition(errors) };
}

function sortByPosition(errors: SyntaxErrorInfo[]): SyntaxErrorInfo[] {
  return errors.sort((a, b) => a.span.start.offset - b.span.start.offset);
}

function describeParseError(e: IRecognitionException, isMissing: boolean, lines: LineMap, textLength: number): SyntaxErrorInfo {
  const expected = e.message;
  if (isMissing) {
    // "Missing '}'" points just after the last real token, where the missing one belongs.
    const previous = (e as IRecognitionException & { previousToken?: IToken }).previousToken;
    const at = isRealToken(previous) ? tokenEnd(previous) : tokenStart(e.token, textLength);
    return { kind: "parser", code: "TC1004", span: lines.span(at, at), expected };
  }
  const start = tokenStart(e.token, textLength);
  const end = isRealToken(e.token) && e.token.tokenType !== EOF ? tokenEnd(e.token) : start;
  return { kind: "parser", code: "TC1001", span: lines.span(start, end), found: describeToken(e.token), expected };
}

const isRealToken = (t: IToken | undefined): t is IToken =>
  t !== undefined && t.isInsertedInRecovery !== true && Number.isFinite(t.startOffset) && t.tokenType !== EOF;
const tokenEnd = (t: IToken): number => t.startOffset + t.image.length;
const tokenStart = (t: IToken, textLength: number): number => (isRealToken(t) ? t.startOffset : textLength);

/** `'with'`, `'"a long str…'`, `end of file`. */
function describeToken(t: IToken): string {
  if (!isRealToken(t)) return "end of file";
  const image = t.image.length > 24 ? `${t.image.slice(0, 23)}…` : t.image;
  return `'${image}'`;
}

export type { SourceFile } from "./ast.js";
