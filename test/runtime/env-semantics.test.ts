/**
 * Per-environment episode semantics (plan/env-semantics.ts) in tcod's runtime, on the shared episode
 * vectors (test/vectors/episodes.json), which test/trinity/py_parity.py checks on the Trinity
 * plugin's core as well.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { checkAction, semanticsOf } from "../../plan/env-semantics.js";
import type { EnvAdapter, Observation, StepResult, TaskRef } from "../../runtime/envs/env.js";
import { runEpisode, type EpisodeSpec } from "../../runtime/rollout.js";
import { CharTokenizer, ScriptedStudent } from "./doubles.js";
import { TAGS_FORMAT } from "./plans.js";

interface Transition { observation: string; reward: number; done: boolean; admissible: string[] }
interface Case {
  name: string; kind: string;
  first: { task: string; observation: string; admissible: string[] };
  transitions: Record<string, Transition>;
  responses: string[]; student_turns: number; capped: boolean; plan_truncated_reward: number;
  expected: { reward: number; done: boolean; truncated: boolean; invalid_actions: number; env_actions: string[]; feedback?: string[] };
}
const CASES = (JSON.parse(readFileSync("test/vectors/episodes.json", "utf8")) as { cases: Case[] }).cases;

class ScriptedEnv implements EnvAdapter {
  readonly actions: string[] = [];
  constructor(readonly kind: string, private readonly c: Case) {}
  async tasks(split: string): Promise<TaskRef[]> { return [{ id: "t", split }]; }
  async reset(): Promise<Observation> { return { task: this.c.first.task, text: this.c.first.observation, admissible: this.c.first.admissible }; }
  async step(action: string): Promise<StepResult> {
    this.actions.push(action);
    const t = this.c.transitions[action];
    if (!t) throw new Error(`scripted env: no transition for '${action}'`);
    return { observation: t.observation, reward: t.reward, done: t.done, won: t.done && t.reward === 1, admissible: t.admissible };
  }
  async close(): Promise<void> {}
}

describe("episode semantics per env (shared vectors)", () => {
  it.each(CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const env = new ScriptedEnv(c.kind, c);
    let k = 0;
    const student = new ScriptedStudent(() => c.responses[k++] ?? "<action>none</action>");
    const tok = new CharTokenizer();
    const spec: EpisodeSpec = {
      index: 0, task: { id: "t", split: "train" }, group: 0, prefixActions: [], studentTurns: c.student_turns, capped: c.capped,
      truncatedReward: c.plan_truncated_reward, temperature: 1, seed: 1, horizon: c.student_turns, expertLength: 0,
    };
    const r = await runEpisode(env, async (req) => (await student.sample([req]))[0]!, TAGS_FORMAT, tok, spec, 0);
    expect(r.reward).toBeCloseTo(c.expected.reward, 12);
    expect({ done: r.done, truncated: r.truncated, invalid: r.invalidActions }).toEqual({ done: c.expected.done, truncated: c.expected.truncated, invalid: c.expected.invalid_actions });
    expect(env.actions).toEqual(c.expected.env_actions);
    // Each feedback message is the observation of the prompt that follows it.
    const prompts = r.turns.map((t) => tok.decode(t.prompt));
    for (const f of c.expected.feedback ?? []) expect(prompts.some((p) => p.includes(f)), f).toBe(true);
  });

  it("defaults follow the official workflows; unknown envs keep tcod's old behaviour", () => {
    expect(semanticsOf("sciworld")).toBe(semanticsOf("scienceworld"));
    expect(semanticsOf("texthouse")).toMatchObject({ truncation: { kind: "fixed" }, invalidAction: { kind: "step" }, simplification: "" });
    expect(checkAction(semanticsOf("texthouse"), "anything", [])).toBeNull();
    for (const k of ["alfworld", "webshop", "scienceworld"]) expect(semanticsOf(k).sources.every((s) => s.startsWith("github.com/"))).toBe(true);
  });
});
