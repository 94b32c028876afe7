/** Assertions over a `tcod` command's result, shared by the CLI's hostile-input tests. */
import type { SpawnSyncReturns } from "node:child_process";
import { expect } from "vitest";

/** What a coded error says besides its code; each part given is checked on the error's own lines. */
export interface ErrorParts {
  /**
   * Where it is: all that stands before ` error CODE: ` on its line — a file, `FILE:LINE[:COL]`, or
   * `tcod CMD` for an error of the command line itself (a string is compared whole).
   */
  at?: string | RegExp;
  /** The message after `error CODE: ` (a string: contained in it). */
  message?: string | RegExp;
  /** The text of the `hint:` line that follows the error line (a string: contained in it). */
  hint?: string | RegExp;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Exit 1, a line `[AT] error CODE: MESSAGE` followed by a `hint:` line, no stack trace, no "internal
 * error": a coded user error, not a crash. With `parts`, that line's position, message and hint too.
 */
export function expectUserError(r: SpawnSyncReturns<string>, code: string, parts: ErrorParts = {}): void {
  expect(r.status, r.stderr).toBe(1);
  expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  expect(r.stderr).not.toContain("internal error");
  const lines = r.stderr.split("\n");
  const line = new RegExp(`^(?:(.*) )?error ${escape(code)}: (.*)$`);
  const i = lines.findIndex((l) => line.test(l));
  expect(i, `no 'error ${code}: ' line in:\n${r.stderr}`).toBeGreaterThanOrEqual(0);
  const [, at = "", message = ""] = line.exec(lines[i]!)!;
  // The hint follows the error line, after the source excerpt a diagnostic shows (lines starting "  N |" or "    |").
  let j = i + 1;
  while (j < lines.length && /^\s+\d*\s*\|/.test(lines[j]!)) j++;
  const hint = /^\s+hint: (.*)$/.exec(lines[j] ?? "")?.[1];
  expect(hint, `no hint under 'error ${code}: ' in:\n${r.stderr}`).toBeDefined();
  if (parts.at !== undefined) {
    if (typeof parts.at === "string") expect(at, r.stderr).toBe(parts.at);
    else expect(at, r.stderr).toMatch(parts.at);
  }
  if (parts.message !== undefined) {
    if (typeof parts.message === "string") expect(message, r.stderr).toContain(parts.message);
    else expect(message, r.stderr).toMatch(parts.message);
  }
  if (parts.hint !== undefined) {
    if (typeof parts.hint === "string") expect(hint, r.stderr).toContain(parts.hint);
    else expect(hint, r.stderr).toMatch(parts.hint);
  }
}
