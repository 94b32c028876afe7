/**
 * Trinity config → `tcod import` → `tcod compile` → `tcod export` gives back every curriculum key
 * (CURRICULUM_KEYS) with the same value: the three official ALFWorld configs of the TCOD code and our
 * own configs exercising the other keys (WebShop f2b with importance sampling, betas, weight decay,
 * repeat_times, teacher temperature, interpolation; ScienceWorld b2f with two eval sets).
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";
import type { Plan } from "../../plan/schema.js";
import { exportTrinity, parseInfra, type TrinityInfra } from "../../targets/trinity/export.js";
import { curriculumDifferences, curriculumValues } from "../../targets/trinity/import.js";
import { roundTrip } from "./roundtrip.js";

const CONFIGS = [
  "test/fixtures/trinity/official/opd.yaml",
  "test/fixtures/trinity/official/tcod_f2b.yaml",
  "test/fixtures/trinity/official/tcod_b2f.yaml",
  "test/fixtures/trinity/webshop_f2b_custom.yaml",
  "test/fixtures/trinity/sciworld_b2f_two_evals.yaml",
];

describe.each(CONFIGS)("round trip %s", (path) => {
  it("imports to a .tcod that compiles and exports every curriculum key back", () => {
    const { compiled, errors, original, imported } = roundTrip(path);
    expect(errors).toEqual([]);
    expect(compiled.plans).toHaveLength(1);
    const exported = exportTrinity(compiled.plans[0]!.plan, { target: "tcod-fork", infra: parseInfra(imported.infra) as Partial<TrinityInfra> });
    expect(curriculumDifferences(original, exported.config)).toEqual([]);
    // The comparison is not vacuous: the original has many curriculum keys.
    expect(curriculumValues(original).size).toBeGreaterThan(15);
  });
});

describe("round trip details", () => {
  it("recognises the official schedules by name and k", () => {
    const f2b = roundTrip(CONFIGS[1]!);
    const e = exportTrinity(f2b.compiled.plans[0]!.plan, { target: "tcod-fork" });
    expect(e.workflow).toBe("TCOD_f2b_alfworld_workflow");
    expect(e.plugin).toBeUndefined();
    expect((e.config.buffer as any).explorer_input.taskset.workflow_args).toEqual({
      max_env_steps: 30, temperature: 1, total_steps: 250, checkpoint_strategy: "linear", checkpoint_steps: 6,
    });
    const b2f = roundTrip(CONFIGS[2]!);
    expect(exportTrinity(b2f.compiled.plans[0]!.plan, { target: "tcod-fork" }).workflow).toBe("TCOD_b2f_alfworld_workflow");
  });

  it("resolves ${oc.env:VAR,default} to its default and notes it", () => {
    const { imported } = roundTrip(CONFIGS[3]!);
    expect(imported.source).toContain(`path: "Qwen/Qwen2.5-7B-Instruct"`);
    expect(imported.notes.join("\n")).toMatch(/model\.model_path: \$\{oc\.env:STUDENT_PATH,Qwen\/Qwen2\.5-7B-Instruct\} → its default/);
  });

  it("a difference in any curriculum key is reported", () => {
    const { compiled, original, imported } = roundTrip(CONFIGS[1]!);
    const exported = exportTrinity(compiled.plans[0]!.plan, { target: "tcod-fork", infra: parseInfra(imported.infra) as Partial<TrinityInfra> }).config as any;
    exported.buffer.explorer_input.taskset.workflow_args.checkpoint_steps = 7;
    exported.algorithm.optimizer.lr = 2e-6;
    expect(curriculumDifferences(original, exported).map((d) => d.key)).toEqual([
      "algorithm.optimizer.lr", "buffer.explorer_input.taskset.workflow_args.checkpoint_steps",
    ]);
  });
});

/** A plan without what names where it came from: its sources and its expressions' positions. */
function curriculumOf(plan: Plan): unknown {
  const { sources: _s, ...rest } = structuredClone(plan);
  for (const def of Object.values(rest.exprs)) delete def.origin;
  return rest;
}

describe("example → export → import → compile", () => {
  // Every example that exports to a TCOD workflow (docs/TRINITY.md): the import gives its plan back.
  const EXAMPLES = ["alfworld", "scienceworld", "webshop"].flatMap((env) => ["opd", "tcod-f2b", "tcod-b2f"].map((m) => `examples/${env}/${m}.tcod`));
  it.each(EXAMPLES)("%s compiles back to the same plan", (example) => {
    const first = compileFile(example);
    expect(first.plans).toHaveLength(1);
    const plan = first.plans[0]!.plan;
    const exported = exportTrinity(plan, { target: "tcod-fork", infra: {} });
    expect(exported.plugin).toBeUndefined();
    const dir = mkdtempSync(join(tmpdir(), "tcod-rt-"));
    const yaml = join(dir, `${plan.name}.yaml`);
    writeFileSync(yaml, exported.yaml);
    const { compiled, errors } = roundTrip(yaml);
    expect(errors).toEqual([]);
    expect(curriculumOf(compiled.plans[0]!.plan)).toEqual(curriculumOf(plan));
  });
});
