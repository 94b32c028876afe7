/**
 * targets/trinity/fields.ts (each field's type and default) against import.ts's DATACLASSES, and
 * field-values.ts's conversions as OmegaConf's nodes make them (the cases of
 * test/trinity/omegaconf-fidelity.test.ts check them against Trinity-RFT's own load_config).
 */
import { describe, expect, it } from "vitest";
import { FIELDS } from "../../targets/trinity/fields.js";
import { convert, enumMember, pythonStrOf } from "../../targets/trinity/field-values.js";
import { DATACLASSES } from "../../targets/trinity/import.js";

describe("FIELDS", () => {
  it("has the dataclasses and keys of DATACLASSES, no more and no fewer", () => {
    expect(Object.keys(FIELDS).sort()).toEqual(Object.keys(DATACLASSES).sort());
    for (const [cls, d] of Object.entries(DATACLASSES)) expect(Object.keys(FIELDS[cls]!).sort(), cls).toEqual([...d.keys].sort());
  });
  it("gives each field of DATACLASSES' nested sections the section's type", () => {
    for (const [cls, d] of Object.entries(DATACLASSES)) {
      for (const [field, shape, inner] of d.nested) {
        const t = FIELDS[cls]![field]!.type;
        expect(t, `${cls}.${field}`).toEqual(shape === "one" ? { section: inner } : shape === "list" ? "list" : "dict");
      }
    }
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
