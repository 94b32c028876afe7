/**
 * TypeScript extensions end to end: compiled, bundled beside the plan, loaded by `tcod run`, and
 * applied — a turn weight of 0 leaves the student unmoved (gradient norm 0) where the unweighted
 * run moves it; a function that throws stops the run with a coded error naming it.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const tcod = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd: ROOT, encoding: "utf8" });
const noStack = (s: string) => expect(s).not.toMatch(/\n\s+at .+:\d+:\d+/);
const trainRows = (dir: string) => readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n")
  .map((l) => JSON.parse(l) as { kind: string; gradNorm: number; loss: number }).filter((r) => r.kind === "train");

describe("TypeScript extensions run", () => {
  let plans: string;
  beforeAll(() => {
    plans = mkdtempSync(join(tmpdir(), "tcod-ext-"));
    const r = tcod("compile", "test/fixtures-ts/ext-zero.tcod", "--out", plans);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  }, 60_000);

  it("the repository's fixture runs for a few steps", () => {
    const out = mkdtempSync(join(tmpdir(), "tcod-ext-run-"));
    const r = tcod("run", "test/fixtures-ts/ext.tcod", "--set", "steps=2", "--set", "batch=2 tasks × 1 rollout", "--out", join(out, "run"), "-q");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    expect(trainRows(join(out, "run"))).toHaveLength(2);
  }, 60_000);

  it("a turn weight from TypeScript reaches the update: weight 0 → no gradient; no weight → a gradient", () => {
    const out = mkdtempSync(join(tmpdir(), "tcod-ext-run-"));
    for (const name of ["zero", "plain"]) {
      const r = tcod("run", join(plans, `${name}.plan.json`), "--out", join(out, name), "-q");
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
    }
    const zero = trainRows(join(out, "zero"));
    const plain = trainRows(join(out, "plain"));
    expect(zero.map((r) => r.gradNorm)).toEqual([0, 0]);
    for (const r of plain) expect(r.gradNorm).toBeGreaterThan(0);
  }, 60_000);

  it("a function that throws stops the run with a coded error naming it, not a stack trace", () => {
    const out = mkdtempSync(join(tmpdir(), "tcod-ext-run-"));
    const r = tcod("run", join(plans, "throws.plan.json"), "--out", join(out, "run"), "-q");
    expect(r.status).toBe(1);
    noStack(r.stderr);
    expect(r.stderr).toContain("TC7005");
    expect(r.stderr).toContain("weights.ts#throwing");
    expect(r.stderr).toContain("no weight past the first turn");
  }, 60_000);

  it("a missing bundle is a user error", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-ext-"));
    writeFileSync(join(dir, "p.plan.json"), readFileSync(join(plans, "zero.plan.json")));
    const r = tcod("run", join(dir, "p.plan.json"), "--out", join(dir, "run"), "-q");
    expect(r.status).toBe(1);
    noStack(r.stderr);
    expect(r.stderr).toContain("TC7010");
    expect(r.stderr).toContain("zero.plan.bundle.mjs is missing");
  }, 60_000);

  it("esbuild errors are shown whole, with file, line and column", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-ext-"));
    writeFileSync(join(dir, "w.ts"), `import { readFileSync } from "node:fs";\nexport const f = (x: number): number => x + readFileSync("/dev/null").length;\n`);
    writeFileSync(join(dir, "a.tcod"), `import { opd } from "std/loss"\nimport { texthouse } from "std/envs"\nimport { f } from "./w.ts"\nmodel m { path: "x" }\ncurriculum c { teacher: m  student: m  env: texthouse()  steps: 2  loss: opd(coef: f(1)) }\n`);
    const r = tcod("compile", join(dir, "a.tcod"), "--out", join(dir, "out"));
    expect(r.status).toBe(1);
    noStack(r.stderr);
    expect(r.stderr).toContain("TC6003");
    expect(r.stderr).toContain("Could not resolve \"node:fs\"");
    expect(r.stderr).toContain("w.ts:1:29:");
    expect(r.stderr).toContain(`import { readFileSync } from "node:fs";`);
  }, 60_000);
});
