/**
 * A type is parsed once per text (compiler/types.ts): looked up as written first, then with its
 * whitespace removed, so texts that differ only in whitespace denote the same type object.
 */
import { describe, expect, it } from "vitest";
import { parseType } from "../../compiler/types.js";

describe("parseType", () => {
  it("gives one type for texts that differ only in whitespace, in either order of first use", () => {
    const spaced = parseType("list< steps >");
    const plain = parseType("list<steps>");
    expect(spaced).toBe(plain);
    expect(plain).toMatchObject({ kind: "list", item: { kind: "unit", dim: { steps: 1 } } });
    const first = parseType("range<turns>");
    expect(parseType(" range < turns > ")).toBe(first);
    expect(parseType(" range < turns > ")).toBe(first);
  });

  it("keeps unions, units with a denominator and unknown names as before", () => {
    expect(parseType("turns|depth")).toMatchObject({ kind: "union", alternatives: [{ kind: "unit", dim: { turns: 1 } }, { kind: "object", of: "depth" }] });
    expect(parseType("tokens / turn")).toMatchObject({ kind: "unit", dim: { tokens: 1, turns: -1 } });
    expect(parseType("nosuchtype")).toMatchObject({ kind: "unknown", generic: false });
    expect(parseType("foo<steps>")).toMatchObject({ kind: "unknown", generic: true });
  });
});
