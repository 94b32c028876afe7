/**
 * Error recovery's results pinned: for 400 short broken programs (test/grammar/recovery-inputs.ts),
 * the declarations (spans included) and syntax errors `parse` gives are those recorded in
 * recovery-baseline.jsonl. The baseline was recorded from the parser that built a concrete syntax
 * tree and an AST from it, and the parser that builds the AST directly gave the same on all 400 (and
 * on 12,000 more in a differential check, bench/parser-differential.ts). A change that alters how a
 * broken program is read shows here line by line; `UPDATE_BASELINES=1` rewrites the file.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "../../grammar/index.js";
import { recoveryInputs, renderParse } from "./recovery-inputs.js";

const FILE = new URL("./recovery-baseline.jsonl", import.meta.url);
const UPDATE = process.env.UPDATE_BASELINES === "1";

describe("error recovery baseline", () => {
  it("gives the recorded declarations and errors for every input", () => {
    if (UPDATE) {
      const lines = recoveryInputs().map((text) => JSON.stringify({ text, result: JSON.parse(renderParse(parse(text, "t.tcod"))) }));
      writeFileSync(FILE, lines.join("\n") + "\n");
    }
    const cases = readFileSync(FILE, "utf8").trimEnd().split("\n").map((l) => JSON.parse(l) as { text: string; result: unknown });
    expect(cases.length).toBe(400);
    expect(cases.map((c) => c.text)).toEqual(recoveryInputs());
    for (const c of cases) expect(JSON.parse(renderParse(parse(c.text, "t.tcod"))), c.text).toEqual(c.result);
  });
});
