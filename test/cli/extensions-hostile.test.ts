/**
 * Hostile TypeScript extensions at run time: whatever a function throws (a string, undefined, an
 * object without a string form) or returns (NaN, a Promise, ±Infinity as a turn weight), and a module
 * that throws when imported, `tcod run` stops with a coded error naming the function and, for a
 * value, the position of the expression — never an internal error with a stack trace, and never a
 * NaN that flows on into the update.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const tcod = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd: ROOT, encoding: "utf8" });
const noStack = (s: string) => expect(s).not.toMatch(/\n\s+at .+:\d+:\d+/);

const FUNCTIONS = `interface TurnStats { index: number; kl: number; entropy: number; tokens: number; turns: number }
export function throwsString(t: TurnStats): number { if (t.index >= 0) throw "a plain string"; return 1; }
export function throwsUndefined(t: TurnStats): number { if (t.index >= 0) throw undefined; return 1; }
export function throwsBare(t: TurnStats): number { if (t.index >= 0) throw Object.create(null); return 1; }
export function nan(t: TurnStats): number { return t.index >= 1 ? Math.sqrt(-1) : 1; }
export function infinite(t: TurnStats): number { return t.index >= 1 ? 1 / 0 : 1; }
// The compiler refuses an async signature; a cast still gets a Promise past it.
export function later(t: TurnStats): number { return Promise.reject(new Error("rejected " + t.index)) as unknown as number; }
`;

const CURRICULA = (names: string[], file = "./w.ts") => [
  'import { opd } from "std/loss"',
  'import { texthouse } from "std/envs"',
  `import { ${names.join(", ")} } from "${file}"`,
  'model m { path: "x" }',
  "curriculum base { teacher: m  student: m  env: texthouse()  steps: 2  batch: 2 tasks × 1 rollout  loss: opd() }",
  ...names.map((n) => `curriculum c_${n} = base with { loss: weighted(opd(), by: ${n}) }`),
  "",
].join("\n");

describe("hostile TypeScript extensions", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), "tcod-ext-hostile-"));
    writeFileSync(join(dir, "package.json"), "{}\n");
    writeFileSync(join(dir, "w.ts"), FUNCTIONS);
    writeFileSync(join(dir, "a.tcod"), CURRICULA(["throwsString", "throwsUndefined", "throwsBare", "nan", "infinite"]));
    const r = tcod("compile", join(dir, "a.tcod"), "--out", join(dir, "plans"));
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
  }, 60_000);

  const cases: [string, string[]][] = [
    ["throwsString", ["TC7005", "w.ts#throwsString", 'threw the string "a plain string"']],
    ["throwsUndefined", ["TC7005", "w.ts#throwsUndefined", "threw a non-Error value: undefined"]],
    ["throwsBare", ["TC7005", "w.ts#throwsBare", "threw a non-Error value (object) that has no string form"]],
    ["nan", ["TC7005", "w.ts#nan", "returned NaN", "hint:"]],
    ["infinite", ["TC7005", "a.tcod:", "evaluates to Infinity for turn 1", "a turn weight must be a finite number", "hint:"]],
  ];
  for (const [name, expected] of cases) {
    it(`${name}: a coded error, exit 1, no stack, a folder --resume can take`, () => {
      const out = join(dir, `run-${name}`);
      const r = tcod("run", join(dir, "plans", `c_${name}.plan.json`), "--out", out, "-q");
      noStack(r.stderr);
      expect(r.stderr).not.toContain("internal error");
      for (const s of expected) expect(r.stderr).toContain(s);
      expect(r.status).toBe(1);
      expect(existsSync(join(out, "run.json"))).toBe(true);
    }, 60_000);
  }

  it("a function that returns a Promise: a coded error, and its rejection does not surface later", () => {
    const d = mkdtempSync(join(tmpdir(), "tcod-ext-hostile-"));
    writeFileSync(join(d, "package.json"), "{}\n");
    writeFileSync(join(d, "w.ts"), FUNCTIONS);
    writeFileSync(join(d, "a.tcod"), CURRICULA(["later"]));
    const c = tcod("compile", join(d, "a.tcod"), "--out", join(d, "plans"));
    expect(c.stderr).toBe("");
    const r = tcod("run", join(d, "plans", "c_later.plan.json"), "--out", join(d, "run"), "-q");
    noStack(r.stderr);
    expect(r.stderr).toContain("returned a Promise");
    expect(r.stderr).not.toContain("rejected 0");
    expect(r.status).toBe(1);
  }, 60_000);

  it("a module that throws undefined when imported: TC7010, no stack", () => {
    const d = mkdtempSync(join(tmpdir(), "tcod-ext-hostile-"));
    writeFileSync(join(d, "package.json"), "{}\n");
    writeFileSync(join(d, "w.ts"), `interface TurnStats { index: number; kl: number; entropy: number; tokens: number; turns: number }\nif (Date.now() > 0) throw undefined;\nexport const one = (t: TurnStats): number => 1 + 0 * t.kl;\n`);
    writeFileSync(join(d, "a.tcod"), CURRICULA(["one"]));
    const c = tcod("compile", join(d, "a.tcod"), "--out", join(d, "plans"));
    expect(c.stderr).toBe("");
    const r = tcod("run", join(d, "plans", "c_one.plan.json"), "--out", join(d, "run"), "-q");
    noStack(r.stderr);
    expect(r.stderr).not.toContain("internal error");
    expect(r.stderr).toContain("TC7010");
    expect(r.stderr).toContain("threw a non-Error value: undefined when imported");
    expect(r.status).toBe(1);
  }, 60_000);
});
