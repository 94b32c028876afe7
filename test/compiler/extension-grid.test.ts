/**
 * A schedule that calls a TypeScript extension is evaluated point by point when its range is
 * checked, and a point where the evaluation throws is not a range error (the run reports it). The
 * check keeps a schedule's grid between compilations and, when `steps` grows (an editor's keystroke),
 * computes only the new rows: the points that threw must stay marked, or they would read as 0 and
 * `lr: … > 0` would fail at a step where nothing is wrong.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile, render } from "../../compiler/index.js";

const source = (steps: number) => [
  'import { texthouse } from "std/envs"',
  'import { partial } from "./partial.ts"',
  'model m { path: "x" }',
  `curriculum c { teacher: m  student: m  env: texthouse()  steps: ${steps}  optimizer: adam(lr: 1e-3 * partial(step / 20 steps)) }`,
  "",
].join("\n");

describe("range checks of a schedule that calls an extension", () => {
  it("skip the points where it throws, also after steps grows and the kept grid is extended", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-ext-grid-"));
    writeFileSync(join(dir, "package.json"), "{}\n");
    writeFileSync(join(dir, "partial.ts"), readFileSync(join(import.meta.dirname, "../fixtures-ts/partial/partial.ts"), "utf8"));
    const path = join(dir, "main.tcod");
    for (const steps of [20, 40, 60, 30]) {
      writeFileSync(path, source(steps));
      const r = compileFile(path);
      expect(r.diagnostics.map((d) => render(d, (f) => r.sources.get(f)))).toEqual([]);
      expect(r.plans.map((p) => p.plan.clock.steps)).toEqual([steps]);
    }
  });
});
