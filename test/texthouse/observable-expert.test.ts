import { describe, expect, it } from "vitest";
import { EnvConfigError } from "../../runtime/envs/env.js";
import {
  SPLIT_SIZES, TexthouseEnv, TexthouseWorld, decideFromHistory, generateTask, initialBelief, observeBelief, parseGoal,
  type PlaceGrammar, type Split, type WorldSpec,
} from "../../runtime/envs/texthouse/index.js";
import { TEXTHOUSE_MAX_TURNS } from "../../runtime/envs/texthouse/world.js";

/** Plays the observable expert through a whole episode; every action must be admissible. */
function play(spec: WorldSpec, grammar: PlaceGrammar = "put"): { won: boolean; turns: number; actions: string[]; observations: string[] } {
  const w = new TexthouseWorld(spec, { maxTurns: TEXTHOUSE_MAX_TURNS, grammar });
  const observations = [w.reset().text];
  const actions: string[] = [];
  while (!w.done) {
    const d = w.observableDecision();
    expect(d.optimal).toContain(d.action);
    expect(w.admissible()).toContain(d.action);
    for (const a of d.optimal) expect(w.admissible()).toContain(a);
    actions.push(d.action);
    observations.push(w.step(d.action).observation);
  }
  return { won: w.won, turns: w.turns, actions, observations };
}

