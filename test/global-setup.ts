/**
 * Builds the CLI bundle once before the tests, so CLI tests never run a stale dist/, and gives the
 * whole run one temporary directory (TMPDIR, inherited by every test worker and every process the
 * tests start: the CLI, the Python worker, JVMs), removed when the run ends. Tests make hundreds of
 * temporary run directories and most do not remove their own: a full run left ~1.3 GB behind.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export default function setup(): () => void {
  execFileSync(process.execPath, [join(import.meta.dirname, "..", "scripts", "build.mjs")], { cwd: join(import.meta.dirname, ".."), stdio: "inherit" });
  const previous = process.env.TMPDIR;
  const runTmp = mkdtempSync(join(tmpdir(), "tcod-test-"));
  process.env.TMPDIR = runTmp;
  return () => {
    if (previous === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = previous;
    rmSync(runTmp, { recursive: true, force: true, maxRetries: 3 });
  };
}
