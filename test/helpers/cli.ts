/** Assertions over a `tcod` command's result, shared by the CLI's hostile-input tests. */
import type { SpawnSyncReturns } from "node:child_process";
import { expect } from "vitest";

/** Exit 1, `error CODE: `, a hint, no stack trace, no "internal error": a coded user error, not a crash. */
export function expectUserError(r: SpawnSyncReturns<string>, code: string): void {
  expect(r.status, r.stderr).toBe(1);
  expect(r.stderr).toContain(`error ${code}: `);
  expect(r.stderr).toContain("hint:");
  expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  expect(r.stderr).not.toContain("internal error");
}
