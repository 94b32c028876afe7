/**
 * Trinity-RFT's importance_sampling policy loss (trinity/algorithm/policy_loss_fn/
 * importance_sampling_policy_loss.py, which an exported plan trains with) against the shared vectors
 * whose clamp is its fixed ±20 (test/vectors/importance-sampling.json; the TypeScript signals and
 * the worker are checked against the same file). Token-mean aggregation: the loss is the mean of the
 * per-token losses and each token's gradient the per-token gradient / n (Trinity divides by the mask's
 * sum + 1e-8, hence the relative tolerance of 1e-7).
 * Python: $TRINITY_PYTHON, else .venv-trinity/bin/python (test/trinity/ci-install.sh).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_LOG_RATIO_CLAMP } from "../../plan/defaults.js";

const PY = process.env.TRINITY_PYTHON ?? (existsSync(".venv-trinity/bin/python") ? ".venv-trinity/bin/python" : "python3");
const has = spawnSync(PY, ["-c", "import torch, trinity.algorithm.policy_loss_fn"], { encoding: "utf8" }).status === 0;
const file = "test/vectors/importance-sampling.json";
const vectors = JSON.parse(readFileSync(file, "utf8")) as { cases: { name: string; clamp: number | null; loss: number[]; grad: number[] }[] };

describe.skipIf(!has)("Trinity-RFT importance_sampling loss on the shared vectors", () => {
  it("equals the vectors whose clamp is Trinity's ±20 (the plan's default Update.logRatioClamp)", () => {
    expect(DEFAULT_LOG_RATIO_CLAMP).toBe(20);
    const r = spawnSync(PY, ["test/trinity/is_vectors.py", file], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const got = JSON.parse(r.stdout) as Record<string, { loss: number; grad: number[] }>;
    const cases = vectors.cases.filter((c) => c.clamp === 20);
    expect(Object.keys(got).sort()).toEqual(cases.map((c) => c.name).sort());
    for (const c of cases) {
      const n = c.loss.length;
      const mean = c.loss.reduce((a, b) => a + b, 0) / n;
      const near = (a: number, b: number) => expect(Math.abs(a - b), `${a} vs ${b} in "${c.name}"`).toBeLessThanOrEqual(1e-7 * Math.max(1, Math.abs(b)));
      near(got[c.name]!.loss, mean);
      got[c.name]!.grad.forEach((g, i) => near(g, c.grad[i]! / n));
    }
  });
});
