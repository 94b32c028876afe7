/**
 * Per-environment episode semantics (plan/env-semantics.ts) in tcod's runtime, on the shared episode
 * vectors (test/vectors/episodes.json), which test/trinity/py_parity.py checks on the Trinity
 * plugin's core as well.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";
import type { AgentFormat } from "../../plan/schema.js";
import { EnvConfigError } from "../../runtime/envs/env.js";
import { checkAction, semanticsOf } from "../../plan/env-semantics.js";
import type { EnvAdapter, Observation, StepResult, TaskRef } from "../../runtime/envs/env.js";
import { runEpisode, type EpisodeSpec } from "../../runtime/rollout.js";
import { parseAction } from "../../runtime/agent-format.js";
import { CharTokenizer, ScriptedStudent } from "./doubles.js";
import { TAGS_FORMAT } from "./plans.js";

interface Compact { actionTemplates?: string[]; objects?: string[] }
interface Transition extends Compact { observation: string; reward: number; done: boolean; admissible: string[] }
interface Case {
  name: string; kind: string; agent?: string;
  first: { task: string; observation: string; admissible: string[] } & Compact;
  transitions: Record<string, Transition>;
  responses: string[]; student_turns: number; capped: boolean; plan_truncated_reward: number;
  expected: { reward: number; done: boolean; truncated: boolean; invalid_actions: number; env_actions: string[]; feedback?: string[]; shown?: string[]; prompts?: string[] };
}
interface Parse { agent: string; response: string; action: string | null }
const VECTORS = JSON.parse(readFileSync("test/vectors/episodes.json", "utf8")) as { agents: Record<string, AgentFormat>; cases: Case[]; parses: Parse[] };
const CASES = VECTORS.cases;

/** The compact action list of a scripted result, where the case gives one. */
const compactOf = (x: Compact): Compact => (x.actionTemplates && x.objects ? { actionTemplates: x.actionTemplates, objects: x.objects } : {});

/** A CharTokenizer that records the text of every user message it renders. */
class RecordingTokenizer extends CharTokenizer {
  readonly users: string[] = [];
  override renderUser(text: string): number[] { this.users.push(text); return super.renderUser(text); }
}

class ScriptedEnv implements EnvAdapter {
  readonly actions: string[] = [];
  constructor(readonly kind: string, private readonly c: Case) {}
  async tasks(split: string): Promise<TaskRef[]> { return [{ id: "t", split }]; }
  async reset(): Promise<Observation> { return { task: this.c.first.task, text: this.c.first.observation, admissible: this.c.first.admissible, ...compactOf(this.c.first) }; }
  async step(action: string): Promise<StepResult> {
    this.actions.push(action);
    const t = this.c.transitions[action];
    if (!t) throw new Error(`scripted env: no transition for '${action}'`);
    return { observation: t.observation, reward: t.reward, done: t.done, won: t.done && t.reward === 1, admissible: t.admissible, ...compactOf(t) };
  }
  async close(): Promise<void> {}
}

