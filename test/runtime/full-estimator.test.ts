/**
 * The opd "full" estimator on the real pieces (texthouse + the embedded backend): the exact reverse
 * KL against the oracle's full distributions teaches the student the env's action language, and
 * a run with an explorer a step ahead (staleness 1) still resumes exactly.
 */
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runPlan } from "../../runtime/engine.js";
import { readMetrics, type TrainRowMetrics } from "../../runtime/metrics.js";
import { parsePlan, type Plan } from "../../plan/schema.js";
import { composeRuntime } from "../../bin/compose.js";

composeRuntime(); // the backends and envs bin/ registers for `tcod run`

const base = JSON.parse(readFileSync(join(import.meta.dirname, "../fixtures/plans/texthouse-f2b-small.json"), "utf8")) as Plan;

/** The small f2b fixture with the full estimator and the optimiser the texthouse examples use. */
function fullPlan(o: { steps: number; tasks: number; staleness: number }): Plan {
  const p = structuredClone(base);
  p.clock.steps = o.steps;
  for (const n of p.graph.nodes) {
    if (n.kind === "Advantage") n.params.terms = [{ kind: "opd", coef: 1, estimator: "full" }] as typeof n.params.terms;
    if (n.kind === "TaskSampler") n.params.tasksPerStep = o.tasks;
    if (n.kind === "Update") { n.params.staleness = o.staleness; n.params.optimizer = { ...n.params.optimizer, lr: 0.1, eps: 1e-6 }; }
  }
  return parsePlan(p);
}

const tmp = () => mkdtempSync(join(tmpdir(), "tcod-full-"));
const trainRows = (dir: string) => readMetrics(join(dir, "metrics.jsonl")).filter((r): r is TrainRowMetrics => r.kind === "train");
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

describe("opd full estimator on texthouse + embedded", () => {
  it("lowers the KL to the teacher and raises the admissible-action rate", async () => {
    const dir = tmp();
    expect((await runPlan(fullPlan({ steps: 24, tasks: 8, staleness: 0 }), { runDir: dir })).status).toBe("completed");
    const rows = trainRows(dir);
    expect(rows).toHaveLength(24);
    const first = rows.slice(0, 4), last = rows.slice(-4);
    const kl = (rs: TrainRowMetrics[]) => mean(rs.map((r) => r.kl.mean));
    const admissible = (rs: TrainRowMetrics[]) => mean(rs.map((r) => r.admissibleRate));
    expect(admissible(first)).toBeLessThan(0.1);
    expect(admissible(last)).toBeGreaterThan(admissible(first) + 0.4);
    expect(kl(last)).toBeLessThan(kl(first) - 2);
    expect(rows.every((r) => r.coefs.opd === 1)).toBe(true);
  });

  it("stop and resume with staleness 1 (episodes scored after the resume): identical metrics and weights", async () => {
    const plan = fullPlan({ steps: 6, tasks: 4, staleness: 1 });
    const metrics = (dir: string) => readMetrics(join(dir, "metrics.jsonl")).map(({ time: _t, ...rest }) => rest);
    const weights = (dir: string) => {
      const d = join(dir, "checkpoint", "student");
      return Object.fromEntries(readdirSync(d).sort().map((f) => [f, readFileSync(join(d, f)).toString("base64")]));
    };
    const full = tmp(), split = tmp();
    expect((await runPlan(plan, { runDir: full })).status).toBe("completed");
    expect((await runPlan(plan, { runDir: split, stopAfter: 3 })).status).toBe("stopped");
    // The explorer ran a step ahead: its episodes wait, unscored, in the checkpoint and are scored
    // (full distributions included) after the resume.
    const state = JSON.parse(readFileSync(join(split, "checkpoint", "state.json"), "utf8")) as { unscored: unknown };
    expect(state.unscored).not.toBeNull();
    expect((await runPlan(plan, { runDir: split, resume: true })).status).toBe("completed");
    expect(metrics(split)).toEqual(metrics(full));
    expect(weights(split)).toEqual(weights(full));
  });
});