describe("texthouse observable expert", () => {
  for (const split of ["valid_seen", "valid_unseen", "hard"] as Split[]) {
    it(`solves every ${split} task within Hmax (${TEXTHOUSE_MAX_TURNS} turns), admissible actions only`, () => {
      const failed: string[] = [];
      let turns = 0;
      for (let i = 0; i < SPLIT_SIZES[split]; i++) {
        const r = play(generateTask(split, i));
        if (!r.won) failed.push(`${split}/${i}`);
        turns += r.turns;
      }
      expect(failed).toEqual([]);
      expect(turns / SPLIT_SIZES[split]).toBeLessThan(TEXTHOUSE_MAX_TURNS);
    });
  }

  it("speaks the env's placing grammar: with grammar \"move\" every task is solved and no command has a \"/\"", () => {
    for (const split of ["valid_seen", "hard"] as Split[]) {
      for (let i = 0; i < SPLIT_SIZES[split]; i++) {
        const r = play(generateTask(split, i), "move");
        expect(r.won).toBe(true);
        for (const a of r.actions) expect(a).not.toContain("/");
      }
    }
    expect(() => new TexthouseEnv({ grammar: "drop" as "put" })).toThrow(EnvConfigError);
  });

  it("acts on the observation history alone: replaying the texts gives the same decision at every turn", () => {
    for (let i = 0; i < 40; i++) {
      const spec = generateTask(i % 2 === 0 ? "valid_seen" : "hard", i);
      const w = new TexthouseWorld(spec);
      const texts = [w.reset().text];
      while (!w.done) {
        const live = w.observableDecision();
        expect(decideFromHistory(texts[0]!, texts.slice(1))).toEqual(live);
        texts.push(w.step(live.action).observation);
      }
    }
  });

  it("does not change its action when what it has not seen changes (the privileged planner does)", () => {
    let compared = 0, privilegedDiffers = 0;
    for (let i = 0; i < 60; i++) {
      const spec = generateTask("valid_seen", i);
      const { actions } = play(spec);
      // Stop after the first turn of the episode where the expert still explores.
      for (let k = 1; k < actions.length; k++) {
        const a = new TexthouseWorld(spec);
        const textsA = [a.reset().text];
        for (const x of actions.slice(0, k)) textsA.push(a.step(x).observation);
        if (a.observableDecision().phase !== "explore") break;
        // Move every object the agent has not seen to a receptacle it has not explored.
        const b0 = initialBelief(textsA[0]!);
        for (const t of textsA.slice(1)) observeBelief(b0, t);
        // (Not into the goal's target type: that could satisfy the goal by itself.)
        const unexplored = spec.receptacles.map((_, r) => r)
          .filter((r) => b0.explored[r] === 0 && r !== b0.loc && spec.receptacles[r] !== spec.goal.target);
        if (unexplored.length < 2) break;
        const seen = new Set(b0.objects.keys());
        const names = new TexthouseWorld(spec).model.objName;
        const moved: WorldSpec = {
          ...spec, id: `${spec.id}-moved`,
          objects: spec.objects.map((o, j) => (seen.has(names[j]!) || b0.explored[o.at] === 1 ? o
            : { ...o, at: unexplored[(unexplored.indexOf(o.at) + 1) % unexplored.length] ?? unexplored[0]! })),
        };
        const b = new TexthouseWorld(moved);
        const textsB = [b.reset().text];
        for (const x of actions.slice(0, k)) textsB.push(b.step(x).observation);
        expect(textsB).toEqual(textsA);
        expect(b.won).toBe(false);
        expect(b.observableDecision()).toEqual(a.observableDecision());
        compared++;
        if (JSON.stringify(b.optimal()) !== JSON.stringify(a.optimal())) privilegedDiffers++;
      }
    }
    expect(compared).toBeGreaterThan(50);
    // The same check catches a policy that reads the world: the privileged planner's choice moves.
    expect(privilegedDiffers).toBeGreaterThan(0);
  });

  it("reads every goal sentence of the six task types", () => {
    expect(parseGoal("put a mug in coffeemachine")).toEqual({ task: "pick_and_place_simple", object: "mug", target: "coffeemachine" });
    expect(parseGoal("put a clean cloth on countertop")).toEqual({ task: "pick_clean_then_place_in_recep", object: "cloth", target: "countertop" });
    expect(parseGoal("put a hot apple in fridge")).toMatchObject({ task: "pick_heat_then_place_in_recep" });
    expect(parseGoal("put a cool potato in microwave")).toMatchObject({ task: "pick_cool_then_place_in_recep" });
    expect(parseGoal("put two cd in safe")).toEqual({ task: "pick_two_obj_and_place", object: "cd", target: "safe" });
    expect(parseGoal("look at book under the desklamp")).toEqual({ task: "look_at_obj_in_light", object: "book", target: "desklamp" });
    expect(() => parseGoal("bake a cake")).toThrow(/not a texthouse goal sentence/);
  });

  it("remembers what it has seen, where, and what it holds", () => {
    const b = initialBelief("You are in the middle of a room. Looking quickly around you, you see a cabinet 1, a countertop 1, and a fridge 1.\n\nYour task is to: put a cool mug in cabinet.");
    expect(b.receptacles).toEqual(["cabinet 1", "countertop 1", "fridge 1"]);
    observeBelief(b, "You arrive at countertop 1. On the countertop 1, you see a apple 1, and a mug 2.");
    expect(b.loc).toBe(1);
    expect([...b.objects]).toEqual([["apple 1", 1], ["mug 2", 1]]);
    expect(b.explored[1]).toBe(1);
    observeBelief(b, "You pick up the mug 2 from the countertop 1.");
    expect(b.held).toBe("mug 2");
    observeBelief(b, "You arrive at fridge 1. The fridge 1 is closed.");
    expect(b.explored[2]).toBe(0);
    observeBelief(b, "You cool the mug 2 using the fridge 1.");
    expect(b.flags.get("mug 2")).toBe(4);
    observeBelief(b, "Nothing happens.");
    expect(b.loc).toBe(2);
  });
});

describe("TexthouseEnv expert option", () => {
  it("backs optimalActions and expertPath with the observable expert by default, the planner on request", async () => {
    const task = { id: "hard/000003", split: "hard" };
    const observable = new TexthouseEnv(), privileged = new TexthouseEnv({ expert: "privileged" });
    const pathO = await observable.expertPath(task), pathP = await privileged.expertPath(task);
    expect(pathP.length).toBeLessThan(pathO.length); // the planner walks straight to the hidden object
    await observable.reset(task);
    await privileged.reset(task);
    expect(await observable.optimalActions()).toContain(pathO[0]);
    expect(await privileged.optimalActions()).toContain(pathP[0]);
    expect(await observable.optimalLength()).toBe(pathP.length);
    let last;
    for (const a of pathO) last = await observable.step(a);
    expect(last).toMatchObject({ won: true });
    expect(() => new TexthouseEnv({ expert: "psychic" as "observable" })).toThrow(EnvConfigError);
  });
});
