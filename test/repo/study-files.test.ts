/**
 * The studies of bench/study/ (issue 12 item 6) compile, and compare like with like: every method of
 * a study has the same models, step budget, batch, optimizer, staleness and evaluations, and each
 * seed of the sweep is a plan of every method. What differs between methods is what names them (the
 * loss, the horizon, the expert prefix).
 */
import { readdirSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";

const studies = readdirSync("bench/study").filter((f) => f.endsWith(".tcod"));

type Node = { kind: string; params: Record<string, unknown> };
type Plan = { name: string; clock: { steps: number; seed: number }; resources: { models: unknown }; graph: { nodes: Node[] }; exprs: Record<string, unknown> };

describe.each(studies)("bench/study/%s", (file) => {
  const r = compileFile(`bench/study/${file}`);
  const plans = r.plans.map((p) => p.plan as unknown as Plan);

  it("compiles without errors to method × seed plans", () => {
    expect(r.diagnostics.filter((d) => d.severity === "error").map((d) => d.message)).toEqual([]);
    const names = plans.map((p) => p.name);
    const methods = [...new Set(names.map((n) => n.split("@")[0]!))];
    const seeds = [...new Set(names.map((n) => n.split("@")[1]!))];
    expect(methods.length).toBeGreaterThanOrEqual(5);
    expect(seeds.length).toBeGreaterThanOrEqual(3);
    expect(names.sort()).toEqual(methods.flatMap((m) => seeds.map((s) => `${m}@${s}`)).sort());
  });

  it("gives every method the same models, budget, batch, optimizer, staleness and evaluations", () => {
    const shared = (p: Plan) => {
      const of = (kind: string) => p.graph.nodes.filter((n) => n.kind === kind).map((n) => n.params);
      const update = of("Update")[0] as { optimizer: { lr: { expr: string } } } & Record<string, unknown>;
      return {
        models: p.resources.models, steps: p.clock.steps, tasks: of("TaskSampler").map(({ seed: _s, ...rest }) => rest),
        update: { ...update, optimizer: { ...update.optimizer, lr: p.exprs[update.optimizer.lr.expr] } }, evals: of("Evaluate"),
      };
    };
    const first = shared(plans[0]!);
    for (const p of plans) expect(shared(p), p.name).toEqual(first);
  });
});
