/**
 * The did-you-mean of unknown names (compiler/diagnostics): the edit distance computed three rows at a
 * time equals the full table, and the closest name skips candidates whose length alone puts them
 * beyond the limit without changing the answer.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { closestName, editDistance } from "../../compiler/diagnostics/index.js";

/** Optimal string alignment distance over the full table (the definition). */
function reference(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}
/** The closest name by the reference distance over every candidate. */
function closestReference(name: string, candidates: string[]): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  for (const c of candidates) {
    const dd = reference(name.toLowerCase(), c.toLowerCase());
    if (dd < bestD) { bestD = dd; best = c; }
  }
  return best !== undefined && bestD <= Math.max(1, Math.floor(name.length / 3)) ? best : undefined;
}

const word = fc.string({ unit: fc.constantFrom("a", "b", "c", "A", "_", "İ"), maxLength: 9 });

describe("did you mean", () => {
  it("measures the distance the full table does", () => {
    fc.assert(fc.property(word, word, (a, b) => { expect(editDistance(a, b)).toBe(reference(a, b)); }), { numRuns: 3000 });
  });
  it("picks the name the full comparison picks", () => {
    fc.assert(fc.property(word, fc.array(word, { maxLength: 12 }), (name, candidates) => {
      expect(closestName(name, candidates)).toBe(closestReference(name, candidates));
    }), { numRuns: 3000 });
  });
});
