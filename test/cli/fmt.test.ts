/** `tcod fmt` as a user runs it: rewrites in place, --check prints a diff and exits 1, syntax errors refuse. */
import { spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const tcod = (cwd: string, ...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd, encoding: "utf8" });

describe("tcod fmt", () => {
  it("--check prints a unified diff and exits 1; fmt rewrites; then --check exits 0", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-fmt-"));
    writeFileSync(join(dir, "a.tcod"), "model m { path: \"x\"  serve: embedded() }\n");
    const check = tcod(dir, "fmt", "--check", "a.tcod");
    expect(check.status).toBe(1);
    expect(check.stdout).toContain("--- a/a.tcod");
    expect(check.stdout).toContain("+++ b/a.tcod");
    expect(check.stdout).toContain("-model m { path: \"x\"  serve: embedded() }");
    expect(check.stdout).toContain("+  serve: embedded()");
    expect(readFileSync(join(dir, "a.tcod"), "utf8")).toBe("model m { path: \"x\"  serve: embedded() }\n");

    const write = tcod(dir, "fmt", "a.tcod");
    expect(write.status).toBe(0);
    expect(readFileSync(join(dir, "a.tcod"), "utf8")).toBe("model m {\n  path: \"x\"\n  serve: embedded()\n}\n");
    const again = tcod(dir, "fmt", "--check", "a.tcod");
    expect(again.status).toBe(0);
    expect(again.stdout).toBe("");
  });

  it("formats a folder of examples; they then check exactly as before", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-fmt-"));
    cpSync(join(ROOT, "examples/texthouse"), join(dir, "texthouse"), { recursive: true });
    writeFileSync(join(dir, "package.json"), "{}\n");
    const before = tcod(dir, "check", "--json", "texthouse/tcod-f2b.tcod", "texthouse/atod.tcod");
    expect(tcod(dir, "fmt", "texthouse").status).toBe(0);
    expect(tcod(dir, "fmt", "--check", "texthouse").status).toBe(0);
    const after = tcod(dir, "check", "--json", "texthouse/tcod-f2b.tcod", "texthouse/atod.tcod");
    expect(after.status).toBe(before.status);
    expect(after.stdout.replace(/"line":\d+,"column":\d+/g, "")).toBe(before.stdout.replace(/"line":\d+,"column":\d+/g, ""));
  });

  it("refuses a file with syntax errors: the parse diagnostics, exit 1, the file untouched, no stack trace", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-fmt-"));
    writeFileSync(join(dir, "bad.tcod"), "let x = (1 +\n");
    const r = tcod(dir, "fmt", "bad.tcod");
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("bad.tcod:1:12 error TC1004");
    expect(r.stderr).toContain("hint:");
    expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(readFileSync(join(dir, "bad.tcod"), "utf8")).toBe("let x = (1 +\n");
  });
});
