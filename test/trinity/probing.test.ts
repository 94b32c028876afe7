/**
 * One TurnOPD probing definition on both sides: the probe-task draw (plan/seeds.ts
 * `probeTaskIndices`, runtime/nodes/probe.ts) and the plugin's (core.py `probe_task_indices`) agree
 * on the shared vectors test/vectors/probing.json, which pin the seed mixer, the generator and the
 * permutation too. `UPDATE_BASELINES=1` rewrites the vectors from the TypeScript side.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { compileFile } from "../../compiler/index.js";
import { exportTrinity } from "../../targets/trinity/export.js";
import { describe, expect, it } from "vitest";
import { mixSeed, permutation, probeTaskIndices, rng, SEED_PURPOSE } from "../../plan/seeds.js";

const PATH = "test/vectors/probing.json";
interface Vectors {
  mixSeed: { parts: number[]; value: number }[];
  rng: { seed: number; values: number[] }[];
  permutation: { n: number; seed: number; value: number[] }[];
  probe: { seed: number; step: number; episodes: number; tasks: number; indices: number[] }[];
}

function compute(): Vectors {
  const mixParts = [[0], [1, SEED_PURPOSE.probe, 1], [42, SEED_PURPOSE.probe, 250], [7, 4, 2 ** 33 + 5], [-3, 4, 10], [4294967295, 1]];
  const seeds = [0, 1, 42, 2 ** 31, 4294967295];
  const probe: Vectors["probe"] = [];
  for (const [seed, step, episodes, tasks] of [[42, 5, 4, 3553], [42, 10, 4, 3553], [1, 3, 8, 5], [7, 6, 3, 1], [0, 2, 2, 0], [123, 250, 16, 140]] as const) {
    probe.push({ seed, step, episodes, tasks, indices: probeTaskIndices(seed, step, episodes, tasks) });
  }
  return {
    mixSeed: mixParts.map((parts) => ({ parts, value: mixSeed(...parts) })),
    rng: seeds.map((seed) => { const r = rng(seed); return { seed, values: Array.from({ length: 5 }, () => r()) }; }),
    permutation: [[1, 3], [5, 9], [10, 12345], [30, mixSeed(42, SEED_PURPOSE.probe, 5)]].map(([n, seed]) => ({ n: n!, seed: seed!, value: permutation(n!, seed!) })),
    probe,
  };
}

describe("the TurnOPD probe-task draw", () => {
  it("TypeScript gives the shared vectors", () => {
    const got = compute();
    if (process.env.UPDATE_BASELINES === "1") writeFileSync(PATH, JSON.stringify(got, null, 1) + "\n");
    expect(got).toEqual(JSON.parse(readFileSync(PATH, "utf8")));
    // A hand check: 4 probes over 5 tasks are 4 distinct tasks; more probes than tasks cycle.
    const few = probeTaskIndices(1, 3, 8, 5);
    expect(new Set(few.slice(0, 5)).size).toBe(5);
    expect(few.slice(5)).toEqual(few.slice(0, 3));
  });

  it("the plugin's Python core gives the same vectors", () => {
    const script = `
import json, sys
sys.path.insert(0, "targets/trinity/plugin")
from tcod_runtime import core
v = json.load(open("${PATH}"))
bad = []
for c in v["mixSeed"]:
    if core.mix_seed(*c["parts"]) != c["value"]: bad.append(["mixSeed", c])
for c in v["rng"]:
    r = core.mulberry32(c["seed"])
    if [r() for _ in c["values"]] != c["values"]: bad.append(["rng", c])
for c in v["permutation"]:
    if core.permutation(c["n"], c["seed"]) != c["value"]: bad.append(["permutation", c])
for c in v["probe"]:
    if core.probe_task_indices(c["seed"], c["step"], c["episodes"], c["tasks"]) != c["indices"]: bad.append(["probe", c])
print(json.dumps({"checked": sum(len(v[k]) for k in v), "bad": bad}))
`;
    const r = spawnSync("python3", ["-c", script], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout) as { checked: number; bad: unknown[] };
    expect(out.bad).toEqual([]);
    expect(out.checked).toBeGreaterThanOrEqual(20);
  });

  const PY = process.env.TRINITY_PYTHON ?? (existsSync(".venv-trinity/bin/python") ? ".venv-trinity/bin/python" : "python3");
  const hasTrinity = spawnSync(PY, ["-c", "import trinity.common.workflows"], { encoding: "utf8" }).status === 0;
  (hasTrinity || process.env.CI ? it : it.skip)("the generated workflow's probe slots play the tasks tcod run's Probe node draws", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-probe-"));
    const tasks = join(dir, "train.jsonl");
    writeFileSync(tasks, Array.from({ length: 37 }, (_, i) => JSON.stringify({ task_id: 1000 + i, target: "" })).join("\n") + "\n");
    const src = join(dir, "t.tcod");
    writeFileSync(src, `import { opd } from "std/loss"
import { adaptive_depth, coverage } from "std/turnopd"
import { webshop } from "std/envs"
model teacher { path: "t" }
model student { path: "s" }
curriculum probe_draw {
  teacher:     teacher
  student:     student
  env:         webshop(split: "train", task_file: ${JSON.stringify(tasks)})
  steps:       40
  train_batch: 64 turns
  seed:        1234
  horizon:     adaptive_depth(probe_every: 5 steps, probe_episodes: 6 episodes, rule: coverage(keep: 0.9), initial: 2 turns)
}
`);
    const r = compileFile(src);
    expect(r.diagnostics.filter((d) => d.severity === "error").map((d) => d.message)).toEqual([]);
    const e = exportTrinity(r.plans[0]!.plan, { target: "tcod-fork" });
    const out = join(dir, "plugin");
    for (const [rel, text] of Object.entries(e.plugin!)) { mkdirSync(dirname(join(out, rel)), { recursive: true }); writeFileSync(join(out, rel), text); }
    const script = `
import importlib.util, json, sys
sys.path.insert(0, ${JSON.stringify(out)})
spec = importlib.util.spec_from_file_location("tcod_workflow", ${JSON.stringify(join(out, "tcod_workflow.py"))})
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
print(json.dumps({str(step): [m._probe_task(step, slot).raw_task["task_id"] for slot in range(6)] for step in (5, 10, 35)}))
`;
    const py = spawnSync(PY, ["-c", script], { encoding: "utf8" });
    expect(py.status, py.stderr.slice(-2000)).toBe(0);
    const got = JSON.parse(py.stdout.trim().split("\n").pop()!) as Record<string, number[]>;
    for (const step of [5, 10, 35]) expect(got[String(step)]).toEqual(probeTaskIndices(1234, step, 6, 37).map((i) => 1000 + i));
  });
});
