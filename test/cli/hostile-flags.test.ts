/**
 * Hostile values for the CLI's own arguments (bin/flag-rules.ts, bin/curriculum-arg.ts and each
 * command's parsing): blank paths, `-`, a value that is the next flag, numbers in hex or exponent
 * form, flags that another flag would silently ignore. Each is a coded TC7009 at the command, with a
 * hint, and nothing is run or written.
 */
import { spawnSync } from "node:child_process";
import { lstatSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectUserError } from "../helpers/cli.js";

const ROOT = join(import.meta.dirname, "../..");
const F = join(ROOT, "examples/texthouse/tcod-f2b.tcod");
const P = join(ROOT, "test/fixtures/plans/texthouse-f2b-small.json");
const tcod = (args: string[], cwd: string) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd, encoding: "utf8", timeout: 60_000 });

/** Runs `args` in an empty folder: TC7009 at `tcod CMD` with `message` and `hint`, and the folder stays empty. */
function refused(args: string[], message: string, hint: string): void {
  const cwd = mkdtempSync(join(tmpdir(), "tcod-hostile-"));
  expectUserError(tcod(args, cwd), "TC7009", { at: `tcod ${args[0]}`, message, hint });
  expect(readdirSync(cwd)).toEqual([]);
}

describe("a path argument or path flag that names no path", () => {
  it.each([
    [["compile", ""], "<file>: the path is empty", "<file> takes a path (.tcod file)"],
    [["compile", "  "], '<file>: the path "  " is only spaces', "<file> takes a path"],
    [["check", " "], '<files>: the path " " is only spaces', "<files> takes a path (.tcod files)"],
    [["compile", "-"], "<file>: '-' (standard input or output) is not a path tcod reads or writes", "<file> takes a path"],
    [["fmt", "-"], "<files>: '-' (standard input or output)", "<files> takes a path (.tcod files or folders"],
    [["metrics", ""], "<runDirs>: the path is empty", "<runDirs> takes a path (run folders"],
    [["compare", "x", "-"], "<run_dirs>: '-' (standard input or output)", "<run_dirs> takes a path"],
    [["import", "trinity", "-"], "<config>: '-' (standard input or output)", "<config> takes a path (Trinity-RFT config"],
    [["explain", "", "a.b"], "<file>: the path is empty", "<file> takes a path"],
    [["run", F, "--out", "  ", "-q"], '--out: the path "  " is only spaces; --out takes a folder', "--out names a folder"],
    [["run", F, "--out", "-", "-q"], "--out: '-' (standard input or output) is not a path tcod reads or writes; --out takes a folder", "Name a folder, or drop --out."],
    [["run", F, "--out", "-q"], "--out: '-q' looks like a flag, not a path; --out takes a folder", "Give --out a value before the next flag; for a folder whose name starts with '-', write ./-q."],
    [["compile", F, "-o", "-"], "--out: '-' (standard input or output)", "--out names a folder"],
    [["compare", "x", "--out", "-"], "--out: '-' (standard input or output)", "--out names a file"],
    [["explain", F, "texthouse_tcod_f2b.horizon", "--trace", "-"], "--trace: '-' (standard input or output)", "--trace names a metrics.jsonl"],
  ])("tcod %j", (args, message, hint) => refused(args, message, hint));
});

