/**
 * The run-time half of TC4501: before the first step, a b2f run on an env whose official data has no
 * expert actions (WebShop) warns when none of the training split's tasks has "actions", and stays
 * quiet when the rows add them or the env has its own expert path (ScienceWorld's gold path).
 */
import { describe, expect, it } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileFile } from "../../compiler/index.js";
import { EnvPool } from "../../runtime/env-pool.js";
import type { EnvAdapter, TaskRef } from "../../runtime/envs/env.js";
import { preflightWarnings } from "../../runtime/preflight.js";
import type { Plan } from "../../plan/schema.js";

function plan(env: string, prefix = "prefix: b2f(every: 4 steps)"): Plan {
  const file = join(mkdtempSync(join(tmpdir(), "tcod-preflight-")), "c.tcod");
  writeFileSync(file, `import { b2f } from "std/tcod"
import { webshop, scienceworld } from "std/envs"
model teacher { path: "t" }
model student { path: "s" }
curriculum c {
  teacher: teacher
  student: student
  env: ${env}
  steps: 20
  ${prefix}
}
`);
  const r = compileFile(file);
  expect(r.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return r.plans[0]!.plan;
}

function pools(p: Plan, tasks: TaskRef[]): Map<string, EnvPool> {
  const env = { tasks: async (split: string) => tasks.map((t) => ({ ...t, split })) } as unknown as EnvAdapter;
  return new Map(Object.keys(p.resources.envs).map((id) => [id, new EnvPool(id, 1, () => env)]));
}

describe("preflight: b2f without expert actions", () => {
  it("WebShop rows without actions: one TC4501 warning naming the split and the task file", async () => {
    const p = plan(`webshop(split: "train", task_file: "/data/webshop_data")`);
    const w = await preflightWarnings(p, pools(p, [{ id: "0", split: "train" }, { id: "1", split: "train" }]));
    expect(w).toEqual([`TC4501: b2f on webshop: none of the 2 tasks of split "train" (/data/webshop_data) has expert "actions", so no prefix is replayed and every episode plays as plain OPD`]);
  });

  it("quiet when a row has actions, without a prefix, and on envs with their own expert path", async () => {
    const p = plan(`webshop(split: "train", task_file: "/data/webshop_data")`);
    expect(await preflightWarnings(p, pools(p, [{ id: "0", split: "train" }, { id: "1", split: "train", actions: ["search[shoes]"] }]))).toEqual([]);
    const opd = plan(`webshop(split: "train", task_file: "/data/webshop_data")`, "");
    expect(await preflightWarnings(opd, pools(opd, [{ id: "0", split: "train" }]))).toEqual([]);
    const sw = plan(`scienceworld(split: "train", task_file: "/data/sciworld_data")`);
    expect(await preflightWarnings(sw, pools(sw, [{ id: "boil:0", split: "train" }]))).toEqual([]);
  });
});