describe("episode semantics per env (shared vectors)", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const env = new ScriptedEnv(c.kind, c);
    let k = 0;
    const student = new ScriptedStudent(() => c.responses[k++] ?? "<action>none</action>");
    const tok = new RecordingTokenizer();
    const spec: EpisodeSpec = {
      index: 0, task: { id: "t", split: "train" }, group: 0, prefixActions: [], studentTurns: c.student_turns, capped: c.capped,
      truncatedReward: c.plan_truncated_reward, temperature: 1, seed: 1, horizon: c.student_turns, expertLength: 0,
    };
    const format = c.agent ? VECTORS.agents[c.agent]! : TAGS_FORMAT;
    const r = await runEpisode(env, async (req) => (await student.sample([req]))[0]!, format, tok, spec, 0);
    expect(r.reward).toBeCloseTo(c.expected.reward, 12);
    expect({ done: r.done, truncated: r.truncated, invalid: r.invalidActions }).toEqual({ done: c.expected.done, truncated: c.expected.truncated, invalid: c.expected.invalid_actions });
    expect(env.actions).toEqual(c.expected.env_actions);
    // Each feedback message is the observation of the prompt that follows it.
    const prompts = r.turns.map((t) => tok.decode(t.prompt));
    for (const f of c.expected.feedback ?? []) expect(prompts.some((p) => p.includes(f)), f).toBe(true);
    for (const f of c.expected.shown ?? []) expect(tok.users.some((p) => p.includes(f)), f).toBe(true);
    // The exact user message of every student turn, where the case gives them.
    if (c.expected.prompts) expect(tok.users).toEqual(c.expected.prompts);
  });

  it.each(VECTORS.parses.map((p) => [`${p.agent}: ${JSON.stringify(p.response)}`, p] as const))("parses %s", (_name, p) => {
    expect(parseAction(VECTORS.agents[p.agent]!, p.response)).toBe(p.action);
  });

  it("the vectors' agent formats are the stdlib's: scienceworld()'s default agent is scienceworld_format(), the official prompt", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-sw-agent-"));
    const file = join(dir, "sw.tcod");
    writeFileSync(file, `import { scienceworld } from "std/envs"
model teacher { path: "/t" }
model student { path: "/s" }
curriculum sw { teacher: teacher  student: student  env: scienceworld(split: "train", task_file: "/x.jsonl")  steps: 3 }
`);
    const r = compileFile(file);
    expect(r.diagnostics).toEqual([]);
    const agent = r.plans[0]!.plan.resources.agents.default;
    expect(agent).toEqual(VECTORS.agents.scienceworld_format);
    // alfworld()'s default, alfworld_format(), and webshop()'s, webshop_format().
    for (const [env, name] of [["alfworld", "alfworld_format"], ["webshop", "webshop_format"]] as const) {
      writeFileSync(file, `import { ${env} } from "std/envs"
model teacher { path: "/t" }
model student { path: "/s" }
curriculum e { teacher: teacher  student: student  env: ${env}(split: "train", task_file: "/x.jsonl")  steps: 3 }
`);
      expect(compileFile(file).plans[0]!.plan.resources.agents.default, env).toEqual(VECTORS.agents[name]);
    }
    // The semantics table names the format each env's official prompt uses.
    expect(semanticsOf("scienceworld")).toMatchObject({ admissible: "templates_and_objects", compactActions: true });
    expect(semanticsOf("alfworld")).toMatchObject({ admissible: "lines", compactActions: false });
    expect(semanticsOf("webshop")).toMatchObject({ admissible: "unquoted_lines", compactActions: false });
  });

  it("an env that supplies no compact action list is refused before the first turn (TC7003), not prompted with an empty list", async () => {
    const c = CASES.find((x) => x.agent === "scienceworld_format")!;
    const bare: Case = { ...c, first: { task: c.first.task, observation: c.first.observation, admissible: c.first.admissible } };
    const spec: EpisodeSpec = {
      index: 0, task: { id: "t", split: "train" }, group: 0, prefixActions: [], studentTurns: 1, capped: false,
      truncatedReward: 0, temperature: 1, seed: 1, horizon: 1, expertLength: 0,
    };
    const student = new ScriptedStudent(() => "<action>look around</action>");
    const err = await runEpisode(new ScriptedEnv("sciworld", bare), async (req) => (await student.sample([req]))[0]!, VECTORS.agents.scienceworld_format!, new CharTokenizer(), spec, 0).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EnvConfigError);
    expect((err as EnvConfigError).code).toBe("TC7003");
    expect((err as Error).message).toMatch(/compact action list.*env 'sciworld'/);
  });

  it("defaults follow the official workflows; unknown envs keep tcod's old behaviour", () => {
    expect(semanticsOf("sciworld")).toBe(semanticsOf("scienceworld"));
    expect(semanticsOf("texthouse")).toMatchObject({ truncation: { kind: "fixed" }, invalidAction: { kind: "step" }, simplification: "" });
    expect(checkAction(semanticsOf("texthouse"), "anything", [])).toBeNull();
    for (const k of ["alfworld", "webshop", "scienceworld"]) expect(semanticsOf(k).sources.every((s) => s.startsWith("github.com/"))).toBe(true);
  });
});
