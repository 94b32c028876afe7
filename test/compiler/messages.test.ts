/** Messages that lead somewhere: misspelt keywords get a did-you-mean; `steps: -5` is a range error. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";

const dir = mkdtempSync(join(tmpdir(), "tcod-messages-"));
writeFileSync(join(dir, "package.json"), "{}");
let n = 0;
function diagnostics(text: string) {
  const file = join(dir, `m${n++}.tcod`);
  writeFileSync(file, text);
  return compileFile(file).diagnostics;
}

describe("messages", () => {
  for (const [typo, word] of [["curriculm c { steps: 10 }", "curriculum"], ["improt { opd } from \"std/loss\"", "import"], ["lett k = 6 steps", "let"]] as const) {
    it(`'${typo.split(" ")[0]}' → did you mean '${word}'?`, () => {
      const ds = diagnostics(typo + "\n");
      expect(ds[0]!.code).toBe("TC1001");
      expect(ds[0]!.message).toContain(`Did you mean '${word}'?`);
    });
  }

  it("`steps: -5` is a range error, not a unit mismatch", () => {
    const ds = diagnostics(`import { texthouse } from "std/envs"\nmodel m { path: "loglinear"  serve: embedded() }\ncurriculum c { teacher: m  student: m  env: texthouse()  steps: -5 }\n`);
    expect(ds.map((x) => x.code)).toEqual(["TC4001"]);
    expect(ds[0]!.message).toContain("-5");
  });
});
