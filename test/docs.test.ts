/** Generated reference docs are committed; they must match the sources (run `npm run docs`). */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { diagnosticsReference, stdlibReference } from "../compiler/docs.js";
import { planJsonSchema } from "../plan/schema.js";

const docs = (f: string) => readFileSync(join(import.meta.dirname, "..", "docs", f), "utf8");

describe("generated docs are up to date (npm run docs)", () => {
  it("docs/stdlib.md", () => expect(docs("stdlib.md")).toBe(stdlibReference()));
  it("docs/diagnostics.md", () => expect(docs("diagnostics.md")).toBe(diagnosticsReference()));
  it("docs/plan.schema.json", () => expect(JSON.parse(docs("plan.schema.json"))).toEqual(planJsonSchema()));
  it("the JSON Schema describes tcod.plan/2", () => {
    const s = planJsonSchema() as { properties: Record<string, { const?: string }> };
    expect(s.properties["schema"]!.const).toBe("tcod.plan/2");
  });
});
