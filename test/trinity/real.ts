/**
 * What the tests that run generated plugins inside real Trinity-RFT share (feedback-real.test.ts,
 * workflow-real.test.ts): the Trinity venv's Python, the skip rule, compiling the curriculum,
 * writing the exported plugin to a folder, and running a Python driver of this folder on a JSON
 * request.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";
import type { Plan } from "../../plan/schema.js";

/** $TRINITY_PYTHON, else .venv-trinity/bin/python (test/trinity/ci-install.sh), else python3. */
export const TRINITY_PY = process.env.TRINITY_PYTHON ?? (existsSync(".venv-trinity/bin/python") ? ".venv-trinity/bin/python" : "python3");

/** `it` when TRINITY_PY imports `modules` and `also()` holds, or in CI (where a missing requirement fails the test); else `it.skip`. */
export function itWithTrinity(modules: string[], also: () => boolean = () => true): typeof it | typeof it.skip {
  const has = spawnSync(TRINITY_PY, ["-c", `import ${modules.join(", ")}`], { encoding: "utf8" }).status === 0 && also();
  return has || process.env.CI ? it : it.skip;
}

/** The first plan of a .tcod file that must compile without errors. */
export function compileOne(file: string): Plan {
  const r = compileFile(file);
  expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return r.plans[0]!.plan;
}

/** Writes an exported plugin's files (relative path → text) under `out`; returns `out`. */
export function writePlugin(files: Record<string, string>, out: string): string {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(out, rel)), { recursive: true });
    writeFileSync(join(out, rel), text);
  }
  return out;
}

/** Runs test/trinity/`script` with `request` as JSON on stdin; its stdout, once it exited 0. */
export function runDriver(script: string, request: unknown): string {
  const r = spawnSync(TRINITY_PY, [join(import.meta.dirname, script)], { input: JSON.stringify(request), encoding: "utf8", maxBuffer: 1 << 26 });
  expect(r.status, r.stderr.slice(-3000)).toBe(0);
  return r.stdout;
}
