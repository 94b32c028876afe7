/** `tcod fmt` as a user runs it: rewrites in place, --check prints a diff and exits 1, syntax errors refuse. */
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
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

  it("--json prints the syntax errors that stop it formatting as JSON lines on stdout, as check --json does (were: human text on stderr); exit 1", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-fmt-"));
    writeFileSync(join(dir, "bad.tcod"), "let x = (1 +\n");
    const r = tcod(dir, "fmt", "--json", "bad.tcod");
    expect(r.status).toBe(1);
    expect(r.stderr).toBe("");
    const lines = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    const check = tcod(dir, "check", "--json", "bad.tcod").stdout.trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    const diags = lines.filter((l) => "code" in l);
    expect(diags.map((l) => [l.code, l.line, l.column])).toEqual([["TC1004", 1, 12], ["TC1004", 1, 13]]);
    // The same shape (keys) as check's lines, each a full diagnostic with its hint.
    expect(diags.map((l) => Object.keys(l))).toEqual(check.filter((l) => "code" in l).map((l) => Object.keys(l)));
    expect(diags.every((l) => typeof l.hint === "string")).toBe(true);
    expect(lines.at(-1)).toMatchObject({ command: "fmt", ok: false, exitCode: 1, errors: 2 });
    expect(readFileSync(join(dir, "bad.tcod"), "utf8")).toBe("let x = (1 +\n");
  });

  it("a UTF-16 file's TC1009 shows no garbled excerpt of its first line in check's or fmt's human output", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-fmt-"));
    writeFileSync(join(dir, "u16.tcod"), Buffer.from("\uFEFFlet a = 1\n", "utf16le"));
    for (const command of ["check", "fmt"]) {
      const r = tcod(dir, command, "u16.tcod");
      expect(r.status, command).toBe(1);
      expect(r.stderr, command).toMatch(/^u16\.tcod:1:1 error TC1009: .*\n {2}hint: Save it as UTF-8/);
      expect(r.stderr, command).not.toContain(" 1 | ");
      expect(r.stderr, command).not.toMatch(/[\uFFFD\u0000]/);
    }
  });

  it("check, compile, run and fmt report the same control and bidi characters in comments and strings, and a UTF-16 file once (were: accepted; one TC1003 per NUL)", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-fmt-"));
    const ctl = 'model m { path: "x\u001b[2J" }\n// \u202e } \u2066 hidden\u2069\n/// \u0007\nlet a = 1\n';
    const program = 'import { texthouse } from "std/envs"\nmodel m { path: "x" }\ncurriculum c { teacher: m  student: m  env: texthouse()  steps: 10 }\n';
    writeFileSync(join(dir, "ctl.tcod"), ctl);
    writeFileSync(join(dir, "u16.tcod"), Buffer.from("\uFEFF" + program, "utf16le"));
    const expected: Record<string, [string, number, number][]> = {
      "ctl.tcod": [["TC1003", 1, 19], ["TC1010", 2, 4], ["TC1010", 2, 8], ["TC1010", 2, 16], ["TC1003", 3, 5]],
      "u16.tcod": [["TC1009", 1, 1]],
    };
    for (const [file, codes] of Object.entries(expected)) {
      for (const command of ["check", "compile", "run"]) {
        const r = tcod(dir, command, "--json", file);
        expect(r.status, `${command} ${file}`).toBe(1);
        const got = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as { code?: string; line: number; column: number }).filter((l) => l.code !== undefined);
        expect(got.map((l) => [l.code, l.line, l.column]), `${command} ${file}`).toEqual(codes);
      }
      const f = tcod(dir, "fmt", file);
      expect(f.status).toBe(1);
      expect([...f.stderr.matchAll(/^\S+:(\d+):(\d+) error (TC\d+)/gm)].map((m) => [m[3], Number(m[1]), Number(m[2])]), `fmt ${file}`).toEqual(codes);
      expect(f.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    }
    expect(readFileSync(join(dir, "ctl.tcod"), "utf8")).toBe(ctl);
    expect(readFileSync(join(dir, "u16.tcod"))).toEqual(Buffer.from("\uFEFF" + program, "utf16le"));
  });

  it("check, compile, run and fmt name a byte that is not UTF-8 at its place, and take a U+FFFD the file holds in a string or comment (were: every U+FFFD TC1008, the byte unnamed)", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-fmt-"));
    const program = 'import { texthouse } from "std/envs"\n// a U+FFFD written on purpose: \uFFFD\nmodel m { path: "x\uFFFD" }\ncurriculum c { teacher: m  student: m  env: texthouse()  steps: 10 }\n';
    writeFileSync(join(dir, "ok.tcod"), program);
    const [before, after] = program.split('"x\uFFFD"');
    writeFileSync(join(dir, "bad.tcod"), Buffer.concat([Buffer.from(before + '"caf'), Buffer.from([0xe9]), Buffer.from('"' + after)]));
    for (const command of ["check", "compile", "run"]) {
      if (command !== "run") {
        const ok = tcod(dir, command, "--json", "ok.tcod");
        expect(ok.status, `${command} ok.tcod`).toBe(0);
        expect(ok.stdout.split("\n").filter((l) => l.includes('"code"')), `${command} ok.tcod`).toEqual([]);
      }
      const r = tcod(dir, command, "--json", "bad.tcod");
      expect(r.status, command).toBe(1);
      const got = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as { code?: string; line: number; column: number; message: string }).filter((l) => l.code !== undefined);
      expect(got.map((l) => [l.code, l.line, l.column, l.message]), command).toEqual([["TC1008", 3, 21, "Not valid UTF-8: the byte 0xE9 here."]]);
    }
    // The plan keeps the character.
    expect(readFileSync(join(dir, "out", "c.plan.json"), "utf8")).toContain('"x\uFFFD"');
    const f = tcod(dir, "fmt", "bad.tcod");
    expect(f.status).toBe(1);
    expect(f.stderr).toMatch(/^bad\.tcod:3:21 error TC1008: Not valid UTF-8: the byte 0xE9 here\./);
    // ok.tcod is formatted, its U+FFFD kept where they were.
    const fo = tcod(dir, "fmt", "--check", "ok.tcod");
    expect(fo.stderr).toBe("1 of 1 file(s) not formatted (run tcod fmt to fix)\n");
    expect(tcod(dir, "fmt", "ok.tcod").status).toBe(0);
    expect(readFileSync(join(dir, "ok.tcod"), "utf8")).toContain('// a U+FFFD written on purpose: \uFFFD\nmodel m {\n  path: "x\uFFFD"\n}\n');
    expect(tcod(dir, "fmt", "--check", "ok.tcod").status).toBe(0);
  });

  it("--json names files by absolute path, as check --json does (were: as typed)", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-fmt-"));
    writeFileSync(join(dir, "bad.tcod"), "let x = (1 +\n");
    const files = (command: string) => tcod(dir, command, "--json", "bad.tcod", "missing.tcod").stdout.trim().split("\n")
      .map((l) => JSON.parse(l) as { file?: string }).filter((l) => l.file !== undefined).map((l) => l.file);
    expect(files("fmt")).toEqual([join(dir, "missing.tcod"), join(dir, "bad.tcod"), join(dir, "bad.tcod")]);
    expect(new Set(files("fmt"))).toEqual(new Set(files("check")));
    // The human rendering still shows the path from the working folder.
    expect(tcod(dir, "fmt", "bad.tcod").stderr).toMatch(/^bad\.tcod:1:12 error TC1004/);
  });

  it("--json counts every file it is given, as check --json does, a missing one included (were: only those there)", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-fmt-"));
    writeFileSync(join(dir, "a.tcod"), "let x = 1\n");
    mkdirSync(join(dir, "sub"));
    writeFileSync(join(dir, "sub", "b.tcod"), "let y = 2\n");
    const last = (r: { stdout: string }) => JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { files: number };
    expect(last(tcod(dir, "fmt", "--json", "a.tcod", "missing.tcod")).files).toBe(last(tcod(dir, "check", "--json", "a.tcod", "missing.tcod")).files);
    expect(last(tcod(dir, "fmt", "--json", "a.tcod", "missing.tcod")).files).toBe(2);
    // A folder counts the .tcod files it holds.
    expect(last(tcod(dir, "fmt", "--json", "--check", "sub", "a.tcod", "gone.tcod"))).toMatchObject({ files: 3, unformatted: [] });
  });
});
