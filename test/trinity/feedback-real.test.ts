/**
 * The generated plugin's feedback pacing run for real: its workflow class through Trinity-RFT's own
 * Task, Workflow base class and Experience type, and its FeedbackController as a named Ray actor on a
 * local CPU Ray instance (test/trinity/feedback_real.py), step after step on the shared feedback
 * vectors' traces (test/vectors/feedback.json). The caps its episodes run under are the schedule
 * `tcod run` computes from the same trace (the vectors' expected horizon), also across a killed
 * actor that resumes from its saved state.
 *
 * Needs $TRINITY_PYTHON (test/trinity/ci-install.sh: Trinity-RFT, torch, Ray). Skipped only when it
 * is absent and CI is not set.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect } from "vitest";
import { exportTrinity } from "../../targets/trinity/export.js";
import { compileOne, itWithTrinity, runDriver, writePlugin } from "./real.js";

const run = itWithTrinity(["torch", "ray", "trinity.common.workflows"]);

interface VectorCase {
  name: string; staleness: number; steps: number; maxTurns: number;
  exprs: { horizon: { tree: unknown } };
  trace: { step: number; kl: { mean: number } }[];
  expected: { horizon: number[][] };
}
const CASES = (JSON.parse(readFileSync("test/vectors/feedback.json", "utf8")) as { cases: VectorCase[] }).cases;

/** The curricula of the vector cases whose rule reads only the step's KL mean, which a scripted
 *  episode reproduces exactly (scripts/gen-feedback-vectors.ts), with one episode per step. */
const SOURCES: Record<string, { horizon: string; staleness: number; target: "upstream" | "tcod-fork" }> = {
  paced_f2b_at_most: { horizon: `paced_f2b(every: 3 steps, max: 8 turns, when: kl_settled(below: 0.45, decay: 0.7), patience: 2 steps)`, staleness: 0, target: "upstream" },
  paced_f2b_at_least_stale: { horizon: `paced_f2b(every: 4 steps, max: 8 turns, when: kl_settled(below: 0.4), patience: 3 steps, clock: "at_least")`, staleness: 2, target: "tcod-fork" },
};

function exportPlugin(name: string, c: VectorCase): string {
  const src = SOURCES[name]!;
  const dir = mkdtempSync(join(tmpdir(), "tcod-fb-real-"));
  const file = join(dir, "c.tcod");
  writeFileSync(file, `import { opd } from "std/loss"
import { alfworld } from "std/envs"
import { paced_f2b, kl_settled } from "std/feedback"
model teacher { path: "/path/to/teacher" }
model student { path: "/path/to/student" }
curriculum ${name} {
  teacher:     teacher
  student:     student
  env:         alfworld(split: "train", task_file: "/path/to/train.jsonl", max_turns: ${c.maxTurns} turns)
  steps:       ${c.steps}
  batch:       1 tasks × 1 rollout
  train_batch: 8 turns
  staleness:   ${src.staleness} steps
  horizon:     ${src.horizon}
}
`);
  const plan = compileOne(file);
  // The vector case is this curriculum's rule.
  const ref = (plan.graph.nodes.find((n) => n.kind === "EpisodePlanner")!.params as { horizon: { expr: string } }).horizon;
  expect(plan.exprs[ref.expr]!.tree).toEqual(c.exprs.horizon.tree);
  expect(c.staleness).toBe(src.staleness);
  const e = exportTrinity(plan, { target: src.target });
  const spec = JSON.parse(e.plugin!["tcod_runtime/spec.json"]!) as { workflow: { pacing: { feedback: unknown } } };
  expect(spec.workflow.pacing.feedback).toEqual({ staleness: src.staleness, episodesPerStep: 1 });
  return writePlugin(e.plugin!, join(dir, "plugin"));
}

interface Out { caps: number[]; turns: number[]; workflow_class: string[]; experience_type: string[]; actors_started: number; state: { observed: number } }

describe("the plugin's feedback actor inside Trinity-RFT's classes and a local Ray", () => {
  for (const name of Object.keys(SOURCES)) {
    run(`${name}: the caps of the plugin's episodes are tcod run's schedule on the same trace, across an actor restart`, () => {
      const c = CASES.find((x) => x.name === name)!;
      const plugin = exportPlugin(name, c);
      // Step t's one episode reports the trace row of step t (its KL; the rule reads only the KL).
      const kl = Array.from({ length: c.steps }, (_, i) => c.trace.find((r) => r.step === i + 1)?.kl.mean ?? 0);
      const state = join(dirname(plugin), "feedback-state.json");
      const req = { plugin, state, steps: c.steps, kl, kill_after: Math.floor(c.steps / 2) };
      const stdout = runDriver("feedback_real.py", req);
      const line = stdout.split("\n").find((l) => l.startsWith("TCOD_RESULT "));
      expect(line, stdout.slice(-2000)).toBeDefined();
      const out = JSON.parse(line!.slice("TCOD_RESULT ".length)) as Out;
      expect(out.workflow_class).toEqual(["trinity.common.workflows.workflow.Workflow"]);
      expect(out.experience_type).toEqual(["trinity.common.experience.Experience"]);
      expect(out.turns).toEqual(Array(c.steps).fill(1));
      // tcod run's horizon (the vectors' expected values, floored to whole turns and capped at Hmax).
      const want = c.expected.horizon[0]!.map((h) => Math.min(Math.floor(h), c.maxTurns));
      expect(out.caps).toEqual(want);
      expect(new Set(want).size).toBeGreaterThan(3); // the trace moves the cap
      // The actor was killed halfway and a new one resumed from the saved state.
      expect(out.actors_started).toBe(2);
      expect(out.state.observed).toBe(c.steps);
    }, 300_000);
  }
});
