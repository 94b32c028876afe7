/**
 * Offsets → spans. One line table per file, so the lexer's, the parser's and the AST's positions
 * agree by construction. Lines end at `\r\n`, `\n` or `\r`; columns count UTF-16 code units from 1
 * (as editors and the LSP do).
 */
import type { Position, Span } from "./ast.js";

export class LineMap {
  /** Offset of the first character of each line. */
  private readonly lineStarts: number[] = [0];

  constructor(readonly file: string, readonly text: string) {
    // Most files have no `\r`: then `indexOf` finds the line ends (several times faster than a loop
    // over every character, for a file of megabytes).
    if (!text.includes("\r")) {
      for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) this.lineStarts.push(i + 1);
      return;
    }
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      if (c === 13 /* \r */) {
        if (text.charCodeAt(i + 1) === 10) i++;
        this.lineStarts.push(i + 1);
      } else if (c === 10 /* \n */) {
        this.lineStarts.push(i + 1);
      }
    }
  }

  /**
   * Positions made recently, by offset modulo the size: a node's span mostly starts or ends where
   * one of its children's does, so its positions are the children's objects (positions are never
   * mutated), not new ones.
   */
  private readonly recent: (Position | undefined)[] = new Array<Position | undefined>(1024).fill(undefined);
  /** The line of the last position made: the next one is mostly on it. */
  private lastLine = 0;

  /** The position of `offset`, clamped into [0, text.length]. */
  position(offset: number): Position {
    const at = Math.max(0, Math.min(Number.isFinite(offset) ? offset : this.text.length, this.text.length));
    const slot = at & 1023;
    const hit = this.recent[slot];
    if (hit !== undefined && hit.offset === at) return hit;
    const starts = this.lineStarts;
    let lo = this.lastLine;
    if (!(starts[lo]! <= at && (lo + 1 >= starts.length || at < starts[lo + 1]!))) {
      lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid]! <= at) lo = mid;
        else hi = mid - 1;
      }
      this.lastLine = lo;
    }
    const position = { offset: at, line: lo + 1, column: at - starts[lo]! + 1 };
    this.recent[slot] = position;
    return position;
  }

  /** The span [start, end) (end exclusive; `end < start` is raised to `start`). */
  span(start: number, end: number): Span {
    const s = this.position(start);
    const e = this.position(Math.max(end, s.offset));
    return { file: this.file, start: s, end: e };
  }
}
