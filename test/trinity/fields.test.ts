/**
 * targets/trinity/fields.ts (each field's type, default and whether it takes null) and DATACLASSES,
 * derived from it, and field-values.ts's conversions as OmegaConf's nodes make them (the cases of
 * test/trinity/omegaconf-fidelity.test.ts check them against Trinity-RFT's own load_config;
 * test/trinity/nullable-drift.test.ts the table against the installed release's dataclasses).
 */
import { describe, expect, it } from "vitest";
import { DATACLASSES, FIELDS } from "../../targets/trinity/fields.js";
import { convert, enumMember, pythonStrOf } from "../../targets/trinity/field-values.js";

describe("FIELDS and DATACLASSES", () => {
  it("every dataclass a field names (a section, a list's or mapping's items) is in FIELDS, and every one is reached from Config", () => {
    const reached = new Set<string>();
    const todo = ["Config"];
    while (todo.length > 0) {
      const cls = todo.pop()!;
      if (reached.has(cls)) continue;
      expect(FIELDS[cls], cls).toBeDefined();
      reached.add(cls);
      todo.push(...DATACLASSES[cls]!.nested.map(([, , inner]) => inner));
    }
    expect([...reached].sort()).toEqual(Object.keys(FIELDS).sort());
  });
  it("DATACLASSES has each dataclass's keys in its field order, and its sections, lists and mappings of dataclasses", () => {
    for (const [cls, fs] of Object.entries(FIELDS)) expect([...DATACLASSES[cls]!.keys], cls).toEqual(Object.keys(fs));
    expect(DATACLASSES.ExperiencePipelineConfig!.nested).toEqual([["operators", "list", "OperatorConfig"], ["inputs", "map", "ExperienceBufferConfig"], ["output", "one", "ExperienceBufferConfig"]]);
    expect(DATACLASSES.Config!.nested.map(([f]) => f)).toEqual(["algorithm", "data_processor", "model", "cluster", "buffer", "explorer", "trainer", "monitor", "synchronizer", "service", "log", "stages"]);
  });
  it("a field takes null where its default is None (in any release), where it is Any, and where it is marked Optional", () => {
    expect(FIELDS.BufferConfig!.total_steps!.nullable).toBe(true);
    expect(FIELDS.BufferConfig!.batch_size!.nullable).toBe(false);
    expect(FIELDS.ClusterConfig!.node_num!.nullable).toBe(true); // None in 0.4.1 only
    expect(FIELDS.TrainerConfig!.trainer_config!.nullable).toBe(true); // Any
    expect(FIELDS.StorageConfig!.replay_buffer!.nullable).toBe(true); // Optional[ReplayBufferConfig] = field(default_factory=…)
    expect(FIELDS.TasksetConfig!.enable_progress_bar!.nullable).toBe(false);
  });
});

describe("field values as OmegaConf converts them", () => {
  it("an enum takes a member's name in any case, an alias, or Name.member; not whitespace, a number or a boolean", () => {
    expect(enumMember("SyncMethod", "NCCL")).toBe("nccl");
    expect(enumMember("SyncMethod", "Online")).toBe("nccl");
    expect(enumMember("SaveStrategy", "SaveStrategy.Single_Node")).toBe("single_node");
    expect(enumMember("SaveStrategy", " single_node")).toBeUndefined();
    expect(convert({ enum: "SyncStyle" }, 2, false)).toMatchObject({ ok: false, why: expect.stringMatching(/^an integer, 2: .*'int' object has no attribute 'lower'/) });
    expect(convert({ enum: "SyncStyle" }, true, false)).toMatchObject({ ok: false, why: expect.stringMatching(/^a boolean, True: /) });
    expect(convert({ enum: "SyncStyle" }, "fixd", false)).toMatchObject({ ok: false, hint: expect.stringMatching(/^Did you mean 'fixed'\? /) });
  });
  it("an int refuses a float (16.0 too) and a boolean, and reads a string with int(); a float takes an int; a bool takes an int but not a float", () => {
    expect(convert("int", 16, true)).toMatchObject({ ok: false });
    expect(convert("int", true, false)).toMatchObject({ ok: false });
    expect(convert("int", " 1_0 ", false)).toEqual({ ok: true, value: 10 });
    expect(convert("int", "0x10", false)).toMatchObject({ ok: false });
    expect(convert("float", 5, false)).toEqual({ ok: true, value: 5 });
    expect(convert("float", true, false)).toMatchObject({ ok: false });
    expect(convert("bool", 0, false)).toEqual({ ok: true, value: false });
    expect(convert("bool", 2, true)).toMatchObject({ ok: false });
    expect(convert("str", [1], false)).toMatchObject({ ok: false });
    expect(convert("list", 5, false)).toMatchObject({ ok: false });
    expect(convert("dict", [1], false)).toMatchObject({ ok: false });
  });
  it("str() of what the field holds: a float field's int as a float, an enum member as Name.MEMBER", () => {
    expect(pythonStrOf("float", 5)).toBe("5.0");
    expect(pythonStrOf("float", 1e-6)).toBe("1e-06");
    expect(pythonStrOf("int", 5)).toBe("5");
    expect(pythonStrOf("int", 2 ** 60, "1152921504606846976")).toBe("1152921504606846976");
    expect(pythonStrOf("bool", true)).toBe("True");
    expect(pythonStrOf({ enum: "SyncMethod" }, "nccl")).toBe("SyncMethod.NCCL");
    expect(pythonStrOf("str", null)).toBe("None");
    expect(pythonStrOf("list", [1])).toBeUndefined();
  });
});
