/**
 * Prints what the user must fix, the one way the CLI prints it: compiler diagnostics rendered for
 * people (or JSON lines for tools), and every thrown `UserError` (plan/errors.ts) with its code,
 * position where known and hint. Both mean exit 1.
 */
import { CompileError, render, toJsonLine, type CompileResult } from "../compiler/index.js";
import { formatUserError, type UserError } from "../plan/errors.js";
import { jsonError, jsonMode, result } from "./json-output.js";

/** `writeErr`: how text reaches stderr (`tcod check` writes to its descriptor directly). */
export function printDiagnostics(
  r: Pick<CompileResult, "diagnostics" | "sources">,
  json0: boolean,
  writeErr: (text: string) => void = (text) => void process.stderr.write(text),
): void {
  const json = json0 || jsonMode();
  if (json) {
    const errors = r.diagnostics.filter((x) => x.severity === "error").length;
    result({ errors, warnings: r.diagnostics.length - errors });
  }
  for (const dg of r.diagnostics) {
    if (json) process.stdout.write(toJsonLine(dg) + "\n");
    else writeErr(render(dg, (f) => r.sources.get(f)) + "\n\n");
  }
  if (!json && r.diagnostics.length) {
    const errors = r.diagnostics.filter((x) => x.severity === "error").length;
    const warnings = r.diagnostics.length - errors;
    writeErr(`${errors} error(s)${warnings ? `, ${warnings} warning(s)` : ""}\n`);
  }
}

/** Prints a user error on stderr; a compile error prints its diagnostics. */
export function reportUserError(e: UserError, command: string): void {
  if (e instanceof CompileError) {
    if (!e.printed) printDiagnostics(e.result, false);
    return;
  }
  if (jsonError(e)) return;
  process.stderr.write(formatUserError(e, command) + "\n");
}

/** Collects repeated `--set k=v` options. */
export const collect = (v: string, acc: string[]): string[] => [...acc, v];
