/**
 * Every error of the CLI is a coded error: what commander refuses, what `tcod compare`, `tcod fmt`
 * and `tcod metrics` cannot read, an empty or mistyped `--curriculum`, a source over the size limit
 * (its own code), an --out where no file can be made. Each: a TCxxxx code, at the file (and line)
 * where there is one, else the command, its message, a hint, exit 1, no stack trace (test/helpers/cli.ts).
 */
import { spawn, spawnSync } from "node:child_process";
import { closeSync, existsSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectUserError as userError } from "../helpers/cli.js";

const ROOT = join(import.meta.dirname, "../..");
const tcod = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
const F = "examples/texthouse/tcod-b2f.tcod";
const linux = existsSync("/proc/self");

/** A finished run folder as compare and metrics read it: the plan and one metrics row. */
function runFolder(parent: string, name: string): string {
  const dir = join(parent, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "plan.json"), readFileSync(join(ROOT, "test/fixtures/plans/texthouse-f2b-small.json")));
  // The start evaluation and one training step (compare leaves out a run without a training step).
  const train = {
    kind: "train", step: 1, policyStep: 0, policyVersion: 1, episodes: 4, successRate: 0.25, meanReward: 0.25,
    horizon: 2, prefix: 0, expertLength: 0, studentTurns: 2, turns: 2, invalidActions: 0, admissibleRate: 0.5,
    noExperience: 0, droppedFailed: 0, droppedStale: 0, kl: { mean: 0.1, perTurn: [0.1, 0.2] }, tokens: { prompt: 10, response: 3 },
    coefs: { opd: 1 }, blendWeight: null, adaptiveCap: null, lr: 0.01, loss: 0.5, gradNorm: 1.5, updates: 1, time: { rollout: 0.5 },
  };
  writeFileSync(join(dir, "metrics.jsonl"), '{"kind":"eval","name":"valid","step":0,"successRate":0.25,"meanReward":0.25,"meanTurns":3,"episodes":4,"time":{"eval":0}}\n' + JSON.stringify(train) + "\n");
  return dir;
}

describe("command lines commander refuses", () => {
  it.each([
    [["nope"], "tcod", "unknown command 'nope'", "`tcod --help` lists the commands."],
    [["check"], "tcod check", "missing required argument 'files'", "`tcod check --help` shows its arguments and options."],
    [["compile", F, "--bogus"], "tcod compile", "unknown option '--bogus'", "`tcod compile --help` shows its arguments and options."],
    [["compile", F, "--curriculum"], "tcod compile", "option '--curriculum <name>' argument missing", "`tcod compile --help` shows its arguments and options."],
    [["explain", F], "tcod explain", "missing required argument 'target'", "`tcod explain --help` shows its arguments and options."],
  ])("tcod %j", (args, at, message, hint) => {
    userError(tcod(...args), "TC7009", { at, message, hint });
  });

  it("with --json: the result line carries the code", () => {
    const r = tcod("check", F, "--json", "--bogus");
    expect(r.status).toBe(1);
    const last = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
    expect(last).toMatchObject({ command: "check", ok: false, exitCode: 1, error: { code: "TC7009" } });
    expect(last.error.message).toContain("--bogus");
  });

  it("--help and --version still exit 0", () => {
    expect(tcod("--version").status).toBe(0);
    expect(tcod("compile", "--help").status).toBe(0);
  });
});

