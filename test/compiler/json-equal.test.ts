/**
 * `sameJson` (compiler/json-equal.ts) answers whether two values have the same JSON without writing
 * it (sweep points whose plans are the same): it must agree with comparing JSON.stringify's texts,
 * for values JSON writes alike in different ways (NaN and ±Infinity as null, −0 as 0, undefined
 * left out of objects and null in arrays) and for shared parts.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { sameJson } from "../../compiler/json-equal.js";

const leaf = fc.oneof(
  fc.constantFrom(0, -0, 1, 2, NaN, Infinity, -Infinity, null, undefined, true, false, "", "a", "null", "0"),
  fc.double(), fc.string({ maxLength: 3 }),
);
const value = fc.letrec((tie) => ({
  v: fc.oneof({ depthSize: "small" }, leaf, fc.array(tie("v"), { maxLength: 3 }), fc.dictionary(fc.constantFrom("a", "b", "c"), tie("v"), { maxKeys: 3 })),
})).v;
const text = (v: unknown) => JSON.stringify(v);

describe("sameJson", () => {
  it("agrees with comparing JSON.stringify's texts", () => {
    fc.assert(fc.property(value, value, (a, b) => { expect(sameJson(a, b)).toBe(text(a) === text(b)); }), { numRuns: 3000 });
  });

  it("finds a value the same as a copy written alike in other ways", () => {
    // NaN, ±Infinity and null swapped, −0 for 0, undefined keys added, undefined for null in arrays.
    const alike = (v: unknown, flip: boolean): unknown => {
      if (typeof v === "number") return !Number.isFinite(v) ? (flip ? null : Infinity) : v === 0 && flip ? -0 : v;
      if (v === null) return flip ? NaN : null;
      if (Array.isArray(v)) return v.map((x, i) => (x === null || x === undefined ? (flip ? undefined : null) : alike(x, (i % 2 === 0) === flip)));
      if (v && typeof v === "object") return { ...Object.fromEntries(Object.entries(v).map(([k, x], i) => [k, alike(x, (i % 2 === 0) === flip)])), ...(flip ? { zz: undefined } : {}) };
      return v;
    };
    fc.assert(fc.property(value, fc.boolean(), (a, flip) => {
      const b = alike(a, flip);
      expect(text(a)).toBe(text(b));
      expect(sameJson(a, b)).toBe(true);
    }), { numRuns: 3000 });
  });

  it("agrees on values that differ only where JSON writes them alike, and on shared parts", () => {
    const shared = { tree: [1, { x: 2 }] };
    const cases: [unknown, unknown][] = [
      [{ a: NaN }, { a: null }], [{ a: Infinity }, { a: -Infinity }], [[-0], [0]], [{ a: undefined, b: 1 }, { b: 1 }],
      [[undefined], [null]], [{ a: 1, b: 2 }, { b: 2, a: 1 }], [{ s: shared, n: 1 }, { s: shared, n: 1 }], [{ s: shared }, { s: { tree: [1, { x: 3 }] } }],
      [{ f: () => 1 }, {}], [[() => 1], [null]], ["1", 1], [{ d: new Date(0) }, { d: "1970-01-01T00:00:00.000Z" }],
    ];
    for (const [a, b] of cases) expect(sameJson(a, b), `${text(a)} vs ${text(b)}`).toBe(text(a) === text(b));
  });
});