describe("numbers", () => {
  it.each([
    [["run", F, "--seed", "", "--dry-run"], '--seed "": expected an integer', "e.g. --seed 7"],
    [["run", F, "--seed", "0x10", "--dry-run"], "--seed 0x10: expected an integer", "e.g. --seed 7"],
    [["check", F, "--max-points", ""], '--max-points "": expected a whole number of points, at least 1', "e.g. --max-points 5000"],
    [["run", F, "--sweep", "--parallel", "0x2"], "--parallel 0x2: expected a whole number from 1 to 64", "The points a sweep runs at once"],
    [["run", F, "--sweep", "--parallel", "1e1"], "--parallel 1e1: expected a whole number from 1 to 64", "e.g. --parallel 4"],
    [["run", F, "--sweep", "--parallel", ""], '--parallel "": expected a whole number from 1 to 64', "e.g. --parallel 4"],
    [["compare", "x", "--level", "0x1"], "--level 0x1: expected a success rate in [0, 1]", "e.g. --level 0.5"],
    [["compare", "x", "--level", "Infinity"], "--level Infinity: expected a success rate in [0, 1]", "e.g. --level 0.5"],
    [["explain", F, "texthouse_tcod_f2b.horizon", "--at", " "], '--at " ": an empty entry is not a whole number ≥ 0', "e.g. --at 0,6,12"],
    [["export", "trinity", F, "--infra", "nodeNum=0x2"], "--infra nodeNum needs a number, got '0x2'", "--infra takes KEY=VALUE"],
    [["export", "trinity", F, "--infra", "gpuPerNode="], "--infra gpuPerNode needs a number, got ''", "--infra takes KEY=VALUE"],
  ])("tcod %j", (args, message, hint) => refused(args, message, hint));

  it("--level takes a decimal with an exponent (1e-1 is 0.1)", () => {
    const cwd = mkdtempSync(join(tmpdir(), "tcod-hostile-"));
    const r = tcod(["compare", "x", "--level", "1e-1"], cwd);
    // Past --level: the missing run folder is what is refused.
    expectUserError(r, "TC7009", { message: "no such folder" });
  });
});

describe("a value that is the next flag, for a flag whose value is not a path (was: taken as the value)", () => {
  it.each([
    [["compare", "x", "--title", "-x"], "--title -x: '-x' looks like a flag, not its value; --title takes <text>", "write it joined to the flag: --title=-x"],
    [["run", F, "--curriculum", "-x"], "--curriculum -x: '-x' looks like a flag, not its value; --curriculum takes <name>", "Give --curriculum its value before the next flag"],
    [["run", F, "--set", "-x"], "--set -x: '-x' looks like a flag, not its value; --set takes <target=value>", "--set=-x"],
    [["check", F, "--set", "-q"], "--set -q: '-q' looks like a flag, not its value", "--set=-q"],
    [["compile", F, "--curriculum", "--max-points", "5"], "--curriculum --max-points: '--max-points' looks like a flag, not its value", "--curriculum=--max-points"],
    [["export", "trinity", F, "--target", "-x"], "--target -x: '-x' looks like a flag, not its value", "--target=-x"],
    [["export", "trinity", F, "--infra", "-q"], "--infra -q: '-q' looks like a flag, not its value", "--infra=-q"],
    [["run", F, "--wandb", "-q"], "--wandb -q: '-q' looks like a flag, not its value", "--wandb=-q"],
    [["plot", F, "--set", "-1"], "--set -1: '-1' looks like a flag, not its value", "--set=-1"],
    // A numeric flag takes a negative number to its own check (which gives the range), not a word.
    [["run", F, "--seed", "-x", "--dry-run"], "--seed -x: '-x' looks like a flag, not a number; --seed takes <n>", "--seed=-x"],
    [["plot", F, "--expert-length", "-q"], "--expert-length -q: '-q' looks like a flag, not a number", "Give --expert-length its value"],
    [["compare", "x", "--level", "-0.5"], "--level -0.5: expected a success rate in [0, 1]", "e.g. --level 0.5"],
    [["run", F, "--sweep", "--parallel", "-2"], "--parallel -2: expected a whole number from 1 to 64", "e.g. --parallel 4"],
    [["lsp", "--clientProcessId", "-5"], "--clientProcessId -5: expected a process id, a whole number from 1 to 2147483647", "tcod lsp --stdio"],
  ])("tcod %j", (args, message, hint) => refused(args, message, hint));

  it("a value written joined to its flag is the value the user meant (--title=-x), and a negative seed is a seed", () => {
    const cwd = mkdtempSync(join(tmpdir(), "tcod-hostile-"));
    // Past --title: the missing run folder is what is refused.
    expectUserError(tcod(["compare", "x", "--title=-x"], cwd), "TC7009", { message: "no such folder" });
    const r = tcod(["run", F, "--seed", "-3", "--dry-run"], cwd);
    expect(r.status, r.stderr).toBe(0);
  });
});

