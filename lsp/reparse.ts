/**
 * Re-parsing after an edit, one region of declarations instead of the whole file (for the language
 * server: a keystroke in one declaration of a long file). The declarations before the edit are kept
 * as they are; those after it are kept with their spans moved; the declarations the edit touches (each
 * with the gap before it, where its doc comment is) are parsed from the new text with everything else
 * blanked out, so their spans are the file's. Used only when the old parse and the region's parse
 * have no syntax error (then, since every declaration starts with a keyword that cannot continue
 * another, the file's parse is these declarations in order); otherwise the caller parses the file.
 * test/lsp/reparse.test.ts compares it with a full parse after random edits of every example and
 * fixture. What it keeps from one edit to the next is the caller's (`ReparseMemo`, one per document).
 */
import type { Decl, Span } from "../grammar/ast.js";
import { parse, type ParseResult } from "../grammar/index.js";
import { lexTcod } from "../grammar/lexer.js";

/** How a re-parse took the new text: positions moved only, numbers patched, or a region parsed. */
export type ReparseWay = "trivia" | "numbers" | "region";

/**
 * What a document's re-parses keep for the next one (typing in one declaration, the text around it
 * and its old region are the previous keystroke's): the last few texts blanked, up to 256 KB each,
 * and the last two regions lexed. Owned by whoever holds the document's parse (lsp/workspace.ts, one
 * per file), so documents and workspaces share nothing. It holds copies (`detached`), not slices of
 * the document's texts, which would keep those texts alive.
 */
export class ReparseMemo {
  private readonly blanks: { text: string; blank: string }[] = [];
  private readonly lexes: { text: string; result: ReturnType<typeof lexTcod> }[] = [];

  /** How many entries it holds (for tests: bounded however many edits). */
  get size(): number { return this.blanks.length + this.lexes.length; }

  /** `t` with every character but line breaks made a space. */
  blank(t: string): string {
    const hit = this.blanks.find((x) => x.text === t);
    if (hit) return hit.blank;
    const out = t.replace(/[^\r\n]/g, " ");
    if (t.length > 256 * 1024) return out;
    this.blanks.unshift({ text: detached(t), blank: out });
    this.blanks.length = Math.min(this.blanks.length, 4);
    return out;
  }

  /** `lexTcod(text)`, the last two kept. */
  lexed(region: string): ReturnType<typeof lexTcod> {
    const hit = this.lexes.find((x) => x.text === region);
    if (hit) return hit.result;
    // (Its tokens' images are slices of what it lexes: of the copy.)
    const text = detached(region);
    const result = lexTcod(text);
    this.lexes.unshift({ text, result });
    this.lexes.length = Math.min(this.lexes.length, 2);
    return result;
  }
}

/**
 * The parse of `text`, the new text of the file whose last parse was `prev` (without syntax errors),
 * and how it was taken; undefined when the caller must parse the file.
 */
export function reparse(prev: { text: string; result: ParseResult }, text: string, file: string, memo = new ReparseMemo()): { result: ParseResult; way: ReparseWay } | undefined {
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
  const aligned = sameTokens(old.slice(r0, r1), text.slice(r0, r1New), p - r0, memo);
  if (aligned) {
    // The same tokens but perhaps for the values of numbers (`steps: 250` → `251`), with whitespace
    // and comments changed or not: the parser sees what it saw, so the declarations are the same,
    // with positions moved token by token and each changed literal given its new value and text.
    const kept = patched(decls.slice(i), aligned, r0, r1, r1New, text, shiftPast(old, text, r1, r1New));
    if (kept) return { result: { ast: { path: file, text, decls: [...decls.slice(0, i), ...kept] }, errors: [] }, way: aligned.numbers.length ? "numbers" : "trivia" };
  }
  const region = parse(memo.blank(text.slice(0, r0)) + text.slice(r0, r1New) + memo.blank(text.slice(r1New)), file);
  if (region.errors.length > 0) return undefined;
  // Its names and strings are slices of the text parsed, the file's size: kept with the declarations
  // across later edits, they would keep one such text alive per declaration edited.
  detachStrings(region.ast.decls);
  const following = decls.slice(j + 1);
  let moved: Decl[] = following;
  if (following.length > 0 && delta !== 0) {
    const pos = shiftPast(old, text, r1, r1New);
    moved = following.map((d) => shifted(d, (sp) => ({ ...sp, start: pos(sp.start), end: pos(sp.end) })) as Decl);
  }
  return { result: { ast: { path: file, text, decls: [...decls.slice(0, i), ...region.ast.decls, ...moved] }, errors: [] }, way: "region" };
}

