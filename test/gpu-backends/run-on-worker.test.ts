/**
 * `tcod run` on a real tcod worker process (CPU, tiny models): the GPU examples' pipeline in
 * miniature. A teacher is trained by SFT on texthouse oracle demonstrations with the worker the run
 * starts itself (RUN_DIR/vocab.txt for its word-level tokenizer), then an OPD student is distilled
 * from that checkpoint with the teacher held beside it in one worker process. Skipped, with the
 * reason, only outside CI when no python with torch + transformers + peft is found (CI installs
 * worker/.venv with worker/ci-install.sh); in CI a missing worker is a failure.
 */
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";
import { runPlan } from "../../runtime/engine.js";
import { readMetrics } from "../../runtime/metrics.js";
import { workerMissing } from "../helpers/worker.js";
import { composeRuntime } from "../../bin/compose.js";
import { freePort, portFree } from "../helpers/ports.js";

composeRuntime(); // the backends and envs bin/ registers for `tcod run`

const missing = workerMissing("the tcod-run-on-worker test");


function plan(file: string, sets: string[]) {
  const r = compileFile(file, { overrides: sets });
  const errors = r.diagnostics.filter((d) => d.severity === "error");
  expect(errors.map((d) => d.message)).toEqual([]);
  return r.plans[0]!.plan;
}
const small = (cur: string, steps: number) => [
  `${cur}.steps=${steps}`, `${cur}.batch=2 tasks × 1 rollout`,
  `${cur}.eval=evaluate(every: ${steps} steps, env: texthouse(split: "valid_seen", max_turns: 3 turns), tasks: 2 tasks)`,
  `${cur}.max_turns=4 turns`,
];

