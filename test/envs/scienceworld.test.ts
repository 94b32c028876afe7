import { afterAll, describe, expect, it } from "vitest";
import { EnvConfigError, EnvError } from "../../runtime/envs/env.js";
import { createScienceWorld } from "../../runtime/envs/scienceworld/index.js";
import { missing } from "./requirements.js";

const skip = missing("scienceworld") !== undefined;

describe.skipIf(skip)("ScienceWorld bridge adapter (real package)", () => {
  const env = createScienceWorld({ tasks: ["boil", "1-2"] });
  afterAll(() => env.close());

  it("lists a split's variations with the package's own getters, task names or ids", async () => {
    const dev = await env.tasks("dev");
    expect(dev.map((t) => t.id)).toEqual([14, 15, 16, 17, 18, 19, 20].flatMap((v) => [`boil:${v}`]).concat(
      [14, 15, 16, 17, 18, 19, 20].map((v) => `melt:${v}`)));
    expect(dev.every((t) => t.split === "dev")).toBe(true);
    expect((await env.tasks("train"))[0]).toEqual({ id: "boil:0", split: "train" });
  }, 120_000);

  it("rejects an unknown split, task, or a variation of another split with the valid values", async () => {
    await expect(env.tasks("validation")).rejects.toMatchObject({ constructor: EnvConfigError, hint: "use one of: train, dev, test" });
    const unknown = await env.reset({ id: "boiling:0", split: "train" }).catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(EnvConfigError);
    expect((unknown as EnvConfigError).hint).toContain("change-the-state-of-matter-of");
    const wrong = await env.reset({ id: "boil:25", split: "train" }).catch((e: unknown) => e);
    expect(wrong).toBeInstanceOf(EnvConfigError);
    expect((wrong as Error).message).toContain("it belongs to test");
    await expect(env.step("look around")).rejects.toBeInstanceOf(EnvError);
  }, 120_000);

  it("a task file's variation the task does not have is an EnvConfigError naming the range, not an episode of task 'unknown'", async () => {
    const fixed = createScienceWorld({ fixed: { path: "tasks.jsonl", split: "train", tasks: [{ id: "boil:9999", split: "train" }] } });
    try {
      const e = await fixed.reset({ id: "boil:9999", split: "train" }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(EnvConfigError);
      expect((e as Error).message).toMatch(/scienceworld task 'boil:9999': boil has no variation 9999 \(it has 30: 0\.\.29\)/);
    } finally {
      await fixed.close();
    }
  }, 120_000);

  it("answers an invalid action with the env's own feedback, counted, and the episode goes on", async () => {
    const obs = await env.reset({ id: "boil:0", split: "train" });
    expect(obs.task).toContain("boil water");
    expect(obs.admissible).toContain("open door to kitchen");
    const before = env.stats.invalidActions;
    const r = await env.step("fly to the moon");
    expect(r.observation).toBe("No known action matches that input.");
    expect(r).toMatchObject({ done: false, won: false, reward: 0, score: 0 });
    expect(env.stats.invalidActions).toBe(before + 1);
  }, 120_000);

  it("answers every reset and step with the official prompt's compact action list: templates without help, objects in view", async () => {
    const obs = await env.reset({ id: "boil:0", split: "train" });
    expect(obs.actionTemplates).toEqual(expect.arrayContaining(["open OBJ", "focus on OBJ", "look around", "look at OBJ"]));
    expect(obs.actionTemplates).not.toContain("help");
    expect(obs.objects).toEqual(expect.arrayContaining(["door to kitchen", "hallway"]));
    // Stripped, as the official workflows' format_observation reads it.
    expect(obs.text).toBe(obs.text.trim());
    expect(obs.task).toBe(obs.task.trim());
    const r = await env.step("open door to kitchen");
    expect(r.actionTemplates).toEqual(obs.actionTemplates);
    expect(r.objects!.length).toBeGreaterThan(0);
    expect(r.observation).toBe(r.observation.trim());
  }, 120_000);

  it("replays a gold-path prefix (b2f), then follows the oracle to a win: score 100, rewards sum to 1", async () => {
    const task = { id: "melt:0", split: "train" };
    const gold = await env.expertPath(task);
    expect(gold.length).toBeGreaterThan(5);
    await env.reset(task);
    const p = Math.floor(gold.length / 2);
    let sum = 0;
    for (const a of gold.slice(0, p)) sum += (await env.step(a)).reward;
    let last;
    for (let t = p; t < gold.length + 5; t++) {
      const next = await env.optimalActions();
      expect(next).toEqual([gold[t]]);
      last = await env.step(next[0]!);
      sum += last.reward;
      if (last.done) break;
    }
    expect(last).toMatchObject({ done: true, won: true, score: 100 });
    expect(sum).toBeCloseTo(1, 10);
  }, 240_000);

  it("offers no optimal action once the student has left the gold path", async () => {
    await env.reset({ id: "melt:0", split: "train" });
    expect((await env.optimalActions()).length).toBe(1);
    await env.step("look at agent");
    expect(await env.optimalActions()).toEqual([]);
  }, 120_000);

  it("a bridge killed mid-episode is an EnvError; the next reset restarts the instance", async () => {
    await env.reset({ id: "boil:1", split: "train" });
    const starts = env.stats.starts;
    process.kill(-env.pid!, "SIGKILL");
    const e = await env.step("look around").catch((x: unknown) => x);
    expect(e).toBeInstanceOf(EnvError);
    expect((e as EnvError).retryable).toBe(true);
    expect(await env.health()).toBe(false);
    const obs = await env.reset({ id: "boil:1", split: "train" });
    expect(obs.task).toContain("boil");
    expect(env.stats.starts).toBe(starts + 1);
    expect(await env.health()).toBe(true);
  }, 240_000);
});