describe("numbers past what the plan can reach (was: plotted and explained at a 1,000-turn expert length, or past the last step)", () => {
  const B = join(ROOT, "examples/texthouse/tcod-b2f.tcod");
  it.each([
    [["plot", B, "--expert-length", "31"], "--expert-length 31: 31 turns is past the episodes of texthouse_tcod_b2f, which last at most 30 turns; an expert length is from 0 to 30", "Give expert lengths from 0 (a task without an expert path) to 30 (the plan's max_turns)"],
    [["plot", B, "--expert-length", "1000", "--out", "svg"], "--expert-length 1000: 1000 turns is past the episodes of texthouse_tcod_b2f", "e.g. --expert-length 10"],
    [["plot", B, "--expert-length", "99999999999999999999"], "--expert-length 99999999999999999999: '99999999999999999999' is beyond the largest exact whole number", "Give smaller numbers"],
    [["plot", B, "--expert-length", "1.5"], "--expert-length 1.5: '1.5' is not a whole number ≥ 0", "e.g. --expert-length 10"],
    [["plot", B, "--expert-length", "-1"], "--expert-length -1: '-1' is not a whole number ≥ 0", "e.g. --expert-length 10"],
    [["explain", B, "texthouse_tcod_b2f.prefix", "--expert-length", "3,50"], "--expert-length 3,50: 50 turns is past the episodes of texthouse_tcod_b2f, which last at most 30 turns", "to 30 (the plan's max_turns)"],
    [["explain", B, "texthouse_tcod_b2f.prefix", "--at", "0,41"], "--at 0,41: step 41 is past the end of texthouse_tcod_b2f, which has 40 steps; a step is from 0 to 40", "Give steps from 0 to 40, e.g. --at 0,20,40."],
    [["lsp", "--clientProcessId", "0"], "--clientProcessId 0: expected a process id, a whole number from 1 to 2147483647", "tcod lsp --stdio"],
    [["lsp", "--clientProcessId", "99999999999"], "--clientProcessId 99999999999: expected a process id", "tcod lsp --stdio"],
  ])("tcod %j", (args, message, hint) => refused(args, message, hint));

  it("the bounds themselves are taken: an expert length of 0 (a task without an expert path) and of max_turns; without the flag, 10 turns or max_turns when less", () => {
    const cwd = mkdtempSync(join(tmpdir(), "tcod-hostile-"));
    for (const L of ["0", "30"]) {
      const r = tcod(["plot", B, "--expert-length", L], cwd);
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout).toContain(`prefix (L=${L})`);
    }
    const short = tcod(["plot", B, "--set", "env = texthouse(split: \"train\", max_turns: 6 turns)"], cwd);
    expect(short.status, short.stderr).toBe(0);
    expect(short.stdout).toContain("prefix (L=6)");
    const e = tcod(["explain", B, "texthouse_tcod_b2f.prefix", "--at", "0,40", "--expert-length", "0,30"], cwd);
    expect(e.status, e.stderr).toBe(0);
  });
});

describe("choices and texts", () => {
  it.each([
    [["export", "trinity", F, "--target", ""], "unknown --target ''; use tcod-fork or upstream", "--target tcod-fork (the default)"],
    [["export", "yaml", F], "unknown format 'yaml'; the formats are: trinity", `e.g. tcod export trinity ${F}`],
    [["export", "trinity", F, "--infra", "nodeNum"], "cannot parse --infra 'nodeNum'", "--infra takes KEY=VALUE"],
    [["compare", "x", "--title", " "], '--title " ": the title is empty', "drop --title for the default one"],
  ])("tcod %j", (args, message, hint) => refused(args, message, hint));
});

