/** Every example checks and compiles, deterministically, to a plan that validates on load. */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";
import { nodeOf, parsePlan, stringifyPlan } from "../../plan/schema.js";

const EX = join(import.meta.dirname, "../../examples");
/** Every .tcod under examples/, at any depth (examples/texthouse/gpu/ included). */
function tcodFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tcodFiles(join(dir, e.name)) : e.name.endsWith(".tcod") ? [join(dir, e.name)] : []);
}
const files = tcodFiles(EX);
/** Warnings an example is meant to show (none has errors). */
const EXPECTED_WARNINGS: Record<string, string[]> = {
  // b2f on WebShop: the official WebShop data has no expert actions (plan/env-semantics.ts).
  "webshop/tcod-b2f.tcod": ["TC4501"],
};

describe("examples", () => {
  it("cover every environment × method", () => {
    for (const env of ["texthouse", "alfworld", "webshop", "scienceworld"]) {
      for (const m of ["opd", "tcod-f2b", "tcod-b2f", "turnopd", "atod", "paced-f2b"]) expect(files).toContain(join(EX, env, `${m}.tcod`));
    }
  });
  it("the paced examples pace by feedback: their horizon or prefix is feedback-level, bounded by the official clock", () => {
    for (const file of files.filter((f) => /paced-(f2b|b2f)\.tcod$/.test(f))) {
      for (const { plan } of compileFile(file).plans) {
        const levels = Object.values(plan.exprs).map((e) => e.level);
        expect(levels.some((l) => l === "feedback" || l === "episode"), file).toBe(true);
        expect(JSON.stringify(plan.exprs), file).toMatch(/"op":"stage"/);
      }
    }
  });
  for (const file of files) {
    it(`${file.slice(EX.length + 1)} compiles to byte-identical plans`, () => {
      const a = compileFile(file);
      expect(a.diagnostics.map((d) => d.code)).toEqual(EXPECTED_WARNINGS[file.slice(EX.length + 1)] ?? []);
      expect(a.plans.length).toBeGreaterThan(0);
      const b = compileFile(file);
      const text = a.plans.map((p) => stringifyPlan(p.plan));
      expect(b.plans.map((p) => stringifyPlan(p.plan))).toEqual(text);
      for (const t of text) expect(() => parsePlan(JSON.parse(t))).not.toThrow();
    });
  }
  it("the official TCOD examples carry the official values (docs/REFERENCES.md#tcod-values)", () => {
    const official = { alfworld: [250, 30, 5, 6], webshop: [150, 15, 4, 4], scienceworld: [250, 30, 5, 6] } as const;
    for (const [env, [steps, hMax, kB2f, kF2b]] of Object.entries(official)) {
      for (const m of ["opd", "tcod-f2b", "tcod-b2f"]) {
        const plan = compileFile(join(EX, env, `${m}.tcod`)).plans[0]!.plan;
        expect(plan.clock.steps).toBe(steps);
        expect(nodeOf(plan, "EpisodePlanner")!.params.maxTurns).toBe(hMax);
        expect(nodeOf(plan, "TaskSampler")!.params).toMatchObject({ tasksPerStep: 16, rolloutsPerTask: 1 });
        const upd = nodeOf(plan, "Update")!.params;
        expect(upd).toMatchObject({ trainBatchTurns: 64, staleness: 2, lossFn: "ppo" });
        expect(upd.optimizer.lr).toBe(1e-6);
        const adv = nodeOf(plan, "Advantage")!.params;
        expect(adv.terms).toEqual([{ kind: "opd", coef: 1, estimator: "k1" }]);
        expect(adv.aggregate.kind).toBe(env === "alfworld" && m === "tcod-f2b" ? "seq_mean_token_mean" : "token_mean");
        const expr = (id: string) => JSON.stringify(plan.exprs[id]?.tree);
        if (m === "tcod-f2b") expect(expr("horizon")).toContain(`{"op":"div","args":[{"op":"var","name":"step"},{"op":"const","value":${kF2b}}]}`);
        if (m === "tcod-b2f") expect(expr("prefix")).toContain(`{"op":"div","args":[{"op":"var","name":"step"},{"op":"const","value":${kB2f}}]}`);
      }
    }
  });
});