describe("tcod compare: folders it cannot read", () => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-coded-"));
  const good = runFolder(dir, "good");

  it("a missing path, a folder that is not a run, a file", () => {
    const hint = "Pass the folders `tcod run --out DIR` wrote";
    userError(tcod("compare", join(dir, "nope"), "--out", join(dir, "c.html")), "TC7009", { at: join(dir, "nope"), message: "no such folder", hint });
    mkdirSync(join(dir, "empty"));
    userError(tcod("compare", join(dir, "empty"), "--out", join(dir, "c.html")), "TC7009", { at: join(dir, "empty"), message: "not a run folder (it has no plan.json and no metrics.jsonl)", hint });
    userError(tcod("compare", join(good, "plan.json"), "--out", join(dir, "c.html")), "TC7009", { at: join(good, "plan.json"), message: "not a run folder (it is a file)", hint });
  });

  it("a damaged plan.json: TC7014 with its line and column", () => {
    const run = runFolder(dir, "bad-plan");
    writeFileSync(join(run, "plan.json"), '{\n  "name": "x",\n  oops\n}\n');
    userError(tcod("compare", run, "--out", join(dir, "c.html")), "TC7014", { at: `${join(run, "plan.json")}:3:3`, message: "the run's plan is not JSON", hint: "restore it, or run the curriculum again" });
  });

  it("a plan.json that is not a plan, a missing metrics.jsonl, a damaged one, one that is a folder: TC7014 naming the file", () => {
    const notPlan = runFolder(dir, "not-plan");
    writeFileSync(join(notPlan, "plan.json"), "{}");
    userError(tcod("compare", notPlan, "--out", join(dir, "c.html")), "TC7014", { at: join(notPlan, "plan.json"), message: "the run's plan is not a tcod plan (it has no name or clock.seed)", hint: "restore it" });
    const noMetrics = runFolder(dir, "no-metrics");
    rmSync(join(noMetrics, "metrics.jsonl"));
    userError(tcod("compare", noMetrics, "--out", join(dir, "c.html")), "TC7014", { at: join(noMetrics, "metrics.jsonl"), message: `a damaged run folder: ${noMetrics} has no metrics.jsonl`, hint: "Restore the file" });
    const damaged = runFolder(dir, "damaged");
    writeFileSync(join(damaged, "metrics.jsonl"), "garbage{\n" + readFileSync(join(good, "metrics.jsonl"), "utf8"));
    userError(tcod("compare", damaged, "--out", join(dir, "c.html")), "TC7014", { at: `${join(damaged, "metrics.jsonl")}:1:1`, message: /line 1 is not a metrics row \(truncated or overwritten\): not JSON \(Unexpected token 'g' at column 1\)/, hint: "restore metrics.jsonl" });
    const folder = runFolder(dir, "metrics-folder");
    rmSync(join(folder, "metrics.jsonl"));
    mkdirSync(join(folder, "metrics.jsonl"));
    userError(tcod("compare", folder, "--out", join(dir, "c.html")), "TC7014", { at: join(folder, "metrics.jsonl"), message: "(it is a folder, not a file)", hint: "A run's metrics.jsonl is a file of JSON rows" });
  });

  it("a plan.json nested 100,000 levels deep: TC7014 naming the file and the path (was a stack overflow, an internal error)", () => {
    const run = runFolder(dir, "deep-plan");
    const plan = JSON.parse(readFileSync(join(run, "plan.json"), "utf8")) as Record<string, unknown>;
    const text = JSON.stringify({ ...plan, extra: "@" }).replace('"@"', "[".repeat(100_000) + "]".repeat(100_000));
    writeFileSync(join(run, "plan.json"), text);
    userError(tcod("compare", run, good, "--out", join(dir, "c.html")), "TC7014", {
      at: join(run, "plan.json"), message: /^the run's plan is nested 100,000 levels deep; a plan tcod writes nests at most 1,000 \(at \$\.extra\[0\]\[0\]/, hint: "restore it",
    });
  });

  it("a metrics row without the fields the page reads: TC7014 at its line (was a TypeError)", () => {
    const run = runFolder(dir, "thin-row");
    writeFileSync(join(run, "metrics.jsonl"), readFileSync(join(good, "metrics.jsonl"), "utf8") + '{"kind":"eval","step":1,"success":0.5}\n');
    userError(tcod("compare", run, "--out", join(dir, "c.html")), "TC7014", { at: `${join(run, "metrics.jsonl")}:3`, message: "line 3 is an eval row without a string `name`", hint: "restore metrics.jsonl" });
  });

  it("every bad folder is reported, in order", () => {
    const r = tcod("compare", join(dir, "nope1"), good, join(dir, "nope2"), "--out", join(dir, "c.html"));
    userError(r, "TC7009", { at: join(dir, "nope1"), message: "no such folder", hint: "Pass the folders" });
    // The second, each with its hint, after the first.
    const hint = "  hint: Pass the folders `tcod run --out DIR` wrote (each holds plan.json and metrics.jsonl).";
    expect(r.stderr).toBe([`${join(dir, "nope1")} error TC7009: no such folder`, hint, `${join(dir, "nope2")} error TC7009: no such folder`, hint, ""].join("\n"));
  });

  it("a run's metrics.jsonl is taken for its folder; an empty --level is an error", () => {
    const r = tcod("compare", join(good, "metrics.jsonl"), "--out", join(dir, "c.html"));
    expect(r.status, r.stderr).toBe(0);
    userError(tcod("compare", good, "--level", "", "--out", join(dir, "c.html")), "TC7009", { at: "tcod compare", message: '--level "": expected a success rate in [0, 1]', hint: "e.g. --level 0.5" });
  });

  it.skipIf(!linux)("--out in /proc (a folder that exists but takes no files): TC7009, not a stack", () => {
    userError(tcod("compare", good, "--out", "/proc/tcod-compare.html"), "TC7009", { at: "/proc", message: "cannot write /proc: new files cannot be made in it", hint: "Give the folder of --out a folder you can write" });
  });
});

