import { describe, expect, it } from "vitest";
import { generateTask } from "../../runtime/envs/texthouse/generate.js";
import type { WorldSpec } from "../../runtime/envs/texthouse/model.js";
import { Rng } from "../../runtime/envs/texthouse/rng.js";
import { NOTHING_HAPPENS, TexthouseWorld, normalizeCommand } from "../../runtime/envs/texthouse/world.js";

/** A hand-built kitchen: "put a clean mug in coffeemachine", the mug in a closed cabinet. */
const KITCHEN: WorldSpec = {
  id: "test/kitchen", template: "hand",
  receptacles: ["countertop", "cabinet", "cabinet", "sinkbasin", "coffeemachine"],
  objects: [{ type: "apple", at: 0 }, { type: "mug", at: 2 }, { type: "mug", at: 0 }],
  goal: { task: "pick_clean_then_place_in_recep", object: "mug", target: "coffeemachine" },
};

describe("texthouse world: ALFWorld observations and commands", () => {
  it("opens with the room overview and the task, ALFWorld style", () => {
    const w = new TexthouseWorld(KITCHEN);
    const r = w.reset();
    expect(r.task).toBe("put a clean mug in coffeemachine");
    expect(r.text).toBe("You are in the middle of a room. Looking quickly around you, you see a countertop 1, a cabinet 1, "
      + "a cabinet 2, a sinkbasin 1, and a coffeemachine 1.\n\nYour task is to: put a clean mug in coffeemachine.");
    expect(r.admissible).toEqual(["go to cabinet 1", "go to cabinet 2", "go to coffeemachine 1", "go to countertop 1",
      "go to sinkbasin 1", "inventory", "look"]);
  });

  it("plays a hand-written episode with the expected texts", () => {
    const w = new TexthouseWorld(KITCHEN);
    w.reset();
    const says = (cmd: string): string => w.step(cmd).observation;
    expect(says("go to cabinet 2")).toBe("You arrive at cabinet 2. The cabinet 2 is closed.");
    expect(w.admissible()).toContain("open cabinet 2");
    expect(w.admissible()).not.toContain("take mug 1 from cabinet 2");
    expect(says("open cabinet 2")).toBe("You open the cabinet 2. The cabinet 2 is open. In it, you see a mug 1.");
    expect(says("go to countertop 1")).toBe("You arrive at countertop 1. On the countertop 1, you see a apple 1, and a mug 2.");
    expect(says("take mug 2 from countertop 1")).toBe("You pick up the mug 2 from the countertop 1.");
    expect(w.admissible()).not.toContain("take apple 1 from countertop 1"); // one object in hand at a time
    expect(says("inventory")).toBe("You are carrying: a mug 2.");
    expect(says("examine mug 2")).toBe("There's nothing special about mug 2.");
    expect(says("go to sinkbasin 1")).toBe("You arrive at sinkbasin 1. On the sinkbasin 1, you see nothing.");
    expect(says("clean mug 2 with sinkbasin 1")).toBe("You clean the mug 2 using the sinkbasin 1.");
    expect(says("examine mug 2")).toBe("This is a clean mug 2.");
    expect(says("look")).toBe("You are facing the sinkbasin 1. Next to it, you see nothing.");
    expect(says("go to coffeemachine 1")).toBe("You arrive at coffeemachine 1. On the coffeemachine 1, you see nothing.");
    const last = w.step("put mug 2 in/on coffeemachine 1");
    expect(last).toEqual({ observation: "You put the mug 2 in/on the coffeemachine 1.", reward: 1, done: true, won: true, admissible: [] });
  });

  it("answers an invalid or inadmissible command with \"Nothing happens.\" and no state change", () => {
    const w = new TexthouseWorld(KITCHEN);
    w.reset();
    for (const cmd of ["dance", "take mug 1 from cabinet 2", "go to fridge 1", "put mug 1 in/on countertop 1", ""]) {
      const before = w.snapshot();
      const r = w.step(cmd);
      expect(r).toMatchObject({ observation: NOTHING_HAPPENS, reward: 0, done: false, won: false });
      expect(w.snapshot()).toEqual(before);
    }
    expect(w.turns).toBe(5); // invalid commands still use a turn, as in ALFWorld
  });

  it("names the takes a guessing agent would try (sft noise \"guess\"): goal-type objects the open receptacle at hand does not hold; none admissible", () => {
    const w = new TexthouseWorld(KITCHEN);
    w.reset();
    expect(w.guessedTakes()).toEqual([]);                        // the middle of the room
    w.step("go to cabinet 2");
    expect(w.guessedTakes()).toEqual([]);                        // closed: its contents do not show
    w.step("open cabinet 2");                                    // In it, you see a mug 1.
    expect(w.guessedTakes()).toEqual(["take mug 2 from cabinet 2"]);  // the other instance, which is on the countertop
    w.step("go to sinkbasin 1");                                 // nothing there
    expect(w.guessedTakes()).toEqual(["take mug 1 from sinkbasin 1", "take mug 2 from sinkbasin 1"]);
    for (const g of w.guessedTakes()) {
      expect(w.admissible()).not.toContain(g);
      const before = w.snapshot();
      expect(w.step(g).observation).toBe(NOTHING_HAPPENS);
      expect(w.snapshot()).toEqual(before);
    }
    w.step("go to countertop 1");                                // an apple 1 and a mug 2: the apple is no goal type
    expect(w.guessedTakes()).toEqual(["take mug 1 from countertop 1"]);
    w.step("take mug 2 from countertop 1");
    expect(w.guessedTakes()).toEqual([]);                        // hands full: a take of anything is no guess about what R holds
  });

  it("accepts case/whitespace variants and ALFWorld 0.4's \"move O to R\"", () => {
    expect(normalizeCommand("  Move mug 1   to Coffeemachine 1 ")).toBe("put mug 1 in/on coffeemachine 1");
    const w = new TexthouseWorld(KITCHEN);
    w.reset();
    expect(w.step("  GO TO countertop 1").observation).toMatch(/^You arrive at countertop 1\./);
    w.step("take mug 2 from countertop 1");
    w.step("go to cabinet 1");
    w.step("open cabinet 1");
    expect(w.step("move mug 2 to cabinet 1").observation).toBe("You put the mug 2 in/on the cabinet 1.");
  });

  it("speaks ALFWorld 0.4's grammar on request: lists `move O to R`, still understands `put O in/on R`", () => {
    expect(normalizeCommand("put mug 1 in coffeemachine 1", "move")).toBe("move mug 1 to coffeemachine 1");
    expect(normalizeCommand("put mug 1 in/on coffeemachine 1", "move")).toBe("move mug 1 to coffeemachine 1");
    const w = new TexthouseWorld(KITCHEN, { grammar: "move" });
    w.reset();
    w.step("go to countertop 1");
    w.step("take mug 2 from countertop 1");
    w.step("go to cabinet 1");
    w.step("open cabinet 1");
    expect(w.admissible()).toContain("move mug 2 to cabinet 1");
    expect(w.admissible().some((c) => c.startsWith("put "))).toBe(false);
    expect(w.fork().step("move mug 2 to cabinet 1").observation).toBe("You move the mug 2 to the cabinet 1.");
    expect(w.step("put mug 2 in/on cabinet 1").observation).toBe("You move the mug 2 to the cabinet 1.");
    const put = new TexthouseWorld(KITCHEN);
    expect(put.expertPath().at(-1)).toBe("put mug 2 in/on coffeemachine 1");
    expect(new TexthouseWorld(KITCHEN, { grammar: "move" }).expertPath().at(-1)).toBe("move mug 2 to coffeemachine 1");
    // @ts-expect-error: a wrong grammar is refused with the two valid spellings named
    expect(() => new TexthouseWorld(KITCHEN, { grammar: "place" })).toThrow(/"put".*"move"/);
  });

  it("reward 1, done and won only on the step that reaches the goal; the turn limit ends without a win", () => {
    const w = new TexthouseWorld(KITCHEN);
    w.reset();
    const path = w.expertPath();
    path.forEach((cmd, i) => {
      const r = w.step(cmd);
      const last = i === path.length - 1;
      expect(r.reward).toBe(last ? 1 : 0);
      expect(r.done).toBe(last);
      expect(r.won).toBe(last);
    });
    expect(() => w.step("look")).toThrow(/episode is over.*reset/);

    const capped = new TexthouseWorld(KITCHEN, { maxTurns: 3 });
    capped.reset();
    expect(capped.step("look").done).toBe(false);
    expect(capped.step("look").done).toBe(false);
    expect(capped.step("look")).toMatchObject({ done: true, won: false, reward: 0, admissible: [] });
    expect(new TexthouseWorld(KITCHEN).maxTurns).toBe(30);
    expect(() => new TexthouseWorld(KITCHEN, { maxTurns: 0 })).toThrow(/maxTurns/);
  });

  it("look at X under the desklamp: the lamp must be on where the agent holds X", () => {
    const w = new TexthouseWorld({
      id: "test/bedroom", template: "hand", receptacles: ["bed", "desk", "drawer"],
      objects: [{ type: "book", at: 2 }, { type: "desklamp", at: 1 }],
      goal: { task: "look_at_obj_in_light", object: "book", target: "desklamp" },
    });
    expect(w.reset().task).toBe("look at book under the desklamp");
    w.step("go to desk 1");
    expect(w.step("use desklamp 1").observation).toBe("You turn on the desklamp 1.");
    expect(w.step("use desklamp 1").observation).toBe("You turn off the desklamp 1.");
    w.step("go to drawer 1");
    w.step("open drawer 1");
    expect(w.step("take book 1 from drawer 1").won).toBe(false);
    w.step("go to desk 1");
    expect(w.step("use desklamp 1")).toMatchObject({ observation: "You turn on the desklamp 1.", reward: 1, done: true, won: true });
  });

  it("pick_two needs two objects of the type in one receptacle of the target type", () => {
    const w = new TexthouseWorld({
      id: "test/two", template: "hand", receptacles: ["countertop", "shelf", "shelf"],
      objects: [{ type: "mug", at: 0 }, { type: "mug", at: 0 }],
      goal: { task: "pick_two_obj_and_place", object: "mug", target: "shelf" },
    });
    w.reset();
    w.step("go to countertop 1"); w.step("take mug 1 from countertop 1"); w.step("go to shelf 1");
    expect(w.step("put mug 1 in/on shelf 1").won).toBe(false);
    w.step("go to countertop 1"); w.step("take mug 2 from countertop 1"); w.step("go to shelf 2");
    expect(w.step("put mug 2 in/on shelf 2").won).toBe(false); // different shelves
    w.step("take mug 2 from shelf 2"); w.step("go to shelf 1");
    expect(w.step("put mug 2 in/on shelf 1")).toMatchObject({ reward: 1, won: true, done: true });
  });

  it("rejects inconsistent specs with a message naming the problem", () => {
    expect(() => new TexthouseWorld({ ...KITCHEN, receptacles: ["countertop", "cabinet"] })).toThrow(/mug 1 starts at receptacle index 2/);
    expect(() => new TexthouseWorld({ ...KITCHEN, receptacles: [...KITCHEN.receptacles, "spaceship"] })).toThrow(/unknown receptacle type "spaceship"/);
    expect(() => new TexthouseWorld({ ...KITCHEN, goal: { ...KITCHEN.goal, target: "fridge" } })).toThrow(/"fridge" is not in the layout/);
  });
});

