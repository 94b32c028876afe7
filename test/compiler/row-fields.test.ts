/** The curriculum's `rows` and `old_logprobs` fields reach the plan only where written (the runtime
 * picks their defaults from the student's backend), and a bad value is a coded diagnostic. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";
import { nodeOf } from "../../plan/schema.js";

const dir = mkdtempSync(join(tmpdir(), "tcod-rows-"));
let n = 0;
function compile(fields: string) {
  const file = join(dir, `c${n++}.tcod`);
  writeFileSync(file, `import { texthouse } from "std/envs"\nmodel m { path: "x" }\n` +
    `curriculum c { teacher: m student: m env: texthouse(split: "train") steps: 3 ${fields} }\n`);
  return compileFile(file);
}

describe("rows and old_logprobs", () => {
  it("are left to the runtime when unset and kept where written", () => {
    const unset = compile("").plans[0]!.plan;
    expect(nodeOf(unset, "Advantage")!.params.rows).toBeUndefined();
    expect(nodeOf(unset, "Update")!.params.oldLogprobs).toBeUndefined();
    const set = compile(`rows: "turn" old_logprobs: "sampler"`).plans[0]!.plan;
    expect(nodeOf(set, "Advantage")!.params.rows).toBe("turn");
    expect(nodeOf(set, "Update")!.params.oldLogprobs).toBe("sampler");
  });

  it("refuse an unknown value, naming the field", () => {
    const r = compile(`old_logprobs: "teacher"`);
    const d = r.diagnostics.find((x) => /old_logprobs/.test(x.message));
    expect(d).toBeDefined();
    expect(d!.code).toMatch(/^[A-Z]+\d+$/);
  });
});
