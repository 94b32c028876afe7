/**
 * Diagnostics: typed accessors over the catalogue, and the one renderer used everywhere.
 */
import type { Span } from "../../grammar/ast.js";
import { catalogue, details, hints, type CatalogueEntry, type Code } from "./catalogue.js";

type Placeholders<S extends string> = S extends `${string}{${infer P}}${infer R}` ? P | Placeholders<R> : never;
type Entry<C extends Code> = (typeof catalogue)[C];
type ParamsOf<C extends Code> = Placeholders<Entry<C>["message"]> | Placeholders<Entry<C> extends { hint: infer H extends string } ? H : "">;
type Args<C extends Code> = [ParamsOf<C>] extends [never] ? [] : [Record<ParamsOf<C>, string | number>];

export interface Message { code: Code; severity: "error" | "warning"; message: string; hint?: string }
export interface Related { span: Span; message: string }
export interface Diagnostic extends Message { span: Span; related: Related[] }

type NameOf<C extends Code> = Entry<C>["name"];
type Accessors = { [C in Code as NameOf<C>]: (...args: Args<C>) => Message };

/** `template` with each placeholder that `args` has replaced by its value, the others kept. */
function fill(template: string, args: Record<string, string | number>): string {
  let out = "";
  let last = 0;
  for (const p of placeholders(template)) {
    if (!(p.name in args)) continue;
    out += template.slice(last, p.start) + String(args[p.name]);
    last = p.end;
  }
  return last === 0 ? template : out + template.slice(last);
}

/**
 * The `{name}` placeholders of a template (a name of ASCII letters, digits and `_`), in order: what
 * `/\{(\w+)\}/g` matches (`start` at the `{`, `end` after the `}`), found by a scan. V8 compiles a
 * regular expression again at every start, and a clean check still fills a few messages (those of
 * evaluations tried quietly) and reads a few templates (agent formats).
 */
export function placeholders(text: string): { name: string; start: number; end: number }[] {
  const out: { name: string; start: number; end: number }[] = [];
  for (let i = text.indexOf("{"); i >= 0; i = text.indexOf("{", i + 1)) {
    let j = i + 1;
    while (j < text.length && isWordChar(text.charCodeAt(j))) j++;
    if (j > i + 1 && text.charCodeAt(j) === 125) {
      out.push({ name: text.slice(i + 1, j), start: i, end: j + 1 });
      i = j;
    }
  }
  return out;
}