describe("a plan JSON that does not parse (run, export)", () => {
  it("is TC7009 at its line and column, with a hint", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-coded-"));
    const plan = join(dir, "p.plan.json");
    writeFileSync(plan, '{\n  "schema": "tcod.plan/2",\n  oops\n}\n');
    for (const args of [["run", plan, "-q", "--out", join(dir, "r")], ["export", "trinity", plan, "--out", join(dir, "e")]]) {
      userError(tcod(...args), "TC7009", { at: `${plan}:3:3`, message: "not valid JSON", hint: "Give a plan that `tcod compile` wrote, or the .tcod file itself." });
    }
  });
});

/**
 * `tcod export trinity PLAN.json` reads the plan through the loader `tcod run PLAN.json` uses
 * (bin/plan-json.ts): the same bad plan is the same error, and --set sets a field of the plan as run
 * does (export had its own reader, which ignored --set on a plan .json).
 */
describe("export and run of the same plan .json", () => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-coded-export-"));
  const compiled = tcod("compile", "examples/alfworld/tcod-f2b.tcod", "--out", dir);
  const good = join(dir, "alfworld_tcod_f2b.plan.json");
  /** The error lines of a command, its own name left out (`tcod run` / `tcod export` where no file is named). */
  const errors = (r: ReturnType<typeof tcod>) => r.stderr.replace(/^tcod (run|export)(?= error )/gm, "tcod CMD");
  const both = (plan: string, ...flags: string[]) => [
    tcod("run", plan, ...flags, "-q", "--out", join(dir, "r")),
    tcod("export", "trinity", plan, ...flags, "--out", join(dir, "e")),
  ] as const;

  it.each([
    ["not JSON", "not.plan.json", "{\n  oops\n}\n", [], "TC7009"],
    ["empty", "empty.plan.json", "", [], "TC7009"],
    ["not a plan", "bad.plan.json", '{"schema":"tcod.plan/2","name":"x"}', [], "TC7001"],
    ["--set of a field the plan does not have", undefined, undefined, ["--set", "nope.x=1"], "TC7009"],
    ["--set that makes the plan invalid", undefined, undefined, ["--set", "clock.steps=-3"], "TC7001"],
  ] as const)("%s: the same coded error", (_what, name, text, flags, code) => {
    expect(compiled.status, compiled.stderr).toBe(0);
    let plan = good;
    if (name !== undefined) { plan = join(dir, name); writeFileSync(plan, text!); }
    const [run, exp] = both(plan, ...flags);
    userError(run, code);
    userError(exp, code);
    expect(errors(exp)).toBe(errors(run));
  });

  it("--set on a plan .json is applied to what is exported", () => {
    expect(compiled.status, compiled.stderr).toBe(0);
    const r = tcod("export", "trinity", good, "--set", "clock.steps=20", "--out", join(dir, "set"));
    expect(r.status, r.stderr).toBe(0);
    const yaml = readFileSync(join(dir, "set", "alfworld_tcod_f2b.yaml"), "utf8");
    expect(yaml).toContain("total_steps: 20");
    expect(yaml).not.toContain("total_steps: 250");
  });
});