type Pos = Span["start"];

/**
 * Positions at or after old offset `r1` (where the region ends; the texts agree from there on): lines
 * move by the change in line count; on the region's last line, columns too.
 */
function shiftPast(old: string, text: string, r1: number, r1New: number): (x: Pos) => Pos {
  const delta = r1New - r1;
  const lineOld = lineAt(old, r1);
  const lineDelta = lineAt(text, r1New) - lineOld;
  const colDelta = (r1New - lineStart(text, r1New)) - (r1 - lineStart(old, r1));
  // A parse shares one position object among the spans that start or end at it (grammar/spans.ts
  // `LineMap.position`): moved, they share one again. Else each span gets its own two, and the moved
  // half of a large file weighs about twice what its parse did (garbage at the next keystroke).
  const moved = new Map<Pos, Pos>();
  return (x) => {
    let y = moved.get(x);
    if (y === undefined) moved.set(x, (y = { offset: x.offset + delta, line: x.line + lineDelta, column: x.line === lineOld ? x.column + colDelta : x.column }));
    return y;
  };
}

/**
 * The declarations from the first one the edit touched, after an edit that changed only whitespace,
 * comments and number literals in the region [r0, r1) of the old text ([r0, r1New) of the new): every span start and
 * end inside the region moved to where its token (or doc comment) is now, those past it by `past`,
 * and each literal whose number changed given the new value and text. Undefined when a span inside
 * the region does not start or end where a token does (then the region is parsed).
 */
