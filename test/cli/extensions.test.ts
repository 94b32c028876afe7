/**
 * TypeScript extensions end to end: compiled, bundled beside the plan, loaded by `tcod run`, and
 * applied — a turn weight of 0 leaves the student unmoved (gradient norm 0) where the unweighted
 * run moves it; a function that throws stops the run with a coded error naming it.
 */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import fc from "fast-check";
import { bundleFileName, planFileNames } from "../../bin/plan-file-names.js";
import { PlanSchema } from "../../plan/schema.js";

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

describe("the bundles of plans whose names clean up to one file name (was: one NAME.plan.bundle.mjs shared by both)", () => {
  // Two sweep points, "x/y" and "x_y", whose names both clean up to c@nm=_x_y_: their plan files get a hash each.
  const SOURCE = `import { opd } from "std/loss"
import { texthouse } from "std/envs"
import { squash } from "./w.ts"
model m { path: "x" }
let nm = "a"
curriculum c {
  teacher: m
  student: m
  env:     texthouse()
  steps:   2
  batch:   2 tasks × 1 rollout
  loss:    opd()
  temperature: 0.5 + squash(step / 20 steps, 0.5)
}
sweep g product { nm: ["x/y", "x_y"] }
`;
  const project = () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-ext-names-"));
    writeFileSync(join(dir, "package.json"), "{}");
    writeFileSync(join(dir, "w.ts"), "export const squash = (x: number, scale: number): number => x / (1 + Math.abs(x) / scale);\n");
    writeFileSync(join(dir, "s.tcod"), SOURCE);
    return dir;
  };
  const inDir = (dir: string, ...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd: dir, encoding: "utf8", timeout: 120_000 });
  const bundleOf = (planFile: string) => (JSON.parse(readFileSync(planFile, "utf8")) as { extensions: { bundle: string } }).extensions.bundle;

  it("tcod compile names each bundle after its plan file; each plan runs its own extension code", () => {
    const dir = project();
    const r = inDir(dir, "compile", "s.tcod", "-o", "o", "--json");
    expect(r.status, r.stderr).toBe(0);
    const written = (JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { plans: { name: string; plan: string; bundle: string }[] }).plans;
    expect(written).toHaveLength(2);
    for (const w of written) {
      expect(w.plan).toMatch(/^o\/c@nm=_x_y_-[0-9a-f]{8}\.plan\.json$/);
      expect(w.bundle).toBe(w.plan.replace(/\.plan\.json$/, ".plan.bundle.mjs"));
      expect(bundleOf(join(dir, w.plan))).toBe(w.bundle.slice("o/".length));
    }
    expect(readdirSync(join(dir, "o")).filter((f) => f.endsWith(".plan.bundle.mjs")).sort()).toEqual(written.map((w) => w.bundle.slice(2)).sort());
    // Different extension code for each: the first plan's squash throws, the second's is the file's.
    const [a, b] = written;
    writeFileSync(join(dir, a!.bundle), 'export const functions = { "w.ts#squash": () => { throw new Error("the other plan\'s code"); } };\n');
    const ra = inDir(dir, "run", a!.plan, "--out", "ra", "-q");
    expect(ra.status).toBe(1);
    expect(ra.stderr).toContain("TC7005");
    expect(ra.stderr).toContain("the other plan's code");
    const rb = inDir(dir, "run", b!.plan, "--out", "rb", "-q");
    expect(rb.stderr).toBe("");
    expect(rb.status).toBe(0);
    expect(readdirSync(join(dir, "rb")).filter((f) => f.endsWith(".plan.bundle.mjs"))).toEqual([b!.bundle.slice(2)]);
  }, 120_000);

  it("a sweep writes each point's bundle beside its plan under the plan's file name, and each point runs", () => {
    const dir = project();
    const r = inDir(dir, "run", "s.tcod", "--sweep", "--out", "sw", "-q");
    expect(r.status, r.stderr).toBe(0);
    const plans = readdirSync(join(dir, "sw", "plans"));
    const names = plans.filter((f) => f.endsWith(".plan.json")).map((f) => f.slice(0, -".plan.json".length)).sort();
    expect(names).toHaveLength(2);
    expect(plans.filter((f) => f.endsWith(".plan.bundle.mjs")).sort()).toEqual(names.map(bundleFileName));
    for (const n of names) {
      expect(bundleOf(join(dir, "sw", "plans", `${n}.plan.json`))).toBe(bundleFileName(n));
      expect(bundleOf(join(dir, "sw", n, "plan.json"))).toBe(bundleFileName(n));
      expect(readdirSync(join(dir, "sw", n))).toContain(bundleFileName(n));
    }
  }, 120_000);

  it("every name planFileNames gives makes a bundle name the plan schema takes (runtime/extensions.ts loads it from the plan's folder)", () => {
    const bundle = PlanSchema.shape.extensions.unwrap().shape.bundle;
    fc.assert(fc.property(fc.array(fc.string({ maxLength: 40 }), { minLength: 1, maxLength: 6 }), (names) => {
      for (const f of planFileNames(names)) expect(bundle.safeParse(bundleFileName(f)).success, f).toBe(true);
    }));
    for (const f of planFileNames(['c@nm="x/y"', 'c@nm="x_y"', "..", "-a", ".b", "", "a/../b"])) expect(bundle.safeParse(bundleFileName(f)).success, f).toBe(true);
  });
});

