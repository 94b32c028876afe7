/**
 * The repository stands alone: no tracked file points at design notes or reference files that live
 * outside it (facts are restated in docs/REFERENCES.md with their public sources), every
 * `docs/REFERENCES.md#anchor` a file cites exists, and the npm scripts name test files that exist.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..", "..");
const tracked = execFileSync("git", ["ls-files", "-z"], { cwd: ROOT, encoding: "utf8" }).split("\0").filter((f) => f && existsSync(join(ROOT, f)));
const TEXT = /\.(ts|mts|mjs|js|json|md|tcod|py|yaml|yml|toml|txt|sh|html|cfg)$|^\.ci\//;
const texts = tracked.filter((f) => TEXT.test(f) && f !== "package-lock.json").map((f) => ({ file: f, text: readFileSync(join(ROOT, f), "utf8") }));

// Spelled in pieces so this file does not match itself.
const OUTSIDE = [
  ["..", "/shared"], ["/work", "/shared"], ["seed-systems", ".md"], ["backends-envs", ".md"], ["dsl-anchors", ".md"],
  ["DESIGN", ".md"], ["STYLE", ".md"], ["reference/", "seed"],
].map((parts) => parts.join(""));

describe("the repository stands alone", () => {
  it("no tracked file cites files outside the repository", () => {
    const hits: string[] = [];
    for (const { file, text } of texts) {
      text.split("\n").forEach((line, i) => {
        for (const needle of OUTSIDE) if (line.includes(needle)) hits.push(`${file}:${i + 1}: ${needle}`);
      });
    }
    expect(hits).toEqual([]);
  });

  it("every docs/REFERENCES.md#anchor cited exists", () => {
    const refs = readFileSync(join(ROOT, "docs", "REFERENCES.md"), "utf8");
    const anchors = new Set([...refs.matchAll(/\{#([\w-]+)\}/g)].map((m) => m[1]!));
    const missing: string[] = [];
    // bench/results/ is recorded data (the fuzz record holds mutated sources), not a citation.
    for (const { file, text } of texts.filter((t) => t.file !== "test/repo/self-contained.test.ts" && !t.file.startsWith("bench/results/"))) {
      for (const m of text.matchAll(/REFERENCES\.md((?:#[\w-]+(?:, )?)+)/g)) {
        for (const a of m[1]!.matchAll(/#([\w-]+)/g)) if (!anchors.has(a[1]!)) missing.push(`${file}: #${a[1]}`);
      }
    }
    expect(anchors.size).toBeGreaterThan(10);
    expect(missing).toEqual([]);
  });

  it("npm scripts name test files that exist (npm run test:update)", () => {
    const scripts = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts;
    for (const [name, cmd] of Object.entries(scripts)) {
      for (const m of cmd.matchAll(/(test\/\S+\.test\.ts)/g)) expect(existsSync(join(ROOT, m[1]!)), `${name}: ${m[1]}`).toBe(true);
    }
    expect(scripts["test:update"]).toContain("test/compiler/fixtures.test.ts");
  });
});
