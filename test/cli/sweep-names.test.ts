/**
 * Sweep points whose names map to one file name (`"x/y"` and `"x_y"` both to `_x_y_`) each get a
 * plan file and a run folder of their own: one used to overwrite the other, and a sweep reported
 * "3/3 points completed" with one point never run.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { planFileNames } from "../../bin/plan-file-names.js";

const ROOT = resolve(import.meta.dirname, "../..");
const tcod = (args: string[], cwd: string) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd, encoding: "utf8", timeout: 120_000 });

// The seed tells the points apart: "x/y" runs with seed 1, the other two with seed 2.
const SOURCE = `import { f2b } from "std/tcod"
import { texthouse } from "std/envs"
model m { path: "x" }
let nm = "a"
curriculum c {
  teacher: m
  student: m
  env:     texthouse()
  steps:   1
  seed:    if nm == "x/y" then 1 else 2
  batch:   2 tasks × 1 rollout
  horizon: f2b(every: 1 step, max: 6 turns)
}
sweep g product { nm: ["x/y", "x_y", "x\\\\y"] }
`;

describe("planFileNames", () => {
  it("keeps a name no other plan shares; gives shared ones a hash of the exact name", () => {
    const names = ['c@nm="x/y"', 'c@nm="x_y"', 'c@nm="x\\\\y"', "c@k=2steps"];
    const files = planFileNames(names);
    expect(files[2]).toBe("c@nm=_x__y_");
    expect(files[3]).toBe("c@k=2steps");
    expect(files[0]).toMatch(/^c@nm=_x_y_-[0-9a-f]{8}$/);
    expect(files[1]).toMatch(/^c@nm=_x_y_-[0-9a-f]{8}$/);
    expect(new Set(files).size).toBe(4);
    // Stable: the hash is of the name alone, not of its place in the list.
    expect(planFileNames([names[1]!, names[0]!])).toEqual([files[1], files[0]]);
  });

  it("names that differ only in case are distinct files too (macOS, Windows)", () => {
    const files = planFileNames(["c@s=A", "c@s=a"]);
    expect(new Set(files.map((f) => f.toLowerCase())).size).toBe(2);
  });
});

describe("points whose names sanitise alike", () => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-sweep-names-"));
  writeFileSync(join(dir, "package.json"), "{}");
  writeFileSync(join(dir, "s.tcod"), SOURCE);

  it("tcod compile writes one plan file per point", () => {
    const r = tcod(["compile", "s.tcod", "-o", "o"], dir);
    expect(r.status, r.stderr).toBe(0);
    const printed = r.stdout.trim().split("\n");
    expect(new Set(printed).size).toBe(3);
    expect(readdirSync(join(dir, "o")).filter((f) => f.endsWith(".plan.json"))).toHaveLength(3);
    const seeds = printed.map((p) => (JSON.parse(readFileSync(join(dir, p), "utf8")) as { clock: { seed: number } }).clock.seed).sort();
    expect(seeds).toEqual([1, 2, 2]);
  });

  it("tcod run --sweep runs every point in a folder of its own", () => {
    const r = tcod(["run", "s.tcod", "--sweep", "--out", "sw", "-q"], dir);
    expect(r.status, r.stderr).toBe(0);
    const rec = JSON.parse(readFileSync(join(dir, "sw", "sweep.json"), "utf8")) as { points: { name: string; dir: string; status: string }[] };
    expect(new Set(rec.points.map((p) => p.dir)).size).toBe(3);
    for (const p of rec.points) {
      expect(p.status).toBe("completed");
      expect(existsSync(join(dir, "sw", p.dir, "metrics.jsonl"))).toBe(true);
      const run = JSON.parse(readFileSync(join(dir, "sw", p.dir, "run.json"), "utf8")) as { sweep: { point: string } };
      expect(run.sweep.point).toBe(p.name);
    }
  }, 120_000);
});
