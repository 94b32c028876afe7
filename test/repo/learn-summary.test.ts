/**
 * bench/h200/learn-summary.mjs reads each run's metrics.jsonl and episodes.jsonl: a line that is not
 * JSON is left out with a warning naming the file and its first such line, counted in the run's
 * `unreadLines` (was: dropped unsaid); an unterminated last line is left out with a note.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const SCRIPT = join(import.meta.dirname, "../../bench/h200/learn-summary.mjs");

describe("learn-summary.mjs", () => {
  it("warns of the lines it cannot read, per file, and counts them", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-learn-summary-"));
    mkdirSync(join(dir, "opd"));
    const train = (step: number) => JSON.stringify({ kind: "train", step, successRate: 0.5, episodes: 2, kl: { mean: 0.1 }, time: { rollout: 1 } });
    const metrics = join(dir, "opd", "metrics.jsonl"), episodes = join(dir, "opd", "episodes.jsonl");
    writeFileSync(metrics, [train(1), "garbage", train(2), "{oops", train(3), ""].join("\n"));
    const sample = JSON.stringify({ step: 1, split: "train", turns: [{ admissible: true, action: "look", kl: 0.2 }] });
    writeFileSync(episodes, [sample, sample].join("\n") + '\n{"step": 2, "tu');
    const r = spawnSync(process.execPath, [SCRIPT, dir], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr.split("\n").filter(Boolean)).toEqual([
      `learn-summary: warning: ${metrics}:2: line 2 is not JSON; 2 lines in all (2, 4); left out of the summary`,
      `learn-summary: note: ${episodes}:3: the last line is cut off (a run killed while writing it); it is left out`,
    ]);
    const out = JSON.parse(r.stdout) as { runs: Record<string, { steps: number; unreadLines?: Record<string, number>; turns?: { turns: number }[] }> };
    expect(out.runs.opd!.steps).toBe(3);
    expect(out.runs.opd!.unreadLines).toEqual({ [metrics]: 2 });
    expect(out.runs.opd!.turns?.[0]?.turns).toBe(2);
  });
});
