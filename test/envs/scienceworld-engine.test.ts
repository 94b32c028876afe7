/**
 * Curricula on the real ScienceWorld through the engine and the embedded backend (oracle teacher on
 * the gold path): the shipped embedded-f2b example (its horizon schedule in force, in metrics and in
 * report.html), and a b2f run whose prefixes replay gold paths from a Trinity-style task file.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";
import { runPlan } from "../../runtime/engine.js";
import { readMetrics } from "../../runtime/metrics.js";
import { writeReport } from "../../runtime/report/index.js";
import { missing } from "./requirements.js";
import { composeRuntime } from "../../bin/compose.js";

composeRuntime(); // the backends and envs bin/ registers for `tcod run`

const ROOT = resolve(import.meta.dirname, "../..");
const skip = missing("scienceworld") !== undefined;

interface TrainRow { kind: "train"; step: number; horizon: number; prefix: number; expertLength: number; studentTurns: number; episodes: number; droppedFailed: number }

function compile(file: string, overrides: string[]) {
  const r = compileFile(file, { overrides });
  expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return r.plans[0]!.plan;
}

describe.skipIf(skip)("curricula on the real ScienceWorld (embedded backend)", () => {
  it("examples/scienceworld/embedded-f2b.tcod runs; the f2b horizon is in force and in the report", async () => {
    const c = "scienceworld_embedded_f2b";
    const plan = compile(join(ROOT, "examples/scienceworld/embedded-f2b.tcod"), [`${c}.steps=4`, `${c}.batch=2 tasks`]);
    const dir = mkdtempSync(join(tmpdir(), "tcod-sw-f2b-"));
    expect((await runPlan(plan, { runDir: dir })).status).toBe("completed");
    const rows = readMetrics(join(dir, "metrics.jsonl")) as unknown as (TrainRow | { kind: string })[];
    const train = rows.filter((r): r is TrainRow => r.kind === "train");
    expect(train.map((r) => r.horizon)).toEqual([1, 2, 2, 3]); // min(1 + floor(step / 2), 12), as tcod explain shows
    expect(train.every((r) => r.studentTurns === r.horizon && r.episodes === 2 && r.droppedFailed === 0)).toBe(true);
    const html = readFileSync(writeReport(dir, plan, readMetrics(join(dir, "metrics.jsonl"))), "utf8");
    expect(html).toContain("horizon @ 4: 3");
  }, 600_000);

  it("b2f replays gold-path prefixes (task file actions, else the package's gold path) that shrink each step", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-sw-b2f-"));
    const tasks = join(dir, "train.jsonl");
    const row = (name: string, v: number, actions?: string[]) =>
      JSON.stringify({ task_desc: JSON.stringify({ task_name: name, var_num: v, jar_path: "" }), targe: "", ...(actions ? { actions } : {}) });
    // Row 1 carries its own actions (a shortened expert path); row 2 falls back to the package's gold path.
    writeFileSync(tasks, [row("melt", 3, ["open door to kitchen", "go to kitchen", "look around", "pick up thermometer"]), row("boil", 2)].join("\n") + "\n");
    const src = join(dir, "b2f.tcod");
    writeFileSync(src, `import { opd } from "std/loss"
import { b2f } from "std/tcod"
import { scienceworld } from "std/envs"
import { raw_format } from "std/agent"
model teacher { path: "oracle"  serve: embedded(smoothing: 0.1) }
model student { path: "loglinear"  serve: embedded(features: 1024) }
curriculum sw_b2f {
  teacher: teacher
  student: student
  env: scienceworld(split: "train", task_file: ${JSON.stringify(tasks)}, max_turns: 8 turns, pool: 2, agent: raw_format())
  steps: 3
  batch: 2 tasks × 1 rollout
  prefix: b2f(every: 1 steps)
  loss: opd(coef: 1.0)
  optimizer: adam(lr: 0.05, loss_fn: "importance_sampling")
  staleness: 0 steps
}
`);
    const plan = compile(src, []);
    const run = join(dir, "run");
    expect((await runPlan(plan, { runDir: run })).status).toBe("completed");
    const train = (readMetrics(join(run, "metrics.jsonl")) as unknown as (TrainRow | { kind: string })[])
      .filter((r): r is TrainRow => r.kind === "train");
    expect(train).toHaveLength(3);
    // Mean over the batch's two tasks: expert lengths 4 (file) and boil's gold path (> 20 actions).
    for (const r of train) expect(r.expertLength).toBeGreaterThan(10);
    expect(train[0]!.prefix).toBeGreaterThan(train[1]!.prefix);
    expect(train[1]!.prefix).toBeGreaterThan(train[2]!.prefix);
  }, 600_000);

  it("`tcod run` reads a directory taskset (the official ScienceWorld layout) as Trinity does: train.jsonl trains, test.jsonl evaluates", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-sw-dir-"));
    const data = join(dir, "sciworld_data");
    const row = (name: string, v: number) => JSON.stringify({ task_desc: JSON.stringify({ task_name: name, var_num: v, jar_path: "" }), targe: "" });
    spawnSync("mkdir", ["-p", data]);
    writeFileSync(join(data, "train.jsonl"), [row("boil", 2), row("melt", 3)].join("\n") + "\n");
    writeFileSync(join(data, "test.jsonl"), row("freeze", 5) + "\n");
    writeFileSync(join(data, "dataset_dict.json"), JSON.stringify({ citation: "", description: "Custom dataset", splits: {} }));
    const src = join(dir, "dir.tcod");
    writeFileSync(src, `import { opd } from "std/loss"
import { scienceworld } from "std/envs"
import { raw_format } from "std/agent"
model teacher { path: "oracle"  serve: embedded(smoothing: 0.1) }
model student { path: "loglinear"  serve: embedded(features: 1024) }
curriculum sw_dir {
  teacher: teacher
  student: student
  env: scienceworld(split: "train", task_file: ${JSON.stringify(data)}, max_turns: 2 turns, pool: 1, agent: raw_format())
  steps: 1
  batch: 1 tasks × 1 rollout
  loss: opd(coef: 1.0)
  optimizer: adam(lr: 0.05, loss_fn: "importance_sampling")
  staleness: 0 steps
  eval: evaluate(every: 1 steps, env: scienceworld(split: "test", task_file: ${JSON.stringify(data)}, max_turns: 2 turns, pool: 1, agent: raw_format()), tasks: 1 tasks, temperature: 0.4)
}
`);
    const run = join(dir, "run");
    const r = spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", src, "--out", run, "--quiet", "--no-tensorboard"], { cwd: ROOT, encoding: "utf8" });
    expect(r.stderr).not.toContain("EISDIR");
    expect(r.status, r.stderr).toBe(0);
    const rows = readMetrics(join(run, "metrics.jsonl")) as unknown as { kind: string; tasks?: number }[];
    expect(rows.filter((x) => x.kind === "train")).toHaveLength(1);
    expect(rows.some((x) => x.kind === "eval")).toBe(true);
  }, 600_000);
});
