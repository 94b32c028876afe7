/**
 * Re-parsing after an edit, one region of declarations instead of the whole file (for the language
 * server: a keystroke in one declaration of a long file). The declarations before the edit are kept
 * as they are; those after it are kept with their spans moved; the declarations the edit touches (each
 * with the gap before it, where its doc comment is) are parsed from the new text with everything else
 * blanked out, so their spans are the file's. Used only when the old parse and the region's parse
 * have no syntax error (then, since every declaration starts with a keyword that cannot continue
 * another, the file's parse is these declarations in order); otherwise the caller parses the file.
 * test/lsp/reparse.test.ts compares it with a full parse after random edits of every example and
 * fixture.
 */
import type { Decl, Span } from "../grammar/ast.js";
import { parse, type ParseResult } from "../grammar/index.js";
import { lexTcod } from "../grammar/lexer.js";

export function reparse(prev: { text: string; result: ParseResult }, text: string, file: string): ParseResult | undefined {
  const old = prev.text;
  const decls = prev.result.ast.decls;
  // Line breaks other than \n (a lone \r) are counted by the parser's line map alone: parse the file.
  if (prev.result.errors.length > 0 || decls.length === 0 || text.includes("\r") || old.includes("\r")) return undefined;
  const max = Math.min(old.length, text.length);
  let p = 0;
  while (p < max && old.charCodeAt(p) === text.charCodeAt(p)) p++;
  let s = 0;
  while (s < max - p && old.charCodeAt(old.length - 1 - s) === text.charCodeAt(text.length - 1 - s)) s++;
  const end0 = old.length - s;
  // Declaration k owns (end of k − 1, end of k]: the first and last it touches.
  let i = 0;
  while (i < decls.length && decls[i]!.span.end.offset < p) i++;
  let j = i;
  while (j < decls.length && decls[j]!.span.end.offset < end0) j++;
  const r0 = i > 0 ? decls[i - 1]!.span.end.offset : 0;
  const r1 = j < decls.length ? decls[j]!.span.end.offset : old.length;
  const delta = text.length - old.length;
  const r1New = r1 + delta;
  if (r0 > p || r1 < end0 || r1New < r0) return undefined;
  const lineOld = lineAt(old, end0);
  const lineDelta = lineAt(text, end0 + delta) - lineOld;
  const colDelta = (end0 + delta - lineStart(text, end0 + delta)) - (end0 - lineStart(old, end0));
  // After the edit: lines move by the change in line count; on the edit's last line, columns too.
  const after = (x: Span["start"]): Span["start"] => ({ offset: x.offset + delta, line: x.line + lineDelta, column: x.line === lineOld ? x.column + colDelta : x.column });
  const trivia = sameTokens(old.slice(r0, r1), text.slice(r0, r1New), p - r0, end0 - r0);
  if (trivia) {
    // Whitespace or comments only: the same declarations, their positions after the edit moved.
    let ok = true;
    const move = (sp: Span): Span => {
      // A span starts where a token starts and ends where one ends: before the edit, or after it.
      const start = sp.start.offset < p ? sp.start : sp.start.offset >= end0 ? after(sp.start) : undefined;
      const end = sp.end.offset <= p ? sp.end : sp.end.offset > end0 ? after(sp.end) : undefined;
      if (!start || !end || (sp.start.offset === p && !trivia.startsAt(p - r0))) { ok = false; return sp; }
      return start === sp.start && end === sp.end ? sp : { ...sp, start, end };
    };
    const kept = decls.slice(i).map((d) => shifted(d, move) as Decl);
    if (ok) return { ast: { path: file, text, decls: [...decls.slice(0, i), ...kept] }, errors: [] };
  }
  const blank = (t: string) => t.replace(/[^\r\n]/g, " ");
  const region = parse(blank(text.slice(0, r0)) + text.slice(r0, r1New) + blank(text.slice(r1New)), file);
  if (region.errors.length > 0) return undefined;
  const following = decls.slice(j + 1);
  let moved: Decl[] = following;
  if (following.length > 0 && delta !== 0) {
    // Positions after the region: lines move by the change in line count; on the region's last line, columns too.
    const lineOld = lineAt(old, r1);
    const lineDelta = lineAt(text, r1New) - lineOld;
    const colDelta = (r1New - lineStart(text, r1New)) - (r1 - lineStart(old, r1));
    const pos = (x: Span["start"]): Span["start"] => ({ offset: x.offset + delta, line: x.line + lineDelta, column: x.line === lineOld ? x.column + colDelta : x.column });
    moved = following.map((d) => shifted(d, (sp) => ({ ...sp, start: pos(sp.start), end: pos(sp.end) })) as Decl);
  }
  return { ast: { path: file, text, decls: [...decls.slice(0, i), ...region.ast.decls, ...moved] }, errors: [] };
}