describe("a flag another one would silently ignore", () => {
  const run = mkdtempSync(join(tmpdir(), "tcod-hostile-run-"));
  it.each([
    [["run", "--resume", run, "--out", "elsewhere"], `--out elsewhere with --resume ${run}: a resumed run goes on in its own folder`, `Drop --out; the run continues in ${run}.`],
    [["run", F, "--resume", run, "--sweep"], "--sweep does not take --resume", "A sweep resumes its points by itself"],
    [["run", F, "--resume", run, "--dry-run"], "--dry-run does not take --resume", "--dry-run reads a .tcod file"],
    [["run", "--resume", run, "--curriculum", "x"], "--curriculum x with --resume alone: a run folder holds the plan of one curriculum", "Drop --curriculum"],
    [["run", F, "--parallel", "2", "-q"], "--parallel 2 without --sweep: only a sweep runs points at once", "Add --sweep"],
    [["plot", F, "--graph", "--trace", "x"], "--trace has no effect with --graph", "--graph draws the execution graph, which has no schedule values; drop --trace"],
    [["plot", F, "--graph", "--expert-length", "3"], "--expert-length has no effect with --graph", "drop --expert-length"],
    [["explain", F, "texthouse_tcod_f2b", "--graph", "--at", "1"], "--at has no effect with --graph", "--graph lists the execution graph, which has no values at steps; drop --at"],
    // A plan .json is one compiled plan: --curriculum and --max-points choose among or bound a .tcod file's (were: dropped without a word).
    [["run", P, "--curriculum", "x", "-q"], `--curriculum has no effect with a plan .json: ${P} is one compiled plan already`, "drop it, or give the .tcod file the plan was compiled from"],
    [["run", P, "--max-points", "3", "-q"], "--max-points has no effect with a plan .json", "give the .tcod file"],
    [["export", "trinity", P, "--curriculum", "x"], "--curriculum has no effect with a plan .json", "give the .tcod file"],
    [["plot", P, "--max-points", "4"], "--max-points has no effect with a plan .json", "give the .tcod file"],
  ])("tcod %j", (args, message, hint) => refused(args, message, hint));

  it("metrics --csv --json: refused on the result line, with no CSV before it", () => {
    const r = tcod(["metrics", "x", "--csv", "--json"], ROOT);
    expect(r.status).toBe(1);
    const lines = r.stdout.trim().split("\n");
    expect(lines).toHaveLength(1);
    const last = JSON.parse(lines[0]!) as { error: { code: string; message: string; hint: string } };
    expect(last.error).toMatchObject({ code: "TC7009", message: "--csv and --json are two formats of stdout; give one" });
    expect(last.error.hint).toContain("--csv for every row as CSV");
  });
});

describe("--resume refusals: the advice on the hint line", () => {
  const advice = "Give --resume the --out folder of an earlier `tcod run`";
  it.each([
    [["run", "--resume", "/nope-tcod"], "--resume /nope-tcod: no such folder"],
    [["run", "--resume", "/dev/null"], "--resume /dev/null: not a folder"],
    [["run", "--resume", ROOT], `--resume ${ROOT}: not a run folder (no plan.json)`],
  ])("tcod %j", (args, message) => {
    const r = tcod(args, ROOT);
    expectUserError(r, "TC7009", { at: "tcod run", message, hint: advice });
    expect(r.stderr.split("\n")[0]).not.toContain("give the --out folder");
  });
});

describe.skipIf(process.platform === "win32")("a device, pipe or socket where a file is written whole (was: replaced by the file, as root /dev/full too)", () => {
  it("import --out PIPE --force and compile into a folder holding a pipe of the plan's name: TC7009, the pipe kept", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-special-"));
    const pipe = join(dir, "p.tcod"), plan = join(dir, "texthouse_tcod_f2b.plan.json");
    for (const p of [pipe, plan]) expect(spawnSync("mkfifo", [p]).status).toBe(0);
    const hint = "Move it out of the way, or give --out another path.";
    expectUserError(tcod(["import", "trinity", join(ROOT, "test/fixtures/trinity/official/opd.yaml"), "--out", pipe, "--force"], dir), "TC7009", {
      at: pipe, message: `cannot write ${pipe}: it is a pipe, which the file tcod writes whole would replace`, hint,
    });
    expectUserError(tcod(["compile", F, "--out", dir], dir), "TC7009", { at: plan, message: `cannot write ${plan}: it is a pipe`, hint });
    for (const p of [pipe, plan]) expect(lstatSync(p).isFIFO()).toBe(true);
  });
});
