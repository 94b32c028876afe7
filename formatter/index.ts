/**
 * `tcod fmt`: one canonical layout for .tcod files (print.ts says which). Idempotent; comments, doc
 * comments and blank-line groups are kept; the output parses to the same AST as the input (spans
 * aside), which `format` checks before returning. A file with syntax errors is not formatted: its
 * parse errors are returned instead.
 *
 * ```ts
 * const r = format(text, "examples/f2b.tcod");
 * if (r.ok) write(r.text); else report(r.errors);
 * ```
 */
import type { Decl, SourceFile } from "../grammar/ast.js";
import { parse, type SyntaxErrorInfo } from "../grammar/index.js";
import { lexTcod } from "../grammar/lexer.js";
import type { BadBytes } from "../grammar/source-chars.js";
import { layout } from "./doc.js";
import { Printer, withoutComments } from "./print.js";

export type FormatResult =
  | { ok: true; text: string; changed: boolean }
  | { ok: false; errors: SyntaxErrorInfo[]; /** Nests deeper than the printer's stack allows (no syntax error). */ tooDeep?: boolean };

/** Thrown when the printed text would not mean what the input means: a formatter bug, never shipped silently. */
export class FormatterBug extends Error {}

export const WIDTH = 100;

/**
 * `badBytes`: as grammar/index.ts `parse` takes them, for a file read from disk (`readSourceFile`):
 * a U+FFFD the file holds is then a character, kept; an editor's buffer has none.
 */
export function format(text: string, file: string, badBytes?: readonly BadBytes[]): FormatResult {
  const { ast, errors } = parse(text, file, badBytes);
  if (errors.length > 0) return { ok: false, errors };
  let out: string;
  try {
    out = formatAst(ast);
  } catch (e) {
    // The printer recurses over the tree; a file nested past the stack is refused, as the compiler
    // refuses it (TC2020–TC2022), never a crash.
    if (e instanceof RangeError && /call stack/i.test(e.message)) return { ok: false, errors: [], tooDeep: true };
    throw e;
  }
  // The output is written as UTF-8: every U+FFFD in it (kept from the input) is the character.
  const again = parse(out, file, badBytes ? [] : undefined);
  if (again.errors.length > 0 || !sameDecls(ast.decls, again.ast.decls)) {
    throw new FormatterBug(`formatting ${file} would change its meaning; the file was left as it is`);
  }
  return { ok: true, text: out, changed: out !== text };
}

/** The canonical text of a parsed, error-free file. */
export function formatAst(ast: SourceFile): string {
  const lexed = lexTcod(ast.text);
  const comments = [...lexed.comments, ...lexed.docs].sort((a, b) => a.startOffset - b.startOffset);
  return layout(new Printer(ast, comments).file_(), WIDTH);
}

/**
 * The declarations with what layout may change removed: spans, and the whitespace and comments inside
 * number and type texts (`16  tasks`, `list< turns >`; the printer moves a comment
 * inside them out). Two files with equal shapes mean the same.
 */
export function astShape(decls: Decl[]): unknown {
  return JSON.parse(JSON.stringify(decls, (k, v: unknown) => {
    if (k === "span" || k.endsWith("Span")) return undefined;
    if ((k === "text" || k === "name") && typeof v === "string") return withoutComments(v).replace(/\s+/g, "");
    return v;
  }));
}

export function sameDecls(a: Decl[], b: Decl[]): boolean {
  return JSON.stringify(astShape(a)) === JSON.stringify(astShape(b));
}