/**
 * Whether an edit of a region changed only whitespace and comments (not doc comments, nor what lies
 * between a doc comment and its declaration): the region lexes, before and after, to the same tokens
 * and doc comments, without a lexer error. Then the parser sees what it saw, and only positions move. `startsAt(x)`: whether a token of the old region
 * starts at offset x (where an insertion between two tokens lands before the second).
 */
function sameTokens(oldRegion: string, newRegion: string, p: number, end0: number): { startsAt(x: number): boolean } | undefined {
  const a = lexed(oldRegion);
  const b = lexed(newRegion);
  if (a.diagnostics.length || b.diagnostics.length || a.unterminatedCommentAt !== undefined || b.unterminatedCommentAt !== undefined) return undefined;
  if (a.tokens.length !== b.tokens.length || a.docs.length !== b.docs.length) return undefined;
  for (let k = 0; k < a.tokens.length; k++) if (a.tokens[k]!.tokenType !== b.tokens[k]!.tokenType || a.tokens[k]!.image !== b.tokens[k]!.image) return undefined;
  for (let k = 0; k < a.docs.length; k++) if (a.docs[k]!.image !== b.docs[k]!.image) return undefined;
  // A doc comment belongs to the declaration below it when only whitespace lies between: an edit in
  // that gap (a comment typed there) may detach it.
  const end = (t: { startOffset: number; image: string }) => t.startOffset + t.image.length;
  let lastToken = -1;
  let lastDoc = -1;
  for (const t of a.tokens) if (end(t) <= p) lastToken = Math.max(lastToken, end(t));
  for (const t of a.docs) if (end(t) <= p) lastDoc = Math.max(lastDoc, end(t));
  if (lastDoc > lastToken) return undefined;
  return { startsAt: (x) => a.tokens.some((t) => t.startOffset === x) || a.docs.some((t) => t.startOffset === x) };
}

function lineAt(text: string, offset: number): number {
  let n = 1;
  for (let k = text.indexOf("\n"); k !== -1 && k < offset; k = text.indexOf("\n", k + 1)) n++;
  return n;
}
function lineStart(text: string, offset: number): number {
  return text.lastIndexOf("\n", offset - 1) + 1;
}

/** The last two regions lexed (typing in one declaration: its old text was the new text of the edit before). */
const lexes: { text: string; result: ReturnType<typeof lexTcod> }[] = [];
function lexed(text: string): ReturnType<typeof lexTcod> {
  const hit = lexes.find((x) => x.text === text);
  if (hit) return hit.result;
  const result = lexTcod(text);
  lexes.unshift({ text, result });
  lexes.length = Math.min(lexes.length, 2);
  return result;
}

/** A copy of an AST node with every span replaced by `f(span)`. */
function shifted(v: unknown, f: (s: Span) => Span): unknown {
  if (Array.isArray(v)) return v.map((x) => shifted(x, f));
  if (!v || typeof v !== "object") return v;
  const o = v as Record<string, unknown>;
  if (typeof o["file"] === "string" && "start" in o && "end" in o) return f(o as unknown as Span);
  const out: Record<string, unknown> = {};
  for (const k in o) out[k] = shifted(o[k], f);
  return out;
}
