import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { EnvConfigError } from "../../runtime/envs/env.js";
import { alfworldGameKey, parseTaskFile, readTaskFile } from "../../runtime/envs/taskfile/index.js";
import { splitAvailableActions, textcraftGoal, webshopActions, webshopInstruction } from "../../runtime/envs/agentgym/observation.js";
import { createEnv, envKinds, envVocabulary } from "../../runtime/envs/registry.js";
import { composeRuntime } from "../../bin/compose.js";

composeRuntime(); // the backends and envs bin/ registers for `tcod run`

// The first 40 rows of kokolerk/TCOD TCOD_examples/alfworld/alfworld_data/train_expert.jsonl.
const SAMPLE = process.env.TCOD_TRINITY_SAMPLE ?? fileURLToPath(new URL("../fixtures/envs/alfworld_train_expert.sample.jsonl", import.meta.url));

describe("Trinity task files", () => {
  it("reads the shared ALFWorld sample: game files, actions where present", () => {
    const rows = readTaskFile(SAMPLE, "alfworld");
    expect(rows).toHaveLength(40);
    expect(rows[0]!.gameFile).toMatch(/json_2\.1\.1\/train\/pick_heat_then_place_in_recep-Plate-None-Fridge-7\/trial_T20190909_065023_650475\/game\.tw-pddl$/);
    expect(rows[0]!.actions).toEqual(["go to diningtable 1", "take plate 2 from diningtable 1", "go to microwave 1",
      "heat plate 2 with microwave 1", "go to fridge 1", "open fridge 1", "move plate 2 to fridge 1"]);
    expect(alfworldGameKey(rows[0]!.gameFile!)).toBe("pick_heat_then_place_in_recep-Plate-None-Fridge-7/trial_T20190909_065023_650475");
  });

  it("names the line of a bad row", () => {
    expect(() => parseTaskFile('{"task_id": 1}\n{"task_id": 2, "actions": "go"}\n', "t.jsonl", "webshop")).toThrow(/t\.jsonl:2: "actions" must be a list of action strings/);
    expect(() => parseTaskFile('{"task_id": 1}\nnot json\n', "t.jsonl", "webshop")).toThrow(/t\.jsonl:2:2 is not valid JSON/);
    expect(() => parseTaskFile('[1]\n', "t.jsonl", "webshop")).toThrow(/t\.jsonl:1 is not a JSON object/);
    expect(() => parseTaskFile("\n\n", "t.jsonl", "webshop")).toThrow(/has no tasks/);
    expect(() => readTaskFile("/nonexistent/x.jsonl", "alfworld")).toThrow(EnvConfigError);
    expect(parseTaskFile('{"task_desc": "{\\"task_name\\": \\"boil\\"}", "targe": ""}', "s.jsonl", "scienceworld")[0]!.taskDesc).toBe('{"task_name": "boil"}');
  });
});

describe("AgentGym observation formats", () => {
  it("splits ALFWorld's AVAILABLE ACTIONS suffix", () => {
    expect(splitAvailableActions("You see a desk 1.\nAVAILABLE ACTIONS: go to desk 1,look,inventory")).toEqual({
      observation: "You see a desk 1.", actions: ["go to desk 1", "look", "inventory"] });
    expect(splitAvailableActions("obs\nAVAILABLE ACTIONS: {go to desk 1, look}")).toEqual({ observation: "obs", actions: ["go to desk 1", "look"] });
    expect(splitAvailableActions("Nothing happens.")).toEqual({ observation: "Nothing happens." });
  });

  it("reads TextCraft's goal and WebShop's instruction and clickables", () => {
    expect(textcraftGoal("Crafting commands:\ncraft 1 stick using 2 planks\n\nGoal: craft stick.")).toBe("craft stick.");
    expect(webshopInstruction("WebShop [SEP] Instruction: [SEP] Find red shoes [SEP] Search")).toBe("Find red shoes");
    expect(webshopActions({ has_search_bar: true, clickables: ["search"] })).toEqual(["search[<query>]", "click[search]"]);
    expect(webshopActions({ has_search_bar: false, clickables: ["buy now", "< prev"] })).toEqual(["click[buy now]", "click[< prev]"]);
  });
});

describe("registry", () => {
  it("knows every real env kind and gives the bridged envs a vocabulary", () => {
    expect(envKinds()).toEqual(expect.arrayContaining(["scienceworld", "textworld_express", "alfworld", "webshop", "sciworld", "textcraft"]));
    const words = [...(envVocabulary({ kind: "textworld_express", split: "train", maxTurns: 5, pool: 1, params: {} }) ?? [])];
    expect(words).toEqual(expect.arrayContaining(["cookbook", "fridge", "coin"]));
  });

  it("rejects bad params before starting anything", () => {
    const spec = { kind: "scienceworld", split: "train", maxTurns: 5, pool: 1, params: { tasks: "boil" } };
    expect(() => createEnv(spec, { seed: 1, instance: 0 })).toThrow(/param tasks must be a list of strings/);
    expect(() => createEnv({ ...spec, params: { step_timeout_s: -1 } }, { seed: 1, instance: 0 })).toThrow(/step_timeout_s must be a positive number/);
    expect(() => createEnv({ ...spec, kind: "alfworld", params: {} }, { seed: 1, instance: 0 })).toThrow(/needs the URL of its AgentGym server/);
  });
});
