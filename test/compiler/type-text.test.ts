/**
 * A type is parsed once per text within a compilation (compiler/types.ts TypeTable): looked up as
 * written first, then with its whitespace removed, so texts that differ only in whitespace denote the
 * same type object. The table belongs to the compilation (compiler/index.ts SourceCache), so nothing
 * module-level grows with the distinct type texts a long-lived process (an editor's session) meets.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { describe, expect, it } from "vitest";
import { parseType, TypeTable } from "../../compiler/types.js";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
/** How many of the objects the WeakRefs name were collected (a WeakRef keeps its target to the end of the job that made it). */
async function collected(refs: WeakRef<object>[]): Promise<number> {
  await new Promise((r) => setTimeout(r, 0));
  for (let i = 0; i < 3; i++) gc();
  return refs.filter((r) => r.deref() === undefined).length;
}

describe("TypeTable", () => {
  it("gives one type for texts that differ only in whitespace, in either order of first use", () => {
    const types = new TypeTable();
    const spaced = types.of("list< steps >");
    const plain = types.of("list<steps>");
    expect(spaced).toBe(plain);
    expect(plain).toMatchObject({ kind: "list", item: { kind: "unit", dim: { steps: 1 } } });
    const first = types.of("range<turns>");
    expect(types.of(" range < turns > ")).toBe(first);
    expect(types.of(" range < turns > ")).toBe(first);
  });

  it("keeps unions, units with a denominator and unknown names as before", () => {
    expect(parseType("turns|depth")).toMatchObject({ kind: "union", alternatives: [{ kind: "unit", dim: { turns: 1 } }, { kind: "object", of: "depth" }] });
    expect(parseType("tokens / turn")).toMatchObject({ kind: "unit", dim: { tokens: 1, turns: -1 } });
    expect(parseType("nosuchtype")).toMatchObject({ kind: "unknown", generic: false });
    expect(parseType("foo<steps>")).toMatchObject({ kind: "unknown", generic: true });
  });
});

describe("what parses types keeps", () => {
  it("nothing module-level: many distinct type texts parsed outside a compilation are all collected (a module-level cache kept every one)", async () => {
    const refs: WeakRef<object>[] = [];
    for (let i = 0; i < 5000; i++) {
      const t = parseType(`list<unit_${i}>`);
      if (i % 500 === 0) refs.push(new WeakRef(t));
    }
    expect(await collected(refs)).toBe(refs.length);
  });
});
