/**
 * The schedule in force at each step of a real run (metrics: horizon, prefix) equals what `tcod
 * explain` / `tcod plot` compute from the plan (plan/schedules.ts), for the texthouse f2b and b2f
 * examples compiled from source. One task per step so the b2f prefix of the step is one episode's.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";
import { planSchedules, scheduleValues } from "../../plan/schedules.js";
import { runPlan } from "../../runtime/engine.js";
import { readMetrics, type TrainRowMetrics } from "../../runtime/metrics.js";
import { composeRuntime } from "../../bin/compose.js";

composeRuntime(); // the backends and envs bin/ registers for `tcod run`

const ROOT = resolve(import.meta.dirname, "../..");

async function run(file: string, curriculum: string, steps: number) {
  const r = compileFile(join(ROOT, file), { overrides: [`${curriculum}.steps=${steps}`, `${curriculum}.batch=1 tasks`] });
  expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  const plan = r.plans[0]!.plan;
  const dir = mkdtempSync(join(tmpdir(), "tcod-sched-"));
  await runPlan(plan, { runDir: dir });
  const rows = readMetrics(join(dir, "metrics.jsonl")).filter((m): m is TrainRowMetrics => m.kind === "train");
  const schedule = (name: string) => planSchedules(plan).find((s) => s.name === name)!;
  return { plan, rows, schedule };
}

describe("schedules in force match tcod explain", () => {
  it("TCOD-f2b horizon per step", async () => {
    const { plan, rows, schedule } = await run("examples/texthouse/tcod-f2b.tcod", "texthouse_tcod_f2b", 8);
    const steps = rows.map((r) => r.step);
    expect(steps).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(rows.map((r) => r.horizon)).toEqual(scheduleValues(plan, schedule("horizon"), steps));
  });

  it("TCOD-b2f prefix per step and expert length", async () => {
    const { plan, rows, schedule } = await run("examples/texthouse/tcod-b2f.tcod", "texthouse_tcod_b2f", 6);
    for (const r of rows) {
      expect(r.expertLength).toBeGreaterThan(0);
      expect(r.prefix).toBe(scheduleValues(plan, schedule("prefix"), [r.step], r.expertLength)[0]);
    }
  });
});