describe.skipIf(missing !== undefined)("tcod run on the tcod worker (CPU, tiny models)", () => {
  it("SFT a teacher from scratch, then an OPD student against it; the run starts and stops its workers", async () => {
    process.env.TCOD_WORKER_ARGS = "--device cpu";
    const root = mkdtempSync(join(tmpdir(), "tcod-gpu-backends-"));
    const logs: string[] = [];
    const origWrite = process.stderr.write.bind(process.stderr);
    process.stderr.write = ((c: string | Uint8Array) => { logs.push(String(c)); return true; }) as typeof process.stderr.write;
    try {
      // 1. the teacher: SFT on oracle demos (the run's student is the model being trained)
      const p1 = await freePort();
      const teacherRun = join(root, "teacher");
      const sft = plan("examples/texthouse/gpu/sft-teacher.tcod", [`config="config:tiny"`, `url="http://127.0.0.1:${p1}"`, ...small("texthouse_sft_teacher", 2)]);
      const r1 = await runPlan(sft, { runDir: teacherRun });
      expect(r1.status).toBe("completed");
      const rows1 = readMetrics(join(teacherRun, "metrics.jsonl")).filter((r) => r.kind === "train");
      expect(rows1).toHaveLength(2);
      for (const r of rows1) {
        if (r.kind !== "train") continue;
        expect(r.coefs).toMatchObject({ sft: 1 });
        expect(Number.isFinite(r.loss) && r.loss !== 0).toBe(true); // demonstrations carry loss
        // Demonstrations train unscored (old_logprobs null, ratio 1): their NLL comes from the update.
        expect(r.demoNll).toBeGreaterThan(0);
      }
      const waits = readFileSync(join(teacherRun, "backend-wait.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { calls: { score: number } });
      // One /score call a step (cumulative counts): the trainer's re-score of the student's own rows;
      // the demonstrations add none (before: their own call, and they were in the re-score).
      expect(waits.map((w) => w.calls.score)).toEqual([1, 2]);
      const vocab = readFileSync(join(teacherRun, "vocab.txt"), "utf8").split("\n");
      for (const w of ["go", "to", "take", "from", "task", ":", "observation", "1"]) expect(vocab).toContain(w);
      expect(existsSync(join(teacherRun, "checkpoint", "student", "config.json"))).toBe(true); // full weights: loadable as --teacher
      expect(readFileSync(join(teacherRun, "backend-wait.jsonl"), "utf8").trim().split("\n")).toHaveLength(2);
      expect(await portFree(p1)).toBe(true); // the worker was stopped

      // 2. OPD: the student from a config, the SFT checkpoint as the teacher beside it in one worker
      const p2 = await freePort();
      const opdRun = join(root, "opd");
      const opd = plan("examples/texthouse/gpu/opd.tcod", [`student_config="config:tiny"`, `teacher_dir="${join(teacherRun, "checkpoint", "student")}"`,
        `url="http://127.0.0.1:${p2}"`, ...small("texthouse_gpu_opd", 2)]);
      // The worker records each request's size (TCOD_WORKER_TRACE, sizes only): the teacher must score
      // one sequence per episode, not one per turn (the wrapper that meters the backend once dropped
      // the teacher's scoresSequences, and every turn's prompt was scored again).
      const tracePath = join(root, "opd-trace.jsonl");
      process.env.TCOD_WORKER_TRACE = tracePath;
      process.env.TCOD_WORKER_TRACE_SEQUENCES = "0";
      const r2 = await runPlan(opd, { runDir: opdRun }).finally(() => { delete process.env.TCOD_WORKER_TRACE; delete process.env.TCOD_WORKER_TRACE_SEQUENCES; });
      expect(r2.status).toBe("completed");
      const rows2 = readMetrics(join(opdRun, "metrics.jsonl")).filter((r) => r.kind === "train");
      expect(rows2).toHaveLength(2);
      const teacherScores = readFileSync(tracePath, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { op: string; model?: string; sequences?: { rows: number } })
        .filter((l) => l.op === "score" && l.model === "teacher");
      const episodes = rows2.reduce((n, r) => n + (r.kind === "train" ? r.episodes : 0), 0);
      const turns = rows2.reduce((n, r) => n + (r.kind === "train" ? r.turns : 0), 0);
      expect(episodes).toBe(4);
      expect(turns).toBeGreaterThan(episodes); // so per-turn scoring would show
      // The first is the start-up probe's one-sequence score; then the run's: one row per episode.
      expect(teacherScores[0]!.sequences!.rows).toBe(1);
      expect(teacherScores.slice(1).reduce((n, l) => n + l.sequences!.rows, 0)).toBe(episodes);
      for (const r of rows2) {
        if (r.kind !== "train") continue;
        expect(r.policyVersion).toBeGreaterThan(0);
        expect(Number.isFinite(r.kl.mean)).toBe(true);
        expect(Math.abs(r.kl.mean)).toBeGreaterThan(1e-6); // a different teacher: the OPD signal is not zero
        expect(r.tokens.response).toBeGreaterThan(0);
      }
      const marks = readFileSync(join(opdRun, "backend-wait.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { busyMs: number; atMs: number; tokens: Record<string, number> });
      expect(marks).toHaveLength(2);
      expect(marks[1]!.busyMs).toBeLessThanOrEqual(marks[1]!.atMs);
      expect(marks[1]!.tokens.teacher).toBeGreaterThan(0);
      expect(await portFree(p2)).toBe(true);
      const log = logs.join("");
      expect(log).toMatch(new RegExp(`--teacher ${join(teacherRun, "checkpoint", "student").replace(/[/.]/g, "\\$&")}`));
      expect(log).toMatch(/worker http:\/\/127\.0\.0\.1:\d+: healthy · model config:tiny served/);
      expect(log).toMatch(/tokenizer: local word-level mirror of .* \(encode yes, decode yes, chat yes\)/);

      // 3. a student started from a checkpoint (the OPD run's), as the study's warm students are: its
      // word tokenizer is rebuilt from the word list saved beside the weights, and mirrored here. It
      // distils with the topk estimator: its advantages are 0, so the loss is the worker's exact-KL
      // term alone (positive where the student differs from the teacher's top-k distribution).
      expect(existsSync(join(opdRun, "checkpoint", "student", "tcod_word_tokenizer.json"))).toBe(true);
      const p3 = await freePort();
      const warmRun = join(root, "warm");
      const warm = plan("examples/texthouse/gpu/opd.tcod", [`student_config="${join(opdRun, "checkpoint", "student")}"`, `teacher_dir="${join(teacherRun, "checkpoint", "student")}"`,
        `url="http://127.0.0.1:${p3}"`, `estimator="topk"`, ...small("texthouse_gpu_opd", 1)]);
      logs.length = 0;
      expect((await runPlan(warm, { runDir: warmRun })).status).toBe("completed");
      const rows3 = readMetrics(join(warmRun, "metrics.jsonl")).filter((r) => r.kind === "train");
      expect(rows3).toHaveLength(1);
      expect(rows3[0]!.kind === "train" && rows3[0]!.loss).toBeGreaterThan(1e-6);
      expect(logs.join("")).toMatch(/tokenizer: local word-level mirror of .* \(encode yes, decode yes, chat yes\)/);
      expect(await portFree(p3)).toBe(true);
    } finally {
      process.stderr.write = origWrite;
      delete process.env.TCOD_WORKER_ARGS;
    }
  }, 600_000);
});
