/**
 * Rules every command's flags follow (bin/flag-rules.ts): a flag that takes one value, given twice,
 * is a usage error naming the flag and both values (commander alone takes the last one); a path
 * flag given an empty value (`--out ''`) is a usage error naming the flag, never "cannot write :"
 * nor the default folder. Flags meant to repeat (`--set`, `--infra`) stay repeatable.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const F = "examples/texthouse/tcod-f2b.tcod";
const tcod = (args: string[], cwd = ROOT) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd, encoding: "utf8", timeout: 60_000 });

/** Exit 1, TC7009 from the command named, the message, a hint, no stack trace. */
function usageError(r: ReturnType<typeof tcod>, command: string, message: string): void {
  expect(r.status, r.stderr).toBe(1);
  expect(r.stderr).toContain(`tcod ${command} error TC7009: ${message}`);
  expect(r.stderr).toMatch(/\n {2}hint: \S/);
  expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  expect(r.stderr).not.toContain("cannot write");
}

describe("a flag that takes one value, given twice", () => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-flags-"));
  it.each([
    [["run", F, "--seed", "1", "--seed", "2", "-q", "--out", join(dir, "r1")], "run", "--seed is given twice: 1 and 2; it takes one value"],
    [["run", F, "--out", join(dir, "a"), "--out", join(dir, "b"), "-q"], "run", `--out is given twice (-o is --out): ${join(dir, "a")} and ${join(dir, "b")}`],
    [["run", F, "-o", join(dir, "a"), `--out=${join(dir, "b")}`, "-q"], "run", `--out is given twice (-o is --out): ${join(dir, "a")} and ${join(dir, "b")}`],
    [["run", "--resume", join(dir, "a"), "--resume", join(dir, "b")], "run", `--resume is given twice: ${join(dir, "a")} and ${join(dir, "b")}`],
    [["run", F, "--sweep", "--parallel", "1", "--parallel", "2", "--out", join(dir, "s")], "run", "--parallel is given twice: 1 and 2"],
    [["compile", F, "--curriculum", "a", "--curriculum", "b c", "--out", join(dir, "c")], "compile", '--curriculum is given twice: a and "b c"'],
    [["check", F, "--max-points", "5", "--max-points", "6"], "check", "--max-points is given twice: 5 and 6"],
    [["plot", F, "--expert-length", "3", "--expert-length", "4"], "plot", "--expert-length is given twice: 3 and 4"],
    [["export", "trinity", F, "--target", "tcod-fork", "--target", "upstream", "--out", join(dir, "e")], "export", "--target is given twice: tcod-fork and upstream"],
    [["compare", "x", "--level", "0.5", "--level", "0.7"], "compare", "--level is given twice: 0.5 and 0.7"],
  ])("tcod %j", (args, command, message) => {
    usageError(tcod(args), command, message);
  });

  it("nothing is run or written", () => {
    expect(readdirSync(dir)).toEqual([]);
  });

  it("with --json: the result line carries the code, the flag and both values", () => {
    const r = tcod(["run", F, "--seed", "1", "--seed", "2", "--json", "-q", "--out", join(dir, "j")]);
    expect(r.status).toBe(1);
    const last = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { error: { code: string; message: string; hint: string } };
    expect(last.error).toMatchObject({ code: "TC7009", message: "--seed is given twice: 1 and 2; it takes one value" });
    expect(last.error.hint).toContain("--seed");
  });

  it("--set and --infra stay repeatable", () => {
    const out = join(mkdtempSync(join(tmpdir(), "tcod-flags-")), "out");
    const c = tcod(["compile", F, "--set", "steps=3", "--set", "batch=2 tasks × 1 rollout", "--out", out]);
    expect(c.status, c.stderr).toBe(0);
    const e = tcod(["export", "trinity", "examples/alfworld/tcod-f2b.tcod", "--infra", "nodeNum=1", "--infra", "gpuPerNode=2", "--out", join(out, "t")]);
    expect(e.status, e.stderr).toBe(0);
  });
});

describe("an empty path", () => {
  it.each([
    [["run", F, "--out", "", "-q"], "run", "--out: the path is empty; --out takes a folder"],
    [["run", F, "--out=", "-q"], "run", "--out: the path is empty; --out takes a folder"],
    [["run", F, "--sweep", "--out", ""], "run", "--out: the path is empty; --out takes a folder"],
    [["run", F, "--resume", ""], "run", "--resume: the path is empty; --resume takes a folder"],
    [["compile", F, "-o", ""], "compile", "--out: the path is empty; --out takes a folder"],
    [["plot", F, "--out", ""], "plot", "--out: the path is empty; --out takes a folder"],
    [["export", "trinity", F, "--out", ""], "export", "--out: the path is empty; --out takes a folder"],
    [["compare", "x", "--out", ""], "compare", "--out: the path is empty; --out takes a file"],
    [["compare", "x", "--json", ""], "compare", "--json: the path is empty; --json takes a file"],
    [["import", "trinity", "x.yaml", "--out", ""], "import", "--out: the path is empty; --out takes a file"],
    [["explain", F, "tcod_f2b.horizon", "--trace", ""], "explain", "--trace: the path is empty; --trace takes a metrics.jsonl"],
  ])("tcod %j", (args, command, message) => {
    const cwd = mkdtempSync(join(tmpdir(), "tcod-empty-"));
    const r = tcod(args.map((a) => (a === F ? join(ROOT, F) : a)), cwd);
    usageError(r, command, message);
    expect(r.stderr).toMatch(/hint: --\w+ names a/);
    // Neither the default folder nor anything else was made.
    expect(readdirSync(cwd)).toEqual([]);
    expect(existsSync(join(cwd, "runs"))).toBe(false);
  });
});