describe("a refused resume writes nothing (was: the bundle rewritten before RUN_DIR/wandb-id, the checkpoint or the metrics were checked)", () => {
  let run: string;
  beforeAll(() => {
    run = join(mkdtempSync(join(tmpdir(), "tcod-ext-resume-")), "run");
    const r = tcod("run", "test/fixtures-ts/ext.tcod", "--set", "steps=2", "--set", "batch=2 tasks × 1 rollout", "--out", run, "-q", "--no-tensorboard");
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  }, 60_000);

  /** `dir` itself (its mtime moves with any file made or removed in it, the lock's included) and every file and folder under it: type, size, mtime. */
  const snapshot = (dir: string): string[] => [".", ...readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()].map((f) => {
    const st = statSync(join(dir, f));
    return `${f} ${st.isDirectory() ? "dir" : "file"} ${st.size} ${st.mtimeMs}`;
  });
  const editJson = (file: string, edit: (v: Record<string, unknown>) => void) => {
    const v = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
    edit(v);
    writeFileSync(file, JSON.stringify(v));
  };

  it.each<[string, (d: string) => void, string[], RegExp]>([
    ["a wandb-id that is no W&B run id", (d) => writeFileSync(join(d, "wandb-id"), "../../elsewhere\n"), ["--wandb", "p"], /error TC7011: --wandb: .*wandb-id holds "\.\.\/\.\.\/elsewhere", not a W&B run id/],
    ["another plan's checkpoint", (d) => editJson(join(d, "checkpoint", "state.json"), (s) => { s.planName = "other"; }), [], /error TC7014: cannot resume: .*belongs to plan "other"/],
    ["a damaged metrics row before the checkpoint", (d) => writeFileSync(join(d, "metrics.jsonl"), readFileSync(join(d, "metrics.jsonl"), "utf8").replace('"successRate"', '"successRatX"')), [], /error TC7014: cannot resume: .*metrics\.jsonl line \d+ is (a train|an eval) row without a numeric `successRate`/],
    ["--set", () => {}, ["--set", "steps=3"], /error TC7009: --set cannot change a run being resumed/],
    // Were refused after the lock was taken (the folder's own mtime moved), or after the engine had started.
    ["another seed", () => {}, ["--seed", "12345"], /error TC7014: cannot resume: the run in .* used seed \d+, not 12345/],
    ["a plan.json edited since", (d) => writeFileSync(join(d, "plan.json"), readFileSync(join(d, "plan.json"), "utf8").replace(/\n?$/, " \n")), [], /error TC7014: cannot resume: .*plan\.json was changed after the run wrote it/],
    ["a metrics.jsonl shorter than the checkpoint's rows", (d) => writeFileSync(join(d, "metrics.jsonl"), readFileSync(join(d, "metrics.jsonl"), "utf8").slice(0, 40)), [], /error TC7014: cannot resume: .*metrics\.jsonl has 40 bytes, the checkpoint expects at least \d+ \(truncated\)/],
    ["a folder in episodes.jsonl's place", (d) => { rmSync(join(d, "episodes.jsonl")); mkdirSync(join(d, "episodes.jsonl")); }, [], /error TC7014: cannot resume: .*episodes\.jsonl cannot be read/],
    ["the leftover of an interrupted checkpoint write, of another plan", (d) => { editJson(join(d, "checkpoint", "state.json"), (s) => { s.planName = "other"; }); renameSync(join(d, "checkpoint"), join(d, "checkpoint.old-4242")); }, [], /error TC7014: cannot resume: .*belongs to plan "other"/],
    // Were found only once the lock was taken, by the backend loading the weights (the folder's mtime moved).
    ["the student's weights cut short", (d) => { const p = join(d, "checkpoint", "student", "embedded-student.bin"); writeFileSync(p, readFileSync(p).subarray(0, 100)); }, [], /error TC7014: cannot resume: .*embedded-student\.bin has 100 bytes, the checkpoint recorded \d+ \(truncated\)/],
    ["the student's weights removed", (d) => rmSync(join(d, "checkpoint", "student", "embedded-student.bin")), [], /error TC7014: cannot resume: .*embedded-student\.bin is missing \(the checkpoint recorded \d+ bytes\)/],
    ["the student's state folder removed", (d) => rmSync(join(d, "checkpoint", "student"), { recursive: true }), [], /error TC7014: cannot resume: .*student is missing \(the checkpoint holds no student state\)/],
    ["a run holding the folder", (d) => writeFileSync(join(d, "run.lock"), JSON.stringify({ pid: process.pid, host: hostname(), started: "2020-01-01T00:00:00.000Z" }) + "\n"), [], new RegExp(`error TC7009: .* is in use by pid ${process.pid}`)],
  ])("%s: refused, every file of the folder and the folder itself as they were (names, sizes, mtimes)", (_, damage, flags, message) => {
    const dir = join(mkdtempSync(join(tmpdir(), "tcod-ext-resume-")), "run");
    cpSync(run, dir, { recursive: true });
    damage(dir);
    const before = snapshot(dir);
    expect(before.some((l) => l.startsWith("with_ext.plan.bundle.mjs "))).toBe(true);
    const r = spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", "--resume", dir, "-q", ...flags], { cwd: ROOT, encoding: "utf8", env: { ...process.env, TCOD_PYTHON: "/nonexistent/python" } });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(message);
    noStack(r.stderr);
    expect(snapshot(dir)).toEqual(before);
  }, 60_000);

  it("a new run on a folder that holds a run: refused, the folder itself as it was too (was: probed for writing and locked first)", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "tcod-ext-resume-")), "run");
    cpSync(run, dir, { recursive: true });
    const before = snapshot(dir);
    const r = tcod("run", "test/fixtures-ts/ext.tcod", "--set", "steps=2", "--set", "batch=2 tasks × 1 rollout", "--out", dir, "-q");
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain(`error TC7009: ${dir} already holds a run; continue it with --resume ${dir}`);
    expect(snapshot(dir)).toEqual(before);
  }, 60_000);
});
