/**
 * The generated plugin inside Trinity-RFT's own classes (trinity.common.experience.Experience, the
 * EXPERIENCE_OPERATORS and ADVANTAGE_FN registries) gives `tcod run`'s numbers when Trinity hands it
 * a step split the way its buffer does: the experience operator sees the whole explore step, the
 * advantage function sees train batches cut from the step in completion order (fragments of GRPO
 * groups and of episodes). Expected values are tcod's runtime signals over the whole step.
 *
 * Python: $TRINITY_PYTHON, else .venv-trinity/bin/python (test/trinity/ci-install.sh), with torch.
 * Skipped only when Trinity/torch are absent and CI is not set.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { evalRef } from "../../plan/expr.js";
import { nodeOf } from "../../plan/schema.js";
import { layoutFromRows } from "../../runtime/signals/layout.js";
import { opdAdvantages } from "../../runtime/signals/opd.js";
import { grpoAdvantages } from "../../runtime/signals/grpo.js";
import { blendAdvantages, weightByTurn } from "../../runtime/signals/mixture.js";
import { tdurWeights } from "../../runtime/signals/tdur.js";
import { exportTrinity } from "../../targets/trinity/export.js";
import { rng } from "../helpers/prng.js";
import { atodPlan } from "./plans.js";

const PY = process.env.TRINITY_PYTHON ?? (existsSync(".venv-trinity/bin/python") ? ".venv-trinity/bin/python" : "python3");
const has = spawnSync(PY, ["-c", "import torch, trinity.common.experience, trinity.buffer.operators"], { encoding: "utf8" }).status === 0;
const run = has || process.env.CI ? it : it.skip;

const same = (a: number, b: number) => Math.abs(a - b) <= 1e-5 * Math.max(1, Math.abs(b)); // float32 tensors

function writePlugin(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), "tcod-plugin-"));
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  }
  return dir;
}

describe("plugin inside Trinity-RFT's classes", () => {
  run("ATOD (κ·OPD + ρ·GRPO, T-DUR turn weights) on a step split into train batches equals tcod run's whole-step advantages", () => {
    const plan = atodPlan();
    const e = exportTrinity(plan, { target: "tcod-fork" });
    const cfg = e.config as { data_processor?: { experience_pipeline: { operators: { name: string }[] } } };
    const spec = JSON.parse(e.plugin!["tcod_runtime/spec.json"]!) as { advantage: { operator: string } };
    expect(cfg.data_processor?.experience_pipeline.operators.map((o) => o.name)).toEqual([spec.advantage.operator]);
    const dir = writePlugin(e.plugin!);

    const r = rng(21);
    // 4 tasks × 3 rollouts, 1–5 turns each (b2f-like turn numbers start at a prefix p), 1–6 tokens per turn.
    type Row = { task: number; run: number; turn: number; reward: number; logp_student: number[]; logp_teacher: number[]; mask: number[]; episode: number };
    const rows: Row[] = [];
    const rewards: number[] = [];
    const groupOfEpisode: number[] = [];
    for (let task = 0; task < 4; task++) {
      for (let runIdx = 0; runIdx < 3; runIdx++) {
        const episode = task * 3 + runIdx;
        const reward = [0, 1, 0.5, 1, 0][Math.floor(r() * 5)]!;
        rewards.push(reward);
        groupOfEpisode.push(task);
        const p = Math.floor(r() * 3);
        for (let k = 0, n = 1 + Math.floor(r() * 5); k < n; k++) {
          const len = 1 + Math.floor(r() * 6);
          const mask = Array.from({ length: len }, (_, j) => (j === len - 1 && len > 2 && r() < 0.3 ? 0 : 1));
          rows.push({
            task, run: runIdx, turn: p + k, reward, episode, mask,
            logp_student: Array.from({ length: len }, () => Math.fround(-3 * r())),
            logp_teacher: Array.from({ length: len }, () => Math.fround(-3 * r())),
          });
        }
      }
    }
    const step = 40;
    const sizes = [5, 16];
    const req = { step, train_batch_sizes: sizes, seed: 3, rows: rows.map(({ episode: _e, ...x }) => x) };
    const res = spawnSync(PY, ["test/trinity/trinity_classes.py", "split", dir], { input: JSON.stringify(req), encoding: "utf8", maxBuffer: 1 << 26 });
    expect(res.stderr).not.toMatch(/Traceback/);
    expect(res.status).toBe(0);
    const results = JSON.parse(res.stdout) as { advantages: number[][]; fragment_advantages: number[][] }[];
    expect(results).toHaveLength(sizes.length);
    for (const [k, trainBatch] of sizes.entries()) {
      const got = results[k]!;

      // tcod run: the whole step is one learner batch (runtime/engine.ts), rows of an episode in turn order.
      const layout = layoutFromRows(rows.map((x) => ({ mask: x.mask })));
      const flat = (k: "logp_student" | "logp_teacher") => Float64Array.from(rows.flatMap((x) => x[k]));
      const vars = { step, total_steps: 250 };
      const kappa = evalRef(nodeOf(plan, "Advantage")!.params.terms[0]!.coef, plan.exprs, vars);
      const rho = evalRef({ expr: "rho" }, plan.exprs, vars);
      const episodeOfRow = Int32Array.from(rows.map((x) => x.episode));
      const opd = opdAdvantages(layout, flat("logp_student"), flat("logp_teacher"));
      const grpo = grpoAdvantages(layout, Float64Array.from(rewards), Int32Array.from(groupOfEpisode), episodeOfRow);
      const stat = (x: Row, f: (s: number, t: number) => number) => {
        let s = 0, n = 0;
        x.mask.forEach((m, j) => { if (m) { s += f(x.logp_student[j]!, x.logp_teacher[j]!); n++; } });
        return s / n;
      };
      const D = Float64Array.from(rows.map((x) => stat(x, (s, t) => s - t)));
      const U = Float64Array.from(rows.map((x) => stat(x, (s) => -s)));
      const w = tdurWeights(D, U, episodeOfRow);
      const tokenW = Float64Array.from(rows.flatMap((x, i) => x.mask.map(() => w[i]!)));
      const want = weightByTurn(blendAdvantages(opd, grpo, kappa, rho), tokenW);
      const wantRows = rows.map((_, i) => Array.from(want.subarray(layout.rowStart[i]!, layout.rowStart[i + 1]!)));

      wantRows.forEach((row, i) => row.forEach((v, j) => expect(same(got.advantages[i]![j]!, v), `train batch ${trainBatch}, row ${i} token ${j}: ${got.advantages[i]![j]} vs ${v}`).toBe(true)));
      // The test can fail: computing the formula on each train batch alone (the old plugin) gives other numbers.
      const off = wantRows.some((row, i) => row.some((v, j) => !same(got.fragment_advantages[i]![j]!, v)));
      expect(off).toBe(true);
    }
  }, 300_000);
});