describe("tcod metrics: a damaged metrics file is TC7014", () => {
  it("naming the file and line; the metrics.jsonl path itself is accepted", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-coded-"));
    const run = runFolder(dir, "run");
    expect(tcod("metrics", join(run, "metrics.jsonl")).status).toBe(0);
    writeFileSync(join(run, "metrics.jsonl"), "{not json\n" + readFileSync(join(run, "metrics.jsonl"), "utf8"));
    userError(tcod("metrics", run), "TC7014", { at: `${join(run, "metrics.jsonl")}:1:2`, message: /line 1 is not a metrics row.*not JSON \(Expected property name or '\}' at column 2\)/, hint: "restore metrics.jsonl" });
    userError(tcod("metrics", join(dir, "nope")), "TC7009", { at: join(dir, "nope"), message: "no such folder", hint: "Give the --out folder of a `tcod run`, or a metrics.jsonl.before-restart-N file in one." });
  });

  it("a train row without `kl` (or with `kl` null): the error compare gives, for every output (was a TypeError)", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-coded-"));
    const run = runFolder(dir, "run");
    for (const row of ['{"kind":"train","step":1}', '{"kind":"train","step":1,"successRate":0,"horizon":1,"prefix":0,"studentTurns":1,"kl":null}']) {
      writeFileSync(join(run, "metrics.jsonl"), row + "\n");
      const c = tcod("compare", run, "--out", join(dir, "c.html"));
      userError(c, "TC7014", { at: `${join(run, "metrics.jsonl")}:1`, message: "line 1 is a train row without ", hint: "restore metrics.jsonl" });
      const first = c.stderr.split("\n")[0]!;
      for (const flags of [[], ["--csv"], ["--json"], ["--tensorboard"]]) {
        const r = tcod("metrics", run, ...flags);
        expect(r.status, `${flags} ${r.stderr}`).toBe(1);
        if (flags[0] === "--json") continue; // the error is the JSON result line
        userError(r, "TC7014", { at: `${join(run, "metrics.jsonl")}:1`, hint: "restore metrics.jsonl" });
        expect(r.stderr.split("\n")[0]).toBe(first);
      }
    }
  });
});

describe("tcod run --out a folder that holds a metrics.jsonl", () => {
  it("without plan.json: not offered --resume (it cannot work), the file untouched; with one: --resume", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-coded-"));
    const other = join(dir, "other");
    mkdirSync(other);
    writeFileSync(join(other, "metrics.jsonl"), '{"a":1}\n');
    const r = tcod("run", F, "--out", other, "-q");
    userError(r, "TC7009", {
      at: join(other, "metrics.jsonl"), message: `${other} holds a metrics.jsonl but no plan.json, so it is not a run --resume can continue; it is left as it is`,
      hint: `Choose another --out, or move ${join(other, "metrics.jsonl")} away`,
    });
    expect(r.stderr).not.toContain("continue it with --resume");
    expect(readFileSync(join(other, "metrics.jsonl"), "utf8")).toBe('{"a":1}\n');
    const run = runFolder(dir, "run");
    const again = tcod("run", F, "--out", run, "-q");
    userError(again, "TC7009", { at: "tcod run", message: `${run} already holds a run; continue it with --resume ${run} or choose another --out`, hint: "its metrics.jsonl is never overwritten" });
  });
});

describe("tcod fmt: files it cannot read are the diagnostics `tcod check` prints", () => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-coded-"));

  it("a missing path (TC1101), a folder without .tcod files (TC7009), a device (TC1109)", () => {
    const nope = join(dir, "nope.tcod");
    const missing = tcod("fmt", nope);
    // The hint says what to do (it was "Cannot read it: no such file", the message again).
    userError(missing, "TC1101", { at: `${nope}:1:1`, message: `Cannot find module '${nope}' (looked for ${nope}).`, hint: "Nothing is there (no such file): check the path's spelling" });
    expect(missing.stderr).not.toContain("ENOENT");
    mkdirSync(join(dir, "nothing.tcod"));
    userError(tcod("fmt", join(dir, "nothing.tcod")), "TC7009", { at: join(dir, "nothing.tcod"), message: `${join(dir, "nothing.tcod")} holds no .tcod files`, hint: "Give .tcod files, or folders that hold some" });
    if (linux) {
      // Named as given, not 'null'.
      userError(tcod("fmt", "/dev/null"), "TC1109", { at: "/dev/null:1:1", message: "Cannot read '/dev/null': it is not a regular file", hint: "Give a .tcod file that you may read" });
    }
  });

  it("a source over the size limit: TC1108, naming the size and the limit", () => {
    const big = join(dir, "big.tcod");
    const fd = openSync(big, "w");
    ftruncateSync(fd, 33 * 1024 * 1024);
    closeSync(fd);
    userError(tcod("fmt", big), "TC1108", { at: `${big}:1:1`, message: `'${big}' is 33 MiB, more than the 32 MiB tcod reads of a source file; it was not read.`, hint: "Split it into modules" });
  });

  it("a folder passed to check: TC1109, not 'cannot find module'", () => {
    const folder = join(dir, "nothing.tcod");
    userError(tcod("check", folder), "TC1109", { at: `${folder}:1:1`, message: `Cannot read '${folder}': it is a folder, not a file.`, hint: "Give a .tcod file that you may read" });
  });
});

