import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { tcodParser } from "../../grammar/parser.js";

describe("docs/grammar.html", () => {
  const html = readFileSync(new URL("../../docs/grammar.html", import.meta.url), "utf8");

  it("embeds the current grammar (regenerate with the command in scripts/railroad.ts)", () => {
    const match = /window\.serializedGrammar = ([\s\S]*?);\s*<\/script>/.exec(html);
    expect(match, "no serialized grammar in docs/grammar.html").not.toBeNull();
    expect(JSON.parse(match![1]!)).toEqual(JSON.parse(JSON.stringify(tcodParser().getSerializedGastProductions())));
  });

  it("is self-contained (no CDN scripts)", () => {
    expect(html).not.toMatch(/<script src=|<link rel='stylesheet' href='http/);
  });
});
