/**
 * The doc comment of a declaration: the `///` lines, or the one `/** … *\/` block, directly above it
 * (only whitespace between). Both parsers read it here: build.ts over Chevrotain's comment tokens,
 * fast.ts over its offset arrays.
 */

/** The doc comments of a file, in source order, by index. */
export interface DocComments {
  readonly count: number;
  start(i: number): number;
  end(i: number): number;
  /** A `/** … *\/` block (else one `///` line). */
  block(i: number): boolean;
}

/** The doc text directly above `offset` (trimmed; undefined when there is none or it is empty). */
export function docBefore(text: string, docs: DocComments, offset: number): string | undefined {
  // The last doc comment ending at or before `offset`: a binary search, so a file of n documented
  // declarations costs O(n log n), not O(n²).
  let lo = 0;
  let hi = docs.count;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (docs.end(mid) <= offset) lo = mid + 1;
    else hi = mid;
  }
  let i = lo - 1;
  if (i < 0 || !onlySpace(text, docs.end(i), offset)) return undefined;
  if (docs.block(i)) {
    const body = text.slice(docs.start(i) + 3, docs.end(i) - 2).split(/\r\n|\r|\n/).map((l) => l.replace(/^\s*\*? ?/, ""));
    return nonEmpty(body.join("\n").trim());
  }
  const lines: string[] = [];
  let at = offset;
  for (; i >= 0 && !docs.block(i); i--) {
    if (!onlySpace(text, docs.end(i), at)) break;
    lines.unshift(text.slice(docs.start(i) + 3, docs.end(i)).replace(/^ /, ""));
    at = docs.start(i);
  }
  return nonEmpty(lines.join("\n").trim());
}

/** `text[from, to)` is whitespace only (as `/^\s*$/` says, without slicing the text). */
function onlySpace(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    if (c === 32 || (c >= 9 && c <= 13)) continue;
    if (c < 128 || !/\s/.test(text[i]!)) return false;
  }
  return true;
}

function nonEmpty(s: string): string | undefined {
  return s.length > 0 ? s : undefined;
}
