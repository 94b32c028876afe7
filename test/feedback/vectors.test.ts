/**
 * test/vectors/feedback.json (traces in, schedules out): every expected value is recomputed from the
 * file's own inputs by the TypeScript runtime, the file matches what the generator makes from today's
 * stdlib (scripts/gen-feedback-vectors.ts), and the Trinity plugin's Python gives the same numbers
 * (test/feedback/test_feedback.py). A few values are pinned by hand.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { buildFeedbackVectors, computeFeedbackExpected, FEEDBACK_VECTORS_SCHEMA, formatFeedbackVectors, type FeedbackCase } from "../../scripts/gen-feedback-vectors.js";

const text = readFileSync(new URL("../vectors/feedback.json", import.meta.url), "utf8");
const file = JSON.parse(text) as { schema: string; cases: FeedbackCase[] };
const python = spawnSync("python3", ["--version"]).status === 0;

describe("feedback vectors", () => {
  it("the TypeScript runtime recomputes every expected value from the inputs", () => {
    expect(file.schema).toBe(FEEDBACK_VECTORS_SCHEMA);
    expect(file.cases.length).toBeGreaterThanOrEqual(4);
    for (const c of file.cases) expect(computeFeedbackExpected(c), c.name).toEqual(c.expected);
  });

  it("the file is what the generator makes from today's stdlib (regenerate and review the diff otherwise)", async () => {
    expect(formatFeedbackVectors(await buildFeedbackVectors())).toBe(text);
  });

  it("pinned by hand: at_most never exceeds the clock; staleness 2 sees nothing before step 4", () => {
    const atMost = file.cases.find((c) => c.name === "paced_f2b_at_most")!;
    atMost.expected.horizon![0]!.forEach((h, i) => expect(h).toBeLessThanOrEqual(Math.min(1 + Math.floor((i + 1) / 3), 8)));
    const stale = file.cases.find((c) => c.name === "paced_f2b_at_least_stale")!;
    expect(stale.expected.feedbackStep.slice(0, 5)).toEqual([0, 0, 0, 1, 2]);
    // at_least: never below the clock min(1 + floor(t / 4), 8)
    stale.expected.horizon![0]!.forEach((h, i) => expect(h).toBeGreaterThanOrEqual(Math.min(1 + Math.floor((i + 1) / 4), 8)));
  });

  (python || process.env.CI ? it : it.skip)("the Trinity plugin's Python gives the same schedules and states (test/feedback/test_feedback.py)", () => {
    const r = spawnSync("python3", ["test/feedback/test_feedback.py"], { encoding: "utf8" });
    expect(r.stderr).toMatch(/OK/);
    expect(r.status).toBe(0);
  });
});