describe("texthouse world: determinism and admissible commands", () => {
  const ids: [Parameters<typeof generateTask>[0], number][] = [["train", 0], ["train", 1234], ["valid_seen", 7], ["valid_unseen", 99], ["hard", 5]];

  it("the same task id gives the same world and the same observations", () => {
    for (const [split, index] of ids) {
      expect(generateTask(split, index)).toEqual(generateTask(split, index));
      const play = (): string[] => {
        const w = new TexthouseWorld(generateTask(split, index));
        const rng = new Rng(42);
        const out = [w.reset().text];
        for (let i = 0; i < 25 && !w.done; i++) out.push(w.step(rng.pick(w.admissible())).observation);
        return out;
      };
      expect(play()).toEqual(play());
    }
    expect(generateTask("train", 0)).not.toEqual(generateTask("train", 1));
    expect(generateTask("train", 3)).not.toEqual(generateTask("valid_seen", 3));
  });

  it("every admissible command executes (never \"Nothing happens.\") along random walks", () => {
    let checked = 0;
    for (let index = 0; index < 30; index++) {
      const w = new TexthouseWorld(generateTask(index % 2 === 0 ? "train" : "valid_unseen", index), { maxTurns: 1000 });
      w.reset();
      const rng = new Rng(index);
      for (let step = 0; step < 20 && !w.done; step++) {
        for (const cmd of w.admissible()) {
          const probe = w.fork();
          expect(probe.step(cmd).observation, `${w.model.spec.id}: ${cmd}`).not.toBe(NOTHING_HAPPENS);
          checked++;
        }
        w.step(rng.pick(w.admissible()));
      }
    }
    expect(checked).toBeGreaterThan(5000);
  });
});