function patched(decls: Decl[], al: Aligned, r0: number, r1: number, r1New: number, text: string, past: (x: Pos) => Pos): Decl[] | undefined {
  const { a, b } = al;
  // Where a token or doc comment of the old region starts (or ends): its index, by binary search.
  const find = (list: { startOffset: number; image: string }[], offset: number, end: boolean): number => {
    let lo = 0;
    let hi = list.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      const t = list[mid]!;
      const at = t.startOffset + (end ? t.image.length : 0);
      if (at < offset) lo = mid + 1;
      else hi = mid;
    }
    const t = list[lo];
    return t !== undefined && t.startOffset + (end ? t.image.length : 0) === offset ? lo : -1;
  };
  /** The new offset of an old one inside the region where a token or doc comment starts (or ends), else -1. */
  const mapped = (offset: number, end: boolean): number => {
    const rel = offset - r0;
    let k = find(a.tokens, rel, end);
    if (k >= 0) return r0 + b.tokens[k]!.startOffset + (end ? b.tokens[k]!.image.length : 0);
    k = find(a.docs, rel, end);
    if (k >= 0) return r0 + b.docs[k]!.startOffset + (end ? b.docs[k]!.image.length : 0);
    return -1;
  };
  // Lines and columns inside the region, from the new text (the same as the old one before r0).
  const firstLine = lineAt(text, r0);
  const firstLineStart = lineStart(text, r0);
  const breaks: number[] = [];
  for (let k = text.indexOf("\n", r0); k !== -1 && k < r1New; k = text.indexOf("\n", k + 1)) breaks.push(k);
  const changed = new Map<number, string>();
  for (const k of al.numbers) changed.set(r0 + a.tokens[k]!.startOffset, b.tokens[k]!.image);
  let ok = true;
  const move = (x: Pos, end: boolean): Pos => {
    const to = x.offset <= r1 ? mapped(x.offset, end) : -1;
    if (to < 0) {
      if (x.offset >= r1) { const y = past(x); return y.offset === x.offset && y.line === x.line && y.column === x.column ? x : y; }
      ok = false;
      return x;
    }
    let lo = 0;
    let hi = breaks.length;
    while (lo < hi) { const mid = (lo + hi) >> 1; if (breaks[mid]! < to) lo = mid + 1; else hi = mid; }
    const line = firstLine + lo;
    const column = to - (lo === 0 ? firstLineStart : breaks[lo - 1]! + 1) + 1;
    return to === x.offset && line === x.line && column === x.column ? x : { offset: to, line, column };
  };
  // Copied where something changed; a node with nothing changed inside is kept as it is (so are its spans).
  const moveSpan = (sp: Span): Span => {
    const start = move(sp.start, false);
    const end = move(sp.end, true);
    return start === sp.start && end === sp.end ? sp : { ...sp, start, end };
  };
  const isSpan = (o: Record<string, unknown>): boolean => typeof o["file"] === "string" && "start" in o && "end" in o;
  /** A node's own fix-ups once its children are copied: a changed number's value, a text taken from its span. */
  const finish = (o: Record<string, unknown>, out: Record<string, unknown> | undefined): unknown => {
    const own = (): Record<string, unknown> => (out ??= { ...o });
    if (o["kind"] === "number") {
      const image = changed.get((o["span"] as Span).start.offset);
      if (image !== undefined) own()["value"] = Number(image);
    }
    // A node's text is its span's (NumberLit, TypeRef): taken from the new text.
    if (typeof o["text"] === "string" && o["span"]) {
      const sp = (out ?? o)["span"] as Span;
      const t = text.slice(sp.start.offset, sp.end.offset);
      if (t !== o["text"]) own()["text"] = detached(t);
    }
    return out ?? o;
  };
  // An explicit stack, not recursion: a long operator chain is a tree hundreds of levels deep.
  interface Frame { v: Record<string, unknown> | unknown[]; keys: (string | number)[]; i: number; out: Record<string, unknown> | unknown[] | undefined }
  const frameOf = (v: Record<string, unknown> | unknown[]): Frame =>
    ({ v, keys: Array.isArray(v) ? v.map((_, k) => k) : Object.keys(v), i: 0, out: undefined });
  const copy = (root: unknown): unknown => {
    if (!root || typeof root !== "object") return root;
    if (!Array.isArray(root) && isSpan(root as Record<string, unknown>)) return moveSpan(root as unknown as Span);
    const stack: Frame[] = [frameOf(root as Record<string, unknown>)];
    let result: unknown;
    while (stack.length > 0) {
      const f = stack[stack.length - 1]!;
      if (f.i < f.keys.length) {
        const child = (f.v as Record<string | number, unknown>)[f.keys[f.i]!];
        if (child && typeof child === "object") {
          if (Array.isArray(child) || !isSpan(child as Record<string, unknown>)) { stack.push(frameOf(child as Record<string, unknown>)); continue; }
          take(f, moveSpan(child as unknown as Span));
        } else take(f, child);
        continue;
      }
      stack.pop();
      const y = Array.isArray(f.v) ? (f.out ?? f.v) : finish(f.v, f.out as Record<string, unknown> | undefined);
      if (stack.length === 0) result = y;
      else take(stack[stack.length - 1]!, y);
    }
    return result;
  };
  /**
   * The copy of a frame's current child is `y`: the frame's own copy is made at the first child that
   * changed, whole (a spread, then the changed children set): it has the node's keys in the node's
   * order, so its shape (V8's hidden class) is the node's, not one made key by key (more classes, and
   * objects with their properties out of line: the moved half of a file weighed more than its parse).
   */
  function take(f: Frame, y: unknown): void {
    const key = f.keys[f.i]!;
    if (y !== (f.v as Record<string | number, unknown>)[key]) {
      f.out ??= Array.isArray(f.v) ? f.v.slice() : { ...f.v };
      (f.out as Record<string | number, unknown>)[key] = y;
    }
    f.i++;
  }
  const out = decls.map((d) => copy(d) as Decl);
  return ok ? out : undefined;
}

interface Aligned {
  a: ReturnType<typeof lexTcod>;
  b: ReturnType<typeof lexTcod>;
  /** Indices of the tokens whose images differ: number literals only. */
  numbers: number[];
}

