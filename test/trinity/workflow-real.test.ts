/**
 * The generated workflow module run for real: Trinity-RFT's own Task, Workflow base class and
 * Experience type, a tiny randomly initialised transformers model (built locally, no download) in
 * place of Trinity's model wrapper, and the real ScienceWorld (test/trinity/workflow_real.py). So the
 * plugin's torch code paths run — tensors from the model, teacher logprobs sliced at the prompt,
 * experiences Trinity's trainer reads — not only its pure core.
 *
 * Needs $TRINITY_PYTHON (test/trinity/ci-install.sh: Trinity-RFT, torch, transformers, scienceworld)
 * and Java. Skipped only when those are absent and CI is not set.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect } from "vitest";
import type { AgentFormat } from "../../plan/schema.js";
import { renderUserMessage } from "../../runtime/agent-format.js";
import { createScienceWorld, scienceWorldTaskFile } from "../../runtime/envs/scienceworld/index.js";
import { exportTrinity } from "../../targets/trinity/export.js";
import { compileOne, itWithTrinity, runDriver, TRINITY_PY as PY, writePlugin } from "./real.js";

const run = itWithTrinity(["torch", "transformers", "scienceworld", "trinity.common.workflows"], () => spawnSync("java", ["-version"]).status === 0);

const ROW = { task_desc: JSON.stringify({ task_name: "find-animal", var_num: 0, jar_path: "" }), targe: "" };

function plugin(name: string, pacing: string): { dir: string; name: string; agent: AgentFormat; tasks: string } {
  const dir = mkdtempSync(join(tmpdir(), "tcod-wf-real-"));
  const tasks = join(dir, "train.jsonl");
  writeFileSync(tasks, JSON.stringify(ROW) + "\n");
  const src = join(dir, "c.tcod");
  writeFileSync(src, `import { opd } from "std/loss"
import { f2b, b2f } from "std/tcod"
import { scienceworld } from "std/envs"
model teacher { path: "/path/to/teacher" }
model student { path: "/path/to/student" }
curriculum ${name} {
  teacher:     teacher
  student:     student
  env:         scienceworld(split: "train", task_file: ${JSON.stringify(tasks)}, max_turns: 4 turns)
  steps:       10
  train_batch: 64 turns
  ${pacing}
}
`);
  const plan = compileOne(src);
  const e = exportTrinity(plan, { target: "upstream" });
  return { dir: writePlugin(e.plugin!, join(dir, "plugin")), name: e.workflow, agent: plan.resources.agents.default!, tasks };
}

interface Exp { type: string; tokens: number; prompt_length: number; logprobs: number[]; teacher_logprobs: number[] | null; step: number; reward: number; metrics: Record<string, number>; response: string }
interface RunOut { workflow_class: string; experiences: Exp[]; user_messages: string[] }

/** Every plugin's runs in one Python process (Trinity's import and the models are built once). */
function play(plugins: { dir: string; runs: object[] }[]): RunOut[][] {
  const req = { seed: 7, sampled_tokens: 2, actions: ["look around", "open door to kitchen", "go to kitchen", "look around"], plugins };
  return JSON.parse(runDriver("workflow_real.py", req).trim().split("\n").pop()!) as RunOut[][];
}

function checkTurns(out: RunOut, firstStep: number): void {
  expect(out.workflow_class).toBe("trinity.common.workflows.workflow.Workflow");
  out.experiences.forEach((e, i) => {
    expect(e.type).toBe("trinity.common.experience.Experience");
    expect(e.step).toBe(firstStep + i);
    expect(e.logprobs.length).toBe(e.tokens - e.prompt_length);
    expect(e.teacher_logprobs).not.toBeNull();
    expect(e.teacher_logprobs!.length).toBe(e.logprobs.length);
    expect(e.logprobs.every((x) => Number.isFinite(x) && x <= 0)).toBe(true);
    // Two different random models: the teacher's logprobs are not the student's.
    expect(e.teacher_logprobs!.some((t, k) => Math.abs(t - e.logprobs[k]!) > 1e-4)).toBe(true);
    expect(e.response).toMatch(/<action>.*<\/action>$/s);
  });
}

