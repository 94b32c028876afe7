/**
 * A feedback-paced run on the real pieces (texthouse + embedded): the pacing stage moves with the
 * run's own KL, the feedback in each metrics row is exactly what `tcod explain --trace` replays from
 * the run's metrics.jsonl, the run is deterministic for a seed, and a run stopped in the middle and
 * resumed from its checkpoint gives identical metrics (the tracker's state travels in the checkpoint).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";
import { runPlan } from "../../runtime/engine.js";
import { readMetrics, type TrainRowMetrics } from "../../runtime/metrics.js";
import { readCheckpoint } from "../../runtime/checkpoint.js";
import { planReplay, planSchedules, scheduleValues } from "../../plan/schedules.js";
import { parseTrace } from "../../plan/feedback.js";
import { readFileSync } from "node:fs";
import { renderReport } from "../../runtime/report/index.js";
import { composeRuntime } from "../../bin/compose.js";

composeRuntime(); // the backends and envs bin/ registers for `tcod run`

const SOURCE = `
import { opd } from "std/loss"
import { texthouse } from "std/envs"
import { paced_f2b, kl_settled } from "std/feedback"
model teacher { path: "oracle"  serve: embedded(smoothing: 0.1) }
model student { path: "loglinear"  serve: embedded(features: 2048) }
curriculum paced {
  teacher: teacher
  student: student
  env: texthouse(split: "train", max_turns: 6 turns)
  steps: 8
  batch: 4 tasks × 1 rollout
  horizon: paced_f2b(every: 1 step, max: 6 turns, when: kl_settled(below: 50.0, decay: 0.5), patience: 1 step, clock: "at_most")
  loss: opd(coef: 1.0, estimator: "full")
  optimizer: adam(lr: 0.01, loss_fn: "importance_sampling")
  staleness: STALENESS
  checkpoint_every: 2 steps
  seed: 7
}`;

const tmp = () => mkdtempSync(join(tmpdir(), "tcod-feedback-"));
function compile(staleness: string) {
  const dir = tmp();
  const file = join(dir, "paced.tcod");
  writeFileSync(file, SOURCE.replace("STALENESS", staleness));
  const r = compileFile(file);
  expect(r.diagnostics.filter((x) => x.severity === "error")).toEqual([]);
  return r.plans[0]!.plan;
}
const metrics = (dir: string) => readMetrics(join(dir, "metrics.jsonl")).map(({ time: _t, ...rest }) => rest);
const train = (dir: string) => readMetrics(join(dir, "metrics.jsonl")).filter((r): r is TrainRowMetrics => r.kind === "train");

describe("a feedback-paced run (texthouse + embedded)", () => {
  for (const staleness of ["0 steps", "1 step"]) {
    it(`stop in the middle, resume: identical metrics, feedback state in the checkpoint (staleness ${staleness})`, async () => {
      const plan = compile(staleness);
      expect(plan.exprs.horizon!.level).toBe("feedback");
      const full = tmp();
      expect((await runPlan(plan, { runDir: full })).status).toBe("completed");
      const rows = train(full);
      expect(rows).toHaveLength(8);
      // Step 1 has no feedback; the stage is part of every row.
      expect(rows[0]!.feedback).toMatchObject({ step: 0, values: { "ema#1": 0, "stage#1": 0 } });
      expect(rows.every((r) => r.feedback && "stage#1" in r.feedback.stages)).toBe(true);
      for (const k of [3, 5]) {
        const dir = tmp();
        expect((await runPlan(plan, { runDir: dir, stopAfter: k })).status).toBe("stopped");
        const ck = readCheckpoint(dir);
        expect(ck.curriculum.feedback?.seen).toBe(k - (staleness === "1 step" ? 1 : 0));
        expect((await runPlan(plan, { runDir: dir, resume: true })).status).toBe("completed");
        expect(metrics(dir)).toEqual(metrics(full));
      }
      // What explain/plot replay from the run's own trace is what the run did, step for step.
      const trace = parseTrace(readFileSync(join(full, "metrics.jsonl"), "utf8"), "metrics.jsonl");
      const horizon = planSchedules(plan).find((s) => s.name === "horizon")!;
      const replay = planReplay(plan, trace);
      expect(scheduleValues(plan, horizon, rows.map((r) => r.step), undefined, replay)).toEqual(rows.map((r) => r.horizon));
      expect(rows.map((r) => replay.at(r.step).summary)).toEqual(rows.map((r) => r.feedback));
    });
  }

  it("the stage moves with the KL: below the threshold every step, the cap follows the clock; above it, it stays at 1", async () => {
    const plan = compile("0 steps");
    const dir = tmp();
    await runPlan(plan, { runDir: dir });
    const rows = train(dir);
    // kl_settled(below: 50) holds on every finished step (this student's KL is about 8 nats), so the
    // stage advances each step: H = min(1 + stage, clock) = min(1 + (t − 1), 1 + t) = t, capped at 6.
    expect(rows.map((r) => r.horizon)).toEqual([1, 2, 3, 4, 5, 6, 6, 6]);
    // The report shows the stage and the signal that moved it: stage 1 in force from step 2, moved by step 1's metrics.
    const html = renderReport(plan, readMetrics(join(dir, "metrics.jsonl")));
    expect(html).toContain('id="feedback"');
    expect(html).toContain("Feedback: pacing stages in force");
    expect(html).toMatch(/<tr><td>stage#1 → 1<\/td><td>2<\/td><td>1<\/td><td>[0-9.]+<\/td><\/tr>/);
    const strict = JSON.parse(JSON.stringify(plan).replaceAll('"value":50', '"value":0.000001'));
    const dir2 = tmp();
    await runPlan(strict, { runDir: dir2 });
    expect(JSON.stringify(strict)).not.toEqual(JSON.stringify(plan));
    expect(train(dir2).map((r) => r.horizon)).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
  });
});
