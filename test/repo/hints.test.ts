/** Hint and detail wording lives in the catalogue (compiler/diagnostics/catalogue.ts `hints`, `details`), not at call sites. */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { details, hints } from "../../compiler/diagnostics/catalogue.js";
import { chooseHint, dt, h } from "../../compiler/diagnostics/index.js";

const root = join(__dirname, "..", "..");
const files = (dir: string): string[] => readdirSync(dir).flatMap((n) => {
  const p = join(dir, n);
  return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") ? [p] : [];
});
const sources = files(join(root, "compiler")).filter((f) => !f.endsWith("catalogue.ts"));

describe("catalogue hints", () => {
  it("no compiler call site writes a hint as a string literal", () => {
    const offenders = sources.flatMap((f) => readFileSync(f, "utf8").split("\n").map((l, i) => [f, i + 1, l] as const))
      .filter(([, , l]) => /\bhint: ["'`]/.test(l) && !/^\s*(\/\/|\*)/.test(l))
      .map(([f, n]) => `${relative(root, f)}:${n}`);
    expect(offenders).toEqual([]);
  });

  it("every hint of the table is used, and fills its parameters", () => {
    const text = sources.map((f) => readFileSync(f, "utf8")).join("\n");
    for (const name of Object.keys(hints)) expect(text, name).toMatch(new RegExp(`\\bh\\.${name}\\(`));
    expect(h.chooseValue({ range: "in [0, 1]" })).toBe("Choose a value in [0, 1].");
    // A range that names a kind of value reads without "a value" (was "Choose a value an integer ≥ 1.").
    expect(chooseHint("in [0, 1]")).toBe("Choose a value in [0, 1].");
    expect(chooseHint("an integer ≥ 1 step")).toBe("Choose an integer ≥ 1 step.");
    expect(chooseHint("a finite number")).toBe("Choose a finite number.");
    expect(h.grpoBatch({ tasks: 16, rollouts: 8 })).toBe("Write `batch: 16 tasks × 8 rollouts`.");
    expect(h.forwardKlIsALoss()).toContain("(import { gkd } from \"std/loss\")");
  });
});

describe("catalogue details (TC2018's {detail})", () => {
  it("no compiler call site writes a detail as a string literal", () => {
    const offenders = sources.flatMap((f) => readFileSync(f, "utf8").split("\n").map((l, i) => [f, i + 1, l] as const))
      .filter(([, , l]) => /\bdetail: ["'`]/.test(l) && /invalidValue|what:/.test(l) && !/^\s*(\/\/|\*)/.test(l))
      .map(([f, n]) => `${relative(root, f)}:${n}`);
    expect(offenders).toEqual([]);
    const sites = sources.flatMap((f) => readFileSync(f, "utf8").match(/d\.invalidValue\(\{[^]*?detail: ([^,]+)/g) ?? []);
    for (const site of sites) expect(site, site).toMatch(/detail: dt\./);
  });

  it("every detail of the table is used, and fills its parameters", () => {
    const text = sources.map((f) => readFileSync(f, "utf8")).join("\n");
    for (const name of Object.keys(details)) expect(text, name).toMatch(new RegExp(`\\bdt\\.${name}\\(`));
    expect(dt.notOneOf({ value: "tokn_mean", options: "\"token_mean\"", suggestion: " Did you mean 'token_mean'?" }))
      .toBe("'tokn_mean' is not one of \"token_mean\" Did you mean 'token_mean'?");
    expect(dt.placeholderNotFilled({ placeholder: "{taks}", suggestion: dt.placeholderSuggestion({ placeholder: "{task}" }) }))
      .toBe("{taks} is not filled by the runtime (did you mean {task}?)");
  });
});