describe("the generated workflow inside Trinity-RFT's classes, on the real ScienceWorld, with a tiny transformers model", () => {
  run("f2b and b2f episodes become Trinity Experiences scored by the teacher; pacing, replay, semantics and the official ScienceWorld prompt as tcod runs them", async () => {
    const f2b = plugin("sw_f2b", "horizon: f2b(every: 1 steps, max: 4 turns)");
    const b2f = plugin("sw_b2f", "prefix: b2f(every: 1 steps)");
    const [[train, evaluation], [replay]] = play([
      { dir: f2b.dir, runs: [
        { raw_task: ROW, batch_id: 2, workflow_args: { max_env_steps: 4 } },
        { raw_task: ROW, batch_id: "2/eval", is_eval: true, workflow_args: { max_env_steps: 2 } },
      ] },
      { dir: b2f.dir, runs: [{ raw_task: { ...ROW, actions: ["look around", "open door to kitchen"] }, batch_id: 0, workflow_args: { max_env_steps: 4 } }] },
    ]) as [[RunOut, RunOut], [RunOut]];

    // f2b at step 2: three student turns (min(1 + 2, 4)), each a scored Experience.
    checkTurns(train, 0);
    expect(train.experiences).toHaveLength(3);
    expect(train.experiences[0]!.metrics).toMatchObject({ tcod_cap: 3, tcod_truncated: 1, teacher_env_rounds: 0, student_env_rounds: 3, env_done: 0 });
    // ScienceWorld semantics: a capped episode keeps best_score / 100 (0 ≤ r < 1 here).
    expect(train.experiences.every((e) => e.reward >= 0 && e.reward < 1)).toBe(true);
    // The env was stepped: the third prompt shows where the student's actions led.
    expect(train.user_messages).toHaveLength(3);
    expect(train.user_messages[2]).toContain("kitchen");
    // Evaluation: its full max_env_steps, no cap, no teacher scoring.
    expect(evaluation.experiences).toHaveLength(2);
    expect(evaluation.experiences.every((e) => e.teacher_logprobs === null)).toBe(true);

    // b2f at step 0: the row's 2 expert actions give p = 1 replayed turn, then Hmax − p = 3 student
    // turns numbered from p; the replayed turn is history (shown in the prompt), not chat memory.
    checkTurns(replay, 1);
    expect(replay.experiences).toHaveLength(3);
    expect(replay.experiences[0]!.metrics).toMatchObject({ teacher_env_rounds: 1, student_env_rounds: 3 });
    expect(replay.user_messages[0]).toContain("look around");

    // The prompt is the official ScienceWorld one (std/agent scienceworld_format, scienceworld()'s
    // default): the action templates without "help" and the objects in view, not every valid action.
    const listOf = (msg: string, label: string): string[] => {
      const m = new RegExp(`\\n${label}: \\[(.*)\\]\\n`).exec(msg);
      expect(m, `${label} in ${msg}`).not.toBeNull();
      return [...m![1]!.matchAll(/'([^']*)'/g)].map((x) => x[1]!);
    };
    const first = train.user_messages[0]!;
    expect(first.startsWith("\nYour ScienceWorld task is: Your task is to find a(n) animal.")).toBe(true);
    expect(listOf(first, "Available action commands")).toEqual(expect.arrayContaining(["open OBJ", "focus on OBJ", "look around"]));
    expect(listOf(first, "Available action commands")).not.toContain("help");
    expect(listOf(first, "Available objects you can interact with")).toEqual(expect.arrayContaining(["door to kitchen", "hallway"]));
    expect(first).not.toContain("open door to kitchen"); // a valid action, not listed as such
    expect(train.user_messages[2]).toContain("Prior to this step, you have already taken 2 step(s).");

    // Both sides render the same first prompt: tcod run's ScienceWorld bridge (the same package, the
    // "easy" simplification of the env semantics) through runtime/agent-format.ts.
    const env = createScienceWorld({ simplification: "easy", python: PY, fixed: scienceWorldTaskFile(f2b.tasks, "train") });
    try {
      const obs = await env.reset({ id: "find-animal:0", split: "train" });
      expect(renderUserMessage(f2b.agent, { task: obs.task, history: [], observation: obs.text, admissible: obs.admissible, actionTemplates: obs.actionTemplates!, objects: obs.objects! })).toBe(first);
    } finally {
      await env.close();
    }
  }, 300_000);
});