describe('--curriculum "" or a mistyped name never means "all of them"', () => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-coded-"));
  const list = `Curricula in ${F}: texthouse_tcod_b2f.`;

  it("a name that cannot be a curriculum's is the flag's fault: TC7009 in every command, the file's curricula as the hint", () => {
    const out = join(dir, "out");
    const empty = (cmd: string) => ({ at: `tcod ${cmd}`, message: '--curriculum "": the name is empty', hint: list });
    userError(tcod("compile", F, "--curriculum", "", "--out", out), "TC7009", empty("compile"));
    expect(existsSync(join(out, "texthouse_tcod_b2f.plan.json"))).toBe(false);
    userError(tcod("export", "trinity", F, "--curriculum", "", "--out", out), "TC7009", empty("export"));
    userError(tcod("check", F, "--curriculum", " "), "TC7009", { ...empty("check"), message: '--curriculum " ": the name is empty' });
    userError(tcod("run", F, "--curriculum", "", "-q", "--out", join(dir, "run")), "TC7009", empty("run"));
    expect(existsSync(join(dir, "run", "metrics.jsonl"))).toBe(false);
    userError(tcod("run", F, "--dry-run", "--curriculum", ""), "TC7009", empty("run"));
    userError(tcod("compile", F, "--curriculum", "a.b", "--out", out), "TC7009", {
      at: "tcod compile", message: "--curriculum a.b: 'a.b' is not a curriculum's name (letters, digits and _, not starting with a digit)", hint: list,
    });
  });

  it("a well-formed name the file lacks: TC2017 at the argument, not at line 1 of the file, in every command", () => {
    const out = join(dir, "out");
    const typo = { at: "<--curriculum>:1:1", message: "Cannot find curriculum 'texthouse_tcod_b2'. Did you mean 'texthouse_tcod_b2f'?", hint: list };
    for (const args of [["compile", F, "--out", out], ["export", "trinity", F, "--out", out], ["check", F], ["run", F, "-q", "--out", join(dir, "run2")], ["run", F, "--print-config"]]) {
      const r = tcod(...args, "--curriculum", "texthouse_tcod_b2");
      userError(r, "TC2017", typo);
      expect(r.stderr).toContain("  1 | texthouse_tcod_b2\n    | ^^^^^^^^^^^^^^^^^\n");
    }
    expect(existsSync(join(dir, "run2", "metrics.jsonl"))).toBe(false);
    // explain's target: the curriculum's part of it.
    const r = tcod("explain", F, "texthouse_tcod_b2.horizon");
    userError(r, "TC2017", { ...typo, at: "<target>:1:1" });
    expect(r.stderr).toContain("  1 | texthouse_tcod_b2.horizon\n    | ^^^^^^^^^^^^^^^^^\n");
    userError(tcod("explain", F, "nope", "--graph"), "TC2017", { at: "<target>:1:1", message: "Cannot find curriculum 'nope'.", hint: list });
  });

  it("run: a sweep point of the curriculum that it lacks", () => {
    userError(tcod("run", F, "--dry-run", "--curriculum", "texthouse_tcod_b2f@steps=3"), "TC7009", {
      at: "tcod run", message: `--curriculum texthouse_tcod_b2f@steps=3: no sweep point of that name in ${F}.`, hint: "Name one of its points, as `tcod run",
    });
  });

  it.each([
    ["....", "a part between dots is empty"], ["a.", "a part between dots is empty"], [".horizon", "a part between dots is empty"],
    ["a..b", "a part between dots is empty"], ["a b.c", "'a b' is not a name (letters, digits and _, not starting with a digit)"], ["", "it is empty"], ["texthouse_tcod_b2f", "it names no field"],
    ["texthouse_tcod_b2f.2x", "'2x' is not a name (letters, digits and _, not starting with a digit)"],
  ])("explain target %j: TC7009 saying what a target looks like", (target, why) => {
    userError(tcod("explain", F, target), "TC7009", {
      at: "tcod explain", message: `: ${why}; a target is CURRICULUM.FIELD[.MEMBER…]`, hint: `e.g. tcod explain ${F} texthouse_tcod_b2f.horizon. ${list}`,
    });
  });

  it("explain --graph takes a curriculum alone", () => {
    userError(tcod("explain", F, "texthouse_tcod_b2f.horizon", "--graph"), "TC7009", {
      at: "tcod explain", message: "target texthouse_tcod_b2f.horizon: with --graph, name a curriculum alone; a target is CURRICULUM", hint: `e.g. tcod explain ${F} texthouse_tcod_b2f --graph. ${list}`,
    });
  });

  it("explain: a member of a field left at its default names nothing (it was explained as the field)", () => {
    userError(tcod("explain", "examples/texthouse/opd.tcod", "texthouse_opd.horizon.every"), "TC7009", {
      at: "tcod explain", message: "'horizon' is not set in curriculum 'texthouse_opd', so it has no member 'every'", hint: "Explain the field itself: texthouse_opd.horizon",
    });
  });

  it("run --wandb with an empty project", () => {
    userError(tcod("run", F, "--wandb", "", "-q", "--out", join(dir, "w")), "TC7009", { at: "tcod run", message: "--wandb: give the Weights & Biases project to log to", hint: "e.g. --wandb my-project" });
  });
});

