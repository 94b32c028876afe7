/**
 * A field whose expression mixes units gets one hint that one edit fixes: the hint's rewrite is
 * checked by the compiler before it is offered, and here it is applied and compiled again.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";

const source = (horizon: string) => `import { texthouse } from "std/envs"
model m { path: "x" }
curriculum c {
  teacher: m
  student: m
  env:     texthouse()
  steps:   40
  horizon: ${horizon}
}
`;
const compile = (horizon: string) => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-units-"));
  writeFileSync(join(dir, "package.json"), "{}");
  writeFileSync(join(dir, "c.tcod"), source(horizon));
  return compileFile(join(dir, "c.tcod"));
};

describe("unit errors of a field: one edit", () => {
  for (const [written, fixed] of [
    ["3 + step / 20", "3 turns + step / 20 steps * 1 turn"], // the README's example
    ["2 + total_steps / 10", "2 turns + total_steps / 10 steps * 1 turn"],
    ["8 - step / 10", "8 turns - step / 10 steps * 1 turn"],
    ["3 + step", "3 turns + step / 1 step * 1 turn"],
    ["4 - 0.05 * step", "4 turns - 0.05 * step / 1 step * 1 turn"],
  ]) {
    it(`horizon: ${written} → ${fixed}, which compiles`, () => {
      const r = compile(written!);
      expect(r.ok).toBe(false);
      expect(r.diagnostics.map((x) => x.code)).toEqual(["TC2023"]);
      expect(r.diagnostics[0]!.hint).toBe(`Write \`horizon: ${fixed}\` (checked: it is in turns).`);
      const again = compile(fixed!);
      expect(again.diagnostics).toEqual([]);
      expect(again.plans).toHaveLength(1);
    });
  }

  it("errors that are not only units of the field keep their own diagnostics", () => {
    expect(compile("3 steps + step / 20").diagnostics.map((x) => x.code)).toEqual(["TC2001"]); // an explicit other unit
    expect(compile("0.5").diagnostics.map((x) => x.code)).toEqual(["TC2012"]); // a bare number already has a one-edit hint
    expect(compile("3 + nosuch").diagnostics.map((x) => x.code)).not.toContain("TC2023");
  });
});