/**
 * Whether an edit of a region changed only whitespace, comments and the digits of numbers (not doc
 * comments, nor what lies between a doc comment and its declaration): the region lexes, before and
 * after, to tokens of the same types with the same images but for number literals, and the same doc
 * comments, without a lexer error. Then the parser sees what it saw but for those numbers' values.
 * `p`: where the edit starts in the region.
 */
function sameTokens(oldRegion: string, newRegion: string, p: number, memo: ReparseMemo): Aligned | undefined {
  const a = memo.lexed(oldRegion);
  const b = memo.lexed(newRegion);
  if (a.diagnostics.length || b.diagnostics.length || a.unterminatedCommentAt !== undefined || b.unterminatedCommentAt !== undefined) return undefined;
  if (a.tokens.length !== b.tokens.length || a.docs.length !== b.docs.length) return undefined;
  const numbers: number[] = [];
  for (let k = 0; k < a.tokens.length; k++) {
    if (a.tokens[k]!.tokenType !== b.tokens[k]!.tokenType) return undefined;
    if (a.tokens[k]!.image === b.tokens[k]!.image) continue;
    if (a.tokens[k]!.tokenType.name !== "NumberLiteral") return undefined;
    numbers.push(k);
  }
  for (let k = 0; k < a.docs.length; k++) if (a.docs[k]!.image !== b.docs[k]!.image) return undefined;
  // A doc comment belongs to the declaration below it when only whitespace lies between: an edit in
  // that gap (a comment typed there) may detach it.
  const end = (t: { startOffset: number; image: string }) => t.startOffset + t.image.length;
  let lastToken = -1;
  let lastDoc = -1;
  for (const t of a.tokens) if (end(t) <= p) lastToken = Math.max(lastToken, end(t));
  for (const t of a.docs) if (end(t) <= p) lastDoc = Math.max(lastDoc, end(t));
  if (lastDoc > lastToken) return undefined;
  return { a, b, numbers };
}

function lineAt(text: string, offset: number): number {
  let n = 1;
  for (let k = text.indexOf("\n"); k !== -1 && k < offset; k = text.indexOf("\n", k + 1)) n++;
  return n;
}
function lineStart(text: string, offset: number): number {
  return text.lastIndexOf("\n", offset - 1) + 1;
}

/**
 * A string of the same characters that does not keep a larger one alive. V8 makes a substring of 13
 * or more characters a slice of the string it was taken from, holding all of it; concatenated, then
 * sliced, it is copied.
 */
function detached(s: string): string {
  return s.length < 13 ? s : (" " + s).slice(1);
}

/** Replaces, in place, every string in freshly parsed nodes by a `detached` one (an explicit stack: trees may be deep). */
function detachStrings(root: unknown): void {
  const todo: unknown[] = [root];
  while (todo.length > 0) {
    const v = todo.pop();
    if (!v || typeof v !== "object") continue;
    if (Array.isArray(v)) {
      for (let k = 0; k < v.length; k++) {
        const x: unknown = v[k];
        if (typeof x === "string") v[k] = detached(x);
        else if (x && typeof x === "object") todo.push(x);
      }
      continue;
    }
    const o = v as Record<string, unknown>;
    for (const k in o) {
      const x = o[k];
      if (typeof x === "string") { if (x.length >= 13) o[k] = detached(x); }
      else if (x && typeof x === "object") todo.push(x);
    }
  }
}

/** A copy of an AST node with every span replaced by `f(span)`. */
function shifted(v: unknown, f: (s: Span) => Span): unknown {
  if (Array.isArray(v)) return v.map((x) => shifted(x, f));
  if (!v || typeof v !== "object") return v;
  const o = v as Record<string, unknown>;
  if (typeof o["file"] === "string" && "start" in o && "end" in o) return f(o as unknown as Span);
  // A spread first, then each property set: the copy has the node's shape (see `take` in `patched`).
  const out: Record<string, unknown> = { ...o };
  for (const k in o) out[k] = shifted(o[k], f);
  return out;
}
