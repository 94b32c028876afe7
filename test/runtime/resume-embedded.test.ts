/**
 * Kill-and-resume equality on the real pieces: texthouse + the embedded backend. A run stopped at
 * step k and resumed ends with the same metrics (wall times aside) and byte-identical student
 * weights and optimiser state as an uninterrupted run with the same seed.
 */
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runPlan } from "../../runtime/engine.js";
import { readMetrics } from "../../runtime/metrics.js";
import { parsePlan } from "../../plan/schema.js";
import { composeRuntime } from "../../bin/compose.js";

composeRuntime(); // the backends and envs bin/ registers for `tcod run`

const plan = parsePlan(JSON.parse(readFileSync(join(import.meta.dirname, "../fixtures/plans/texthouse-f2b-small.json"), "utf8")));
const tmp = () => mkdtempSync(join(tmpdir(), "tcod-resume-"));
const metrics = (dir: string) => readMetrics(join(dir, "metrics.jsonl")).map(({ time: _t, ...rest }) => rest);
const studentFiles = (dir: string) => {
  const d = join(dir, "checkpoint", "student");
  return Object.fromEntries(readdirSync(d).sort().map((f) => [f, readFileSync(join(d, f)).toString("base64")]));
};

describe("resume on texthouse + embedded", () => {
  it("stop at step k, resume: identical metrics and weights (staleness 1, eval, checkpoints every 2)", async () => {
    const full = tmp();
    expect((await runPlan(plan, { runDir: full })).status).toBe("completed");
    for (const k of [1, 4]) {
      const dir = tmp();
      expect((await runPlan(plan, { runDir: dir, stopAfter: k })).status).toBe("stopped");
      expect((await runPlan(plan, { runDir: dir, resume: true })).status).toBe("completed");
      expect(metrics(dir)).toEqual(metrics(full));
      expect(studentFiles(dir)).toEqual(studentFiles(full));
      expect(readFileSync(join(dir, "episodes.jsonl"), "utf8")).toEqual(readFileSync(join(full, "episodes.jsonl"), "utf8"));
    }
    const rows = metrics(full).filter((r) => r.kind === "train");
    expect(rows.map((r) => r.kind === "train" && r.horizon)).toEqual([1, 2, 2, 3, 3, 4]);
  });

  it("a different seed gives a different run", async () => {
    const a = tmp(), b = tmp();
    await runPlan(plan, { runDir: a });
    await runPlan(plan, { runDir: b, seed: 99 });
    expect(metrics(a)).not.toEqual(metrics(b));
  });
});

describe("checkpoint write is atomic", () => {
  it("a crash between the renames (only checkpoint.old-* left) still resumes", async () => {
    const { renameSync, readdirSync: ls } = await import("node:fs");
    const full = tmp();
    await runPlan(plan, { runDir: full });
    const dir = tmp();
    await runPlan(plan, { runDir: dir, stopAfter: 3 });
    renameSync(join(dir, "checkpoint"), join(dir, "checkpoint.old-12345"));
    expect(ls(dir)).not.toContain("checkpoint");
    expect((await runPlan(plan, { runDir: dir, resume: true })).status).toBe("completed");
    expect(metrics(dir)).toEqual(metrics(full));
  });
});