const isWordChar = (c: number): boolean => (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95;

/** `d.unitMismatch({ expected, actual, suggestion })` → a Message with code TC2001. */
export const d: Accessors = Object.fromEntries(
  (Object.keys(catalogue) as Code[]).map((code) => {
    const e = catalogue[code] as { name: string; severity: "error" | "warning"; message: string; hint?: string };
    const make = (args: Record<string, string | number> = {}): Message => {
      const hint = e.hint === undefined ? undefined : fill(e.hint, args);
      return { code, severity: e.severity, message: fill(e.message, args), ...(hint ? { hint } : {}) };
    };
    return [e.name, make];
  }),
) as unknown as Accessors;

/** A template's parameters: its `{name}` placeholders (braces around spaced text, e.g. `import { gkd }`, are text). */
type TemplateParams<S extends string> = Exclude<Placeholders<S>, `${string} ${string}`>;
type TemplateArgs<S extends string> = [TemplateParams<S>] extends [never] ? [] : [Record<TemplateParams<S>, string | number>];
type Fillers<T extends Record<string, string>> = { [N in keyof T]: (...args: TemplateArgs<T[N]>) => string };

/** One typed filler per template of a catalogue table (`hints`, `details`). */
function fillers<T extends Record<string, string>>(table: T): Fillers<T> {
  return Object.fromEntries(Object.keys(table).map((n) => [n, (args: Record<string, string | number> = {}) => fill(table[n]!, args)])) as unknown as Fillers<T>;
}

/** `h.chooseValue({ range: "in [0, 1]" })` → the hint text of the catalogue's `hints` table, filled. */
export const h = fillers(hints);

/** The hint of a value out of `range`: "Choose a value in [0, 1].", but "Choose an integer ≥ 1." */
export function chooseHint(range: string): string {
  return /^an? /.test(range) ? h.chooseKind({ range }) : h.chooseValue({ range });
}

/** `dt.notOneOf({ value, options, suggestion })` → the detail text of the catalogue's `details` table (TC2018), filled. */
export const dt = fillers(details);

export function diag(m: Message, span: Span, related: Related[] = []): Diagnostic {
  return { ...m, span, related };
}

// The did-you-mean rule lives in plan/ so that targets/ (which stands on plan/) shares it.
export { closestName, didYouMean, editDistance } from "../../plan/did-you-mean.js";

/** Renders a diagnostic as the CLI prints it (the format shown in docs/diagnostics.md). `sources` maps file → text. */
export function render(dg: Diagnostic, sources: (file: string) => string | undefined, cwd = process.cwd()): string {
  const rel = (f: string) => (f.startsWith(cwd + "/") ? f.slice(cwd.length + 1) : f);
  const out: string[] = [];
  const { file, start } = dg.span;
  out.push(`${rel(file)}:${start.line}:${start.column} ${dg.severity} ${dg.code}: ${dg.message}`);
  // No excerpt where the catalogue says the text is not readable (TC1009: a UTF-16 file read as UTF-8).
  const shown = (catalogue[dg.code] as CatalogueEntry).noExcerpt ? () => undefined : sources;
  out.push(...excerpt(dg.span, shown(file)));
  for (const r of dg.related) {
    out.push(`  ${rel(r.span.file)}:${r.span.start.line}:${r.span.start.column}: ${r.message}`);
    out.push(...excerpt(r.span, shown(r.span.file)));
  }
  if (dg.hint) out.push(`  hint: ${dg.hint}`);
  return out.join("\n");
}

/** Excerpt lines longer than this show a window around the caret (a minified or generated file). */
const EXCERPT_WIDTH = 200;

function excerpt(span: Span, text: string | undefined): string[] {
  if (text === undefined) return [];
  // The line from the span's own offset (columns count UTF-16 units from the line's start, spans.ts):
  // no split of the whole file per diagnostic, which made many errors in a large file quadratic.
  const lineStart = span.start.offset - (span.start.column - 1);
  if (lineStart < 0 || lineStart > text.length) return [];
  let lineEnd = lineStart;
  while (lineEnd < text.length && text.charCodeAt(lineEnd) !== 10 && text.charCodeAt(lineEnd) !== 13) lineEnd++;
  // Controls, bidi and other format characters show as U+FFFD, one per UTF-16 unit so the caret
  // stays under its column: raw, a NUL shows as nothing and U+202E reverses the rest of the line.
  let line = text.slice(lineStart, lineEnd).replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, (c) => (c === "\t" ? c : "\uFFFD".repeat(c.length)));
  const num = String(span.start.line);
  const pad = " ".repeat(num.length);
  const endCol = span.end.line === span.start.line ? span.end.column : line.length + 1;
  let col = span.start.column;
  let width = Math.max(1, endCol - span.start.column);
  if (line.length > EXCERPT_WIDTH) {
    // A window of EXCERPT_WIDTH around the caret, "…" where the line goes on.
    const from = Math.max(0, Math.min(col - 1 - 40, line.length - EXCERPT_WIDTH));
    const to = from + EXCERPT_WIDTH;
    const before = from > 0 ? "…" : "";
    line = before + line.slice(from, to) + (to < line.length ? "…" : "");
    col = col - from + before.length;
    width = Math.max(1, Math.min(width, EXCERPT_WIDTH - (col - 1 - before.length)));
  }
  return [`  ${num} | ${line}`, `  ${pad} | ${" ".repeat(col - 1)}${"^".repeat(width)}`];
}

/** One JSON object per line for tools and editors. */
export function toJsonLine(dg: Diagnostic): string {
  return JSON.stringify({
    code: dg.code, severity: dg.severity, message: dg.message, hint: dg.hint ?? null,
    file: dg.span.file, line: dg.span.start.line, column: dg.span.start.column,
    endLine: dg.span.end.line, endColumn: dg.span.end.column,
    related: dg.related.map((r) => ({ file: r.span.file, line: r.span.start.line, column: r.span.start.column, message: r.message })),
  });
}