describe.skipIf(!linux)("--out in a folder that exists but takes no new files (/proc)", () => {
  it.each([
    ["compile", [F, "--out", "/proc"]],
    ["plot", [F, "--out", "/proc"]],
    ["plot", [F, "--graph", "--out", "/proc"]],
    ["run", [F, "--set", "steps=1", "-q", "--out", "/proc"]],
    ["export", ["trinity", "examples/alfworld/tcod-f2b.tcod", "--out", "/proc"]],
    ["import", ["trinity", "test/fixtures/trinity/official/opd.yaml", "--out", "/proc/tcod-x.tcod"]],
  ])("%s", (cmd, args) => {
    userError(tcod(cmd, ...args), "TC7009", {
      at: "/proc", message: "cannot write /proc: new files cannot be made in it (a special or read-only file system)",
      hint: cmd === "import" ? "Give the folder of --out a folder you can write" : "Give --out a folder you can write",
    });
  });
});

describe("tcod lsp", () => {
  /** Sends `initialize` and resolves with the first bytes the server answers. */
  function initialize(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      const p = spawn(process.execPath, [join(ROOT, "bin/tcod.mjs"), "lsp", ...args], { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] });
      let out = "", err = "";
      const timer = setTimeout(() => { p.kill(); reject(new Error(`no answer; stderr: ${err}`)); }, 30_000);
      p.stderr.on("data", (b: Buffer) => { err += b; });
      p.stdout.on("data", (b: Buffer) => {
        out += b;
        if (out.includes('"result"')) { clearTimeout(timer); p.kill(); resolve(out); }
      });
      p.on("exit", () => { clearTimeout(timer); if (!out.includes('"result"')) reject(new Error(`exited; stderr: ${err}`)); });
      const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "initialize", params: { processId: null, rootUri: null, capabilities: {} } });
      p.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    });
  }

  it("starts on stdio without --stdio (the default), and with the client's --clientProcessId", async () => {
    expect(await initialize([])).toContain('"capabilities"');
    expect(await initialize(["--stdio", `--clientProcessId=${process.pid}`])).toContain('"capabilities"');
  }, 90_000);

  it("a --clientProcessId that is not a number is TC7009", () => {
    userError(tcod("lsp", "--clientProcessId=abc"), "TC7009", { at: "tcod lsp", message: "--clientProcessId abc: expected a process id", hint: "start the server with `tcod lsp --stdio`" });
  });
});
