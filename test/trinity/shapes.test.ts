/**
 * Every config shape the official TCOD examples use — OPD, TCOD-f2b and TCOD-b2f on ALFWorld, WebShop
 * and ScienceWorld, with directory tasksets, eval tasksets, workflow_args and env_vars — imports,
 * checks, compiles and exports back with every key kept or accounted for.
 *
 * test/fixtures/trinity/shapes/<env>-<method>/config.yaml is the config (ALFWorld: links to the
 * official files in ../official; WebShop and ScienceWorld: written from the official layout). Beside
 * it, the expected outputs, byte for byte: import.tcod (`tcod import trinity`), check.txt (`tcod
 * check` of it), export.tcod-fork.yaml and export.upstream.yaml (`tcod export trinity` with the
 * import's --infra arguments). `UPDATE_BASELINES=1 npx vitest run test/trinity/shapes.test.ts`
 * rewrites them; review the diff like code.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile, render } from "../../compiler/index.js";
import { exportTrinity, FIXED_KEYS, INFRA_KEYS, parseInfra, type TrinityInfra } from "../../targets/trinity/export.js";
import { CURRICULUM_KEYS, curriculumDifferences, curriculumValues, DERIVED_KEYS, importTrinity, resolvedConfig } from "../../targets/trinity/import.js";

const ROOT = "test/fixtures/trinity/shapes";
const UPDATE = process.env.UPDATE_BASELINES === "1";
const SHAPES = readdirSync(ROOT).filter((d) => existsSync(join(ROOT, d, "config.yaml"))).sort();

const pattern = (k: string) => new RegExp(`^${k.split(".").map((p) => (p === "*" ? "[^.]+" : p)).join("\\.")}$`);
const KEPT = [...CURRICULUM_KEYS, ...Object.keys(INFRA_KEYS), "explorer.env_vars.*"].map(pattern);
const FIXED = Object.keys(FIXED_KEYS).map(pattern);
const DERIVED = Object.keys(DERIVED_KEYS).map(pattern);

/** Every scalar leaf of a config as a dotted path (list items by index). */
function leaves(o: unknown, at: string[] = []): [string, unknown][] {
  if (o && typeof o === "object") return Object.entries(o).flatMap(([k, v]) => leaves(v, [...at, k]));
  return [[at.join("."), o]];
}

function expectFile(dir: string, name: string, text: string): void {
  const path = join(dir, name);
  if (UPDATE) { writeFileSync(path, text); return; }
  expect(existsSync(path), `${path} is missing (run UPDATE_BASELINES=1)`).toBe(true);
  expect(text).toBe(readFileSync(path, "utf8"));
}

describe.each(SHAPES)("official shape %s", (shape) => {
  const dir = join(ROOT, shape);
  const configPath = join(dir, "config.yaml");
  const yamlText = readFileSync(configPath, "utf8");
  const original = resolvedConfig(yamlText, configPath);
  const [env, method] = shape.split("-") as [string, "opd" | "f2b" | "b2f"];

  it("every key of the config is kept, fixed at its official value, or derived — none is silently dropped", () => {
    const unaccounted = leaves(original).filter(([k]) => ![...KEPT, ...FIXED, ...DERIVED].some((p) => p.test(k)));
    expect(unaccounted).toEqual([]);
    for (const [k, v] of leaves(original)) {
      const fixed = Object.entries(FIXED_KEYS).find(([f]) => pattern(f).test(k));
      if (fixed) expect(v, k).toEqual(fixed[1].value);
    }
    // The shape is what the issue names: a directory taskset for WebShop/ScienceWorld, eval tasksets
    // (ALFWorld OPD has its eval block commented out), workflow_args and env_vars.
    const cfg = original as { buffer: { explorer_input: { taskset: { path: string; workflow_args: object }; eval_tasksets?: unknown[] } }; explorer: { env_vars: object } };
    if (env !== "alfworld") expect(cfg.buffer.explorer_input.taskset.path).not.toMatch(/\.jsonl$/);
    if (!(env === "alfworld" && method === "opd")) expect(cfg.buffer.explorer_input.eval_tasksets?.length).toBeGreaterThan(0);
    expect(Object.keys(cfg.buffer.explorer_input.taskset.workflow_args).length).toBeGreaterThan(0);
    expect(Object.keys(cfg.explorer.env_vars).length).toBeGreaterThan(0);
  });

  it("imports, checks, compiles and exports to both targets as the expected files say", () => {
    const imported = importTrinity(yamlText, configPath);
    expectFile(dir, "import.tcod", imported.source);
    const file = join(mkdtempSync(join(tmpdir(), "tcod-shape-")), `${imported.curriculum}.tcod`);
    writeFileSync(file, imported.source);
    const compiled = compileFile(file);
    const check = compiled.diagnostics.map((d) => render(d, (f) => compiled.sources.get(f)).split(file).join(`${shape}/import.tcod`)).join("\n\n");
    expectFile(dir, "check.txt", (check || "ok") + "\n");
    expect(compiled.ok).toBe(true);
    expect(compiled.plans).toHaveLength(1);
    const plan = compiled.plans[0]!.plan;
    const infra = parseInfra(imported.infra) as Partial<TrinityInfra>;

    const fork = exportTrinity(plan, { target: "tcod-fork", infra });
    expectFile(dir, "export.tcod-fork.yaml", fork.yaml);
    // The fork runs the official workflow and advantage: every kept key comes back with its value.
    expect(fork.workflow).toBe(`${{ opd: "OPD", f2b: "TCOD_f2b", b2f: "TCOD_b2f" }[method]}_${env}_workflow`);
    expect(fork.plugin).toBeUndefined();
    expect(curriculumDifferences(original, fork.config)).toEqual([]);
    expect(curriculumValues(original).size).toBeGreaterThan(30);

    const up = exportTrinity(plan, { target: "upstream", infra });
    expectFile(dir, "export.upstream.yaml", up.yaml);
    // Upstream Trinity has no TCOD workflows or multi_turn_opd: the plugin's workflow and
    // on_policy_distill (the same per-token formula) stand in; nothing else changes.
    expect(curriculumDifferences(original, up.config).map((x) => x.key)).toEqual(["algorithm.advantage_fn", "buffer.explorer_input.default_workflow_type"]);
    expect(up.advantageFn).toBe("on_policy_distill");
    const spec = JSON.parse(up.plugin!["tcod_runtime/spec.json"]!) as { workflow: { env: string; pacing: Record<string, unknown> } };
    expect(spec.workflow.env).toBe(env);
    expect("horizon" in spec.workflow.pacing).toBe(method === "f2b");
    expect("prefix" in spec.workflow.pacing).toBe(method === "b2f");
  });
});
