/**
 * Collects diagnostics of one compilation; the same message at the same place is reported once
 * (a function inlined at several calls would otherwise repeat its errors).
 */
import type { Span } from "../grammar/ast.js";
import { diag, type Diagnostic, type Message, type Related } from "./diagnostics/index.js";

export class DiagnosticSink {
  readonly items: Diagnostic[] = [];
  private readonly seen = new Set<string>();
  /** Every `add`, repeats included (whether a part of a compilation reported anything). */
  attempts = 0;

  add(m: Message, span: Span, related: Related[] = []): void {
    this.attempts++;
    const key = `${m.code}|${span.file}|${span.start.offset}|${span.end.offset}|${m.message}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.items.push(diag(m, span, related));
  }

  get errorCount(): number { return this.items.filter((x) => x.severity === "error").length; }

  /** Stable order: by file, then position, then code. */
  sorted(): Diagnostic[] {
    return [...this.items].sort((a, b) =>
      byCodeUnits(a.span.file, b.span.file) || a.span.start.offset - b.span.start.offset || byCodeUnits(a.code, b.code));
  }
}

/**
 * Orders strings by UTF-16 code units: the same order on every machine (localeCompare follows the
 * ICU build, and its first call loads a collator, a sizeable part of a `tcod check`'s start-up).
 */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
