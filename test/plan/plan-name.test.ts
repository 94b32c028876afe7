/**
 * A plan's name, from a plan .json or `--set name=…`: an empty one, or one holding a control character,
 * is TC7001 at `$.name` (a run of one used to go into `runs/-<timestamp>`); the names the compiler
 * writes — a curriculum's identifier, and `@` with a sweep point's settings — all pass, and so does a
 * freer hand-written one. Whatever the name, its file or folder name never starts with `-` or `.` and
 * holds no path separator.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parsePlan, PlanError } from "../../plan/schema.js";
import { planHint } from "../../plan/errors.js";
import { safeFileName } from "../../compiler/index.js";
import { planFileNames } from "../../bin/plan-file-names.js";

const ROOT = resolve(import.meta.dirname, "../..");
const FIXTURE = join(ROOT, "test/fixtures/plans/texthouse-f2b-small.json");
const PLAN = JSON.parse(JSON.stringify(parsePlan(JSON.parse(readFileSync(FIXTURE, "utf8"))))) as { name: string };

function named(name: string): PlanError | undefined {
  try { parsePlan({ ...structuredClone(PLAN), name }); return undefined; } catch (e) { if (e instanceof PlanError) return e; throw e; }
}

describe("a plan's name", () => {
  it.each([
    ["", "the plan's name is empty"],
    ["   ", "the plan's name is only spaces"],
    ["a\u0001b", 'the plan\'s name "a\\u0001b" holds a control character (U+0001 at character 2)'],
    ["x\ny", 'the plan\'s name "x\\ny" holds a control character (U+000A at character 2)'],
    ["tab\there", 'the plan\'s name "tab\\there" holds a control character (U+0009 at character 4)'],
    ["del\u007f", 'the plan\'s name "del\u007f" holds a control character (U+007F at character 4)'],
    ["c1\u0085", 'the plan\'s name "c1\u0085" holds a control character (U+0085 at character 3)'],
    ["abc\u202Eexe", 'the plan\'s name "abc\u202Eexe" holds a control character (U+202E at character 4)'],
  ])("%j: TC7001 at $.name (was: accepted, a run folder `runs/-<timestamp>` or a name that rewrites the terminal)", (name, message) => {
    const e = named(name);
    expect(e?.code).toBe("TC7001");
    expect(e?.issues).toEqual([{ path: "$.name", message, hint: planHint("name") }]);
  });

  it.each(["texthouse_f2b", "small@k=2steps", 'c@nm="x/y"', "texthouse-f2b-small", "-x", "..", "a b", "学习"])("%j: accepted (what the compiler writes, and freer hand-written names)", (name) => {
    expect(named(name)).toBeUndefined();
  });
});

describe("a plan name as a file or folder name", () => {
  it.each([
    ["", "_"], ["-x", "_x"], ["--help", "_-help"], [".", "_"], ["..", "_."], [".hidden", "_hidden"],
    ["a/b", "a_b"], ["../../etc", "_._.._etc"], ["a\\b", "a_b"], ["x\ny", "x_y"],
    // The compiler's names are unchanged.
    ["texthouse_f2b", "texthouse_f2b"], ["small@k=2steps", "small@k=2steps"], ['c@nm="x/y"', "c@nm=_x_y_"],
  ])("%j → %j", (name, file) => {
    expect(safeFileName(name)).toBe(file);
    expect(planFileNames([name])).toEqual([file]);
  });
});

describe("tcod run PLAN.json --set name=…", () => {
  const run = (cwd: string, ...set: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", FIXTURE, "-q", "--no-tensorboard", "--set", "clock.steps=1", ...set.flatMap((s) => ["--set", s])], { cwd, encoding: "utf8", timeout: 120_000 });

  it('name="" is TC7001 and makes no run folder (was: a run in runs/-<timestamp>)', () => {
    const cwd = mkdtempSync(join(tmpdir(), "tcod-name-"));
    const r = run(cwd, 'name=""');
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain(`${FIXTURE} error TC7001: the plan's name is empty (at $.name)`);
    expect(r.stderr).toContain("hint: Name the plan as the compiler does");
    expect(readdirSync(cwd)).toEqual([]);
  });

  it("a name starting with `-` or holding a slash runs in a folder that starts with neither (was: runs/-x…, a folder a shell tool reads as an option)", () => {
    const cwd = mkdtempSync(join(tmpdir(), "tcod-name-"));
    expect(run(cwd, "name=-x/../y").status).toBe(0);
    expect(run(cwd, "name=..").status).toBe(0);
    const dirs = readdirSync(join(cwd, "runs")).sort();
    expect(dirs).toHaveLength(2);
    expect(dirs[0]).toMatch(/^_\.-\d{8}-\d{6}$/);
    expect(dirs[1]).toMatch(/^_x_\.\._y-\d{8}-\d{6}$/);
  }, 120_000);
});
