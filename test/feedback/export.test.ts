/**
 * Feedback-paced curricula exported to Trinity-RFT: the generated workflow paces them (never an
 * official TCOD workflow), spec.json carries the pacing expressions and what the workflow's feedback
 * actor needs (staleness, episodes per step), and the plugin's Python evaluates the exported
 * horizon on a trace exactly as tcod does. A feedback loss coefficient is refused with its reason.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";
import { exportTrinity, TrinityExportError } from "../../targets/trinity/export.js";
import { planReplay, planSchedules, scheduleValues } from "../../plan/schedules.js";
import { syntheticTrace } from "../../scripts/gen-feedback-vectors.js";

const python = spawnSync("python3", ["--version"]).status === 0;

describe("Trinity export of feedback rules", () => {
  for (const target of ["tcod-fork", "upstream"] as const) {
    it(`examples/*/paced-*.tcod → the plugin workflow with a feedback actor (${target})`, () => {
      for (const ex of ["alfworld/paced-f2b", "alfworld/paced-b2f", "webshop/paced-f2b", "scienceworld/paced-f2b"]) {
        const r = compileFile(`examples/${ex}.tcod`);
        expect(r.ok, ex).toBe(true);
        const plan = r.plans[0]!.plan;
        const e = exportTrinity(plan, { target });
        expect(e.workflow, ex).toMatch(/^tcod_.*_workflow$/);
        const spec = JSON.parse(e.plugin!["tcod_runtime/spec.json"]!);
        expect(spec.workflow.pacing.feedback, ex).toEqual({ staleness: 2, episodesPerStep: 16 });
        expect(JSON.stringify(spec.exprs), ex).toMatch(/"op":"stage"/);
        expect(e.plugin!["tcod_workflow.py"]).toContain("FeedbackController");
      }
    });
  }

  (python || process.env.CI ? it : it.skip)("the plugin's Python paces the exported horizon on a trace as tcod does", () => {
    const plan = compileFile("examples/scienceworld/paced-f2b.tcod").plans[0]!.plan;
    const spec = JSON.parse(exportTrinity(plan, { target: "tcod-fork" }).plugin!["tcod_runtime/spec.json"]!);
    const trace = syntheticTrace(7, plan.clock.steps, { klScale: 0.4 });
    const horizon = planSchedules(plan).find((s) => s.name === "horizon")!;
    const steps = Array.from({ length: plan.clock.steps }, (_, i) => i + 1);
    const ours = scheduleValues(plan, horizon, steps, undefined, planReplay(plan, trace));
    const dir = mkdtempSync(join(tmpdir(), "tcod-fbexp-"));
    writeFileSync(join(dir, "in.json"), JSON.stringify({ spec, trace }));
    const script = `
import json, sys
sys.path.insert(0, "targets/trinity/plugin")
from tcod_runtime import core
d = json.load(open(sys.argv[1])); spec = d["spec"]; pacing = spec["workflow"]["pacing"]
s = pacing["feedback"]["staleness"]
tracker, nxt, caps = core.FeedbackTracker(spec["exprs"]), 0, []
for t in range(1, pacing["totalSteps"] + 1):
    while nxt < len(d["trace"]) and d["trace"][nxt]["step"] <= t - 1 - s:
        tracker.observe(d["trace"][nxt], core.observe_clock(d["trace"][nxt]["step"], s, pacing["totalSteps"])); nxt += 1
    caps.append(core.plan_episode(pacing, spec["exprs"], t, 0, feedback=tracker)["cap"])
print(json.dumps(caps))`;
    const r = spawnSync("python3", ["-c", script, join(dir, "in.json")], { encoding: "utf8" });
    expect(r.stderr).toBe("");
    expect(JSON.parse(r.stdout)).toEqual(ours.map((h) => Math.min(Math.floor(h), 30)));
    expect(new Set(ours).size).toBeGreaterThan(3); // the trace moves the cap
  });

  it("a loss coefficient that reads feedback is refused, naming why", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-fbexp-"));
    const file = join(dir, "c.tcod");
    writeFileSync(file, `import { opd } from "std/loss"
import { alfworld } from "std/envs"
model m { path: "x"  serve: worker("http://127.0.0.1:8100") }
curriculum c { teacher: m  student: m  env: alfworld(split: "train", task_file: "/d/t.jsonl")  steps: 10  horizon: 3 turns + 0 * feedback.horizon  loss: opd(coef: 1.0) }
`);
    const r = compileFile(file);
    expect(r.ok).toBe(true);
    const plan = r.plans[0]!.plan;
    // A plan/2 file may carry what the compiler refuses in a coefficient: forge one.
    const adv = plan.graph.nodes.find((n) => n.kind === "Advantage")!;
    (adv.params as { terms: { coef: unknown }[] }).terms[0]!.coef = { expr: "horizon" };
    try { exportTrinity(plan, { target: "tcod-fork" }); } catch (e) {
      expect(e).toBeInstanceOf(TrinityExportError);
      expect(String((e as Error).message) + JSON.stringify((e as TrinityExportError).problems())).toMatch(/coefficient reads the run's metrics/);
      return;
    }
    expect.unreachable();
  });
});
