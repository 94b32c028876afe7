/**
 * The stdlib's TCOD schedules, compiled from tcod source, equal the official closed forms
 * (kokolerk/TCOD TCOD_f2b_workflow / TCOD_b2f_workflow; docs/REFERENCES.md#tcod-f2b, #tcod-b2f)
 * at every step and for every expert length.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";
import { evalRef } from "../../plan/expr.js";
import { nodeOf } from "../../plan/schema.js";

const dir = mkdtempSync(join(tmpdir(), "tcod-sched-"));
let n = 0;
function compileSource(src: string) {
  const file = join(dir, `c${n++}.tcod`);
  writeFileSync(file, src);
  const r = compileFile(file);
  expect(r.diagnostics.map((d) => d.message)).toEqual([]);
  return r.plans[0]!.plan;
}
const header = `import { f2b, b2f } from "std/tcod"\nimport { texthouse } from "std/envs"\nmodel m { path: "x" }\n`;

/** Official f2b: `1 + current_step // checkpoint_steps`, capped at max_env_steps (H0 generalised). */
const officialF2b = (t: number, h0: number, k: number, hMax: number) => Math.min(h0 + Math.floor(t / k), hMax);
/** Official b2f `_linear_checkpoint_step`: max(0, min((L − 1) − t // k, L − 1)). */
const officialB2f = (t: number, L: number, k: number) => Math.max(0, Math.min(L - 1 - Math.floor(t / k), L - 1));

describe("official TCOD schedules", () => {
  it("f2b equals min(H0 + floor(t/k), Hmax) at every step", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 1, max: 40 }), fc.integer({ min: 1, max: 3 }), fc.integer({ min: 1, max: 300 }), (k, hMax, h0, steps) => {
      fc.pre(h0 <= hMax);
      const plan = compileSource(`${header}curriculum c { teacher: m  student: m  env: texthouse(max_turns: ${hMax} turns)  steps: ${steps}  horizon: f2b(start: ${h0} turns, every: ${k} steps, max: ${hMax} turns) }\n`);
      const ref = nodeOf(plan, "EpisodePlanner")!.params.horizon!;
      for (let t = 0; t <= steps; t++) expect(evalRef(ref, plan.exprs, { step: t })).toBe(officialF2b(t, h0, k, hMax));
    }), { numRuns: 25 });
  });

  it("b2f equals clip(L − 1 − floor(t/k), 0, L − 1) for every step and expert length (0 without actions)", () => {
    fc.assert(fc.property(fc.integer({ min: 1, max: 12 }), fc.integer({ min: 2, max: 40 }), fc.integer({ min: 1, max: 300 }), (k, hMax, steps) => {
      const plan = compileSource(`${header}curriculum c { teacher: m  student: m  env: texthouse(max_turns: ${hMax} turns)  steps: ${steps}  prefix: b2f(every: ${k} steps) }\n`);
      const ref = nodeOf(plan, "EpisodePlanner")!.params.prefix!;
      for (let t = 0; t <= steps; t++) {
        for (let L = 0; L <= hMax; L++) expect(evalRef(ref, plan.exprs, { step: t, "episode.expert_length": L })).toBe(officialB2f(t, L, k));
      }
    }), { numRuns: 20 });
  });

  it("the ALFWorld f2b example gives the official horizons 1, 2, 3, 30, 30 at steps 0, 6, 12, 174, 175", () => {
    const r = compileFile(join(import.meta.dirname, "../../examples/alfworld/tcod-f2b.tcod"));
    const plan = r.plans[0]!.plan;
    const ref = nodeOf(plan, "EpisodePlanner")!.params.horizon!;
    expect([0, 6, 12, 174, 175].map((t) => evalRef(ref, plan.exprs, { step: t }))).toEqual([1, 2, 3, 30, 30]);
  });
});
