/**
 * The sweep's summary reads each point's metrics.jsonl as `tcod metrics` does: a damaged row is a
 * warning under the table naming the file and line (was: the point's results left blank, unsaid, as
 * for a point that never started); a last line cut off mid-write is left out with a note. A sweep.json
 * whose points are not point records is said too (was: dropped unsaid).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { pointResults, sweepSummary, type SweepRecord } from "../../bin/sweep.js";

const ROOT = resolve(import.meta.dirname, "../..");
const tmp = () => mkdtempSync(join(tmpdir(), "tcod-sweep-summary-"));

const train = (step: number) => ({
  kind: "train", step, policyStep: step - 1, policyVersion: step, episodes: 4, successRate: 0.25, meanReward: 0.25,
  horizon: 2, prefix: 0, expertLength: 0, studentTurns: 2, turns: 2, invalidActions: 0, admissibleRate: 0.5,
  noExperience: 0, droppedFailed: 0, droppedStale: 0, kl: { mean: 0.1, perTurn: [0.1, null] }, tokens: { prompt: 10, response: 3 },
  coefs: { opd: 1 }, blendWeight: null, adaptiveCap: null, lr: 0.01, loss: 0.5, gradNorm: 1.5, updates: 1, time: { rollout: 0.5 },
});
const evalRow = (step: number) => ({ kind: "eval", name: "valid", step, successRate: 0.5, meanReward: 0.5, meanTurns: 3, episodes: 4, time: { eval: 0 } });
const lines = (...rows: object[]) => rows.map((r) => `${JSON.stringify(r)}\n`).join("");

/** A sweep folder whose points' metrics.jsonl hold these texts (undefined: a point that never started). */
function sweep(points: Record<string, string | undefined>): { dir: string; rec: SweepRecord } {
  const dir = tmp();
  const rec: SweepRecord = { file: "s.tcod", overrides: [], points: [] };
  for (const [name, text] of Object.entries(points)) {
    mkdirSync(join(dir, name));
    if (text !== undefined) writeFileSync(join(dir, name, "metrics.jsonl"), text);
    rec.points.push({ name, dir: name, settings: [], status: text === undefined ? "pending" : "completed" });
  }
  return { dir, rec };
}

describe("the sweep summary", () => {
  it("shows each point's last step and evaluation; a damaged row is a warning naming the file and line; a cut-off last line a note", () => {
    const { dir, rec } = sweep({
      good: lines(evalRow(0), train(1), train(2), evalRow(2)),
      damaged: lines(evalRow(0), train(1)) + "garbage\n" + lines(train(3)),
      shape: lines(train(1), { ...train(2), successRate: "high" }),
      cut: lines(train(1), train(2)) + '{"kind":"train","st',
      never: undefined,
    });
    const text = sweepSummary(rec, dir);
    expect(text).toMatch(/^ {2}good\s+completed\s+step 2, train success 0\.250, valid 0\.500$/m);
    expect(text).toMatch(/^ {2}damaged\s+completed\s+results unreadable$/m);
    expect(text).toMatch(/^ {2}cut\s+completed\s+step 2, train success 0\.250$/m);
    expect(text).toMatch(/^ {2}never\s+pending\s*$/m);
    const damaged = join(dir, "damaged", "metrics.jsonl");
    expect(text).toContain(`  damaged: warning: ${damaged}:3:1: line 3 is not a metrics row (truncated or overwritten): not JSON (`);
    expect(text).toContain(`its results are not shown (\`tcod metrics ${join(dir, "damaged")}\` says more)`);
    expect(text).toContain(`  shape: warning: ${join(dir, "shape", "metrics.jsonl")}:2: line 2 is a train row without a numeric \`successRate\``);
    expect(text).toContain(`  cut: note: ${join(dir, "cut", "metrics.jsonl")}:3: the last line is not a whole row (the point was killed while writing it); it is left out`);
    expect(text).not.toMatch(/never:/);
    // Counted as such: one line under the table per point whose results could not all be read.
    expect(text.split("\n").filter((l) => /^ {2}\w+: (warning|note):/.test(l))).toHaveLength(3);
  });

  it("pointResults: a folder in the place of metrics.jsonl is said, not taken for no results", () => {
    const dir = tmp();
    mkdirSync(join(dir, "metrics.jsonl"));
    const r = pointResults(dir);
    expect(r.last).toBe("results unreadable");
    expect(r.said).toMatch(/^warning: .*metrics\.jsonl: cannot read .*metrics\.jsonl \(it is a folder, not a file\)/);
  });
});

describe("an earlier sweep.json the sweep cannot use", () => {
  const SOURCE = `import { f2b } from "std/tcod"
import { texthouse } from "std/envs"
model m { path: "x" }
curriculum small {
  teacher: m
  student: m
  env:     texthouse()
  steps:   1
  batch:   2 tasks × 1 rollout
  horizon: f2b(every: 1 step, max: 6 turns)
}
`;
  const run = (dir: string) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", "s.tcod", "--sweep", "--out", "sw", "-q"], { cwd: dir, encoding: "utf8", timeout: 120_000 });

  it("entries that are not points, or no points list, are a warning naming the file (was: dropped unsaid)", () => {
    const dir = tmp();
    writeFileSync(join(dir, "package.json"), "{}");
    writeFileSync(join(dir, "s.tcod"), SOURCE);
    mkdirSync(join(dir, "sw"));
    const record = join(dir, "sw", "sweep.json");
    writeFileSync(record, JSON.stringify({ file: "s.tcod", overrides: [], points: [{ name: "small", dir: "small", status: "completed" }, { name: 3 }, null] }));
    const r = run(dir);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`tcod run: warning: sw/sweep.json: \`points[1]\` (and 1 more: 2 in all) is not a point with a string \`name\` and \`dir\`, not a record the sweep wrote; each point's run folder says where it stands, and the record is written anew`);
    writeFileSync(record, JSON.stringify({ points: "all" }));
    const again = run(dir);
    expect(again.status, again.stderr).toBe(0);
    expect(again.stderr).toContain("tcod run: warning: sw/sweep.json: it has no `points` list, not a record the sweep wrote");
    expect((JSON.parse(readFileSync(record, "utf8")) as SweepRecord).points.map((p) => p.status)).toEqual(["completed"]);
  }, 120_000);
});
