/** The range check's sample of a long run (compiler/lower.ts rangeSample) and numbers in messages (plan/print.ts showNumber). */
import { describe, expect, it } from "vitest";
import { RANGE_POINTS, rangeSample } from "../../compiler/lower.js";
import { showNumber } from "../../plan/print.js";

describe("rangeSample", () => {
  it("every step (and expert length) up to RANGE_POINTS points", () => {
    expect(rangeSample(RANGE_POINTS, 1)).toMatchObject({ stride: 1 });
    expect(rangeSample(RANGE_POINTS, 1).steps).toBeUndefined();
    expect(rangeSample(6451, 31).steps).toBeUndefined();
  });

  it.each([[1_000_001, 1], [2_000_000, 1], [10_000, 31], [Number.MAX_SAFE_INTEGER, 1], [100, 1_000_001]])("%d steps × %d lengths: the first and last steps, sorted, within budget", (steps, lengths) => {
    const r = rangeSample(steps, lengths);
    const rows = r.steps ?? Array.from({ length: steps }, (_, i) => i + 1);
    const perRow = r.lengths?.length ?? lengths;
    expect(rows.length * perRow).toBeLessThanOrEqual(RANGE_POINTS + 8 * perRow);
    expect(rows[0]).toBe(1);
    expect(rows.at(-1)).toBe(steps);
    if (r.steps) expect(rows.slice(-r.edge)).toEqual(Array.from({ length: r.edge }, (_, i) => steps - r.edge + 1 + i));
    expect(rows.every((x, i) => i === 0 || x > rows[i - 1]!)).toBe(true);
    if (r.lengths) expect([r.lengths[0], r.lengths.at(-1)]).toEqual([0, lengths - 1]);
  });
});

describe("showNumber", () => {
  it("6 significant digits, but never rounded onto a whole number it is not", () => {
    expect(showNumber(0.9999995)).toBe("0.9999995");
    expect(showNumber(1.0000001 - 2e-7)).toBe("0.9999999");
    expect(showNumber(0.123456789)).toBe("0.123457");
    expect(showNumber(3)).toBe("3");
    expect(showNumber(Infinity)).toBe("Infinity");
  });
});
