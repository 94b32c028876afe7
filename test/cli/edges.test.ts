/**
 * The command line at its edges: an --out that is a file or cannot be written, prototype keys in
 * --set, non-numbers in numeric flags, Infinity in an override, hostile Trinity configs. Every one a
 * coded error (TCxxxx) with exit 1, at the file or flag it is about, with its message and a hint, and
 * no stack trace (test/helpers/cli.ts); nothing written where it should not be. And a
 * reader that closes the pipe early: the rest of the output is dropped, exit 0, no stack trace.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, closeSync, existsSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { expectUserError as userError } from "../helpers/cli.js";

const ROOT = join(import.meta.dirname, "../..");
const tcod = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
const F = "examples/texthouse/tcod-b2f.tcod";
const OPD = "test/fixtures/trinity/official/opd.yaml";

describe("--out at an existing file or an unwritable folder", () => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-edges-"));
  const file = join(dir, "a-file");
  writeFileSync(file, "keep me");
  const locked = join(dir, "locked");
  mkdirSync(locked);
  chmodSync(locked, 0o500);
  const root = process.getuid?.() === 0; // root may write anywhere: only the file cases apply

  const isFile = `cannot write ${file}: it is a file, not a folder`;
  it.each([
    ["compile", [F, "--out", file], file, isFile, "Give --out a folder you can write"],
    ["plot", [F, "--out", file], file, isFile, "Give --out a folder you can write"],
    ["run", [F, "--set", "steps=1", "--out", file, "-q"], file, isFile, "Give --out a folder you can write"],
    ["export", ["trinity", F, "--out", file], file, isFile, "Give --out a folder you can write"],
    ["import", ["trinity", OPD, "--out", join(file, "x.tcod")], file, isFile, "Give the folder of --out a folder you can write"],
    ["compile (inside a file)", [F, "--out", join(file, "sub")], join(file, "sub"), `cannot write ${join(file, "sub")}: a part of the path is a file, not a folder`, "Give --out a folder you can write"],
  ])("%s", (_name, args, at, message, hint) => {
    const r = tcod(...(_name.split(" ")[0]! === "compile" ? ["compile"] : [_name]), ...args);
    userError(r, "TC7009", { at, message, hint });
    expect(readFileSync(file, "utf8")).toBe("keep me");
  }, 60_000);

  it.skipIf(root)("a folder that cannot be written", () => {
    const out = join(locked, "out");
    userError(tcod("compile", F, "--out", out), "TC7009", { at: /locked/, message: "permission denied", hint: "Give --out a folder you can write" });
  }, 60_000);

  it("import --out naming a folder", () => {
    userError(tcod("import", "trinity", OPD, "--out", dir), "TC7009", { at: dir, message: `cannot write ${dir}: it is a folder, not a file`, hint: `Give --out a file name, e.g. ${join(dir, "name.tcod")}` });
  }, 60_000);

  it("import --out naming an existing file refuses to overwrite it unless --force", () => {
    const existing = join(dir, "existing.tcod");
    writeFileSync(existing, "// mine\n");
    const r = tcod("import", "trinity", OPD, "--out", existing);
    userError(r, "TC7009", { at: existing, message: `${existing} exists; tcod import does not overwrite it`, hint: "add --force to replace this one" });
    expect(readFileSync(existing, "utf8")).toBe("// mine\n");
    const forced = tcod("import", "trinity", OPD, "--out", existing, "--force");
    expect(forced.status, forced.stderr).toBe(0);
    expect(readFileSync(existing, "utf8")).toMatch(/^curriculum /m);
  }, 120_000);
});

describe("--set keys that name prototype members", () => {
  // Each at the target as written, not at the value after `=`.
  it.each([
    ["__proto__=1", "TC5002", "Override target '__proto__' is neither a curriculum field nor a `let` of this file."],
    ["constructor=1", "TC5002", "Override target 'constructor' is neither a curriculum field nor a `let` of this file."],
    ["toString=1", "TC5002", "Override target 'toString' is neither a curriculum field nor a `let` of this file."],
    ["texthouse_tcod_b2f.__proto__=1", "TC2004", "Unknown field '__proto__' in curriculum 'texthouse_tcod_b2f'."],
    ["texthouse_tcod_b2f.constructor=2", "TC2004", "Unknown field 'constructor' in curriculum 'texthouse_tcod_b2f'."],
  ])("compile --set %s", (kv, code, message) => {
    const out = mkdtempSync(join(tmpdir(), "tcod-edges-"));
    const r = tcod("compile", F, "--set", kv, "--out", out);
    userError(r, code, { at: "<--set 1>:1:1", message, hint: code === "TC5002" ? "Targets: agent, texthouse_tcod_b2f.<field>." : "Fields of curriculum 'texthouse_tcod_b2f': teacher," });
    expect(r.stderr).toContain(`  1 | ${kv}\n    | ${"^".repeat(kv.indexOf("="))}\n`);
    expect(existsSync(join(out, "texthouse_tcod_b2f.plan.json"))).toBe(false);
  }, 60_000);

  it("a plan JSON's --set cannot reach a built-in object", () => {
    const out = mkdtempSync(join(tmpdir(), "tcod-edges-"));
    expect(tcod("compile", F, "--out", out).status).toBe(0);
    const plan = join(out, "texthouse_tcod_b2f.plan.json");
    for (const [kv, field] of [["__proto__.hasOwnProperty=1", "__proto__"], ["constructor.prototype.x=1", "constructor"], ["clock.__proto__.x=1", "clock.__proto__"], ["clock.constructor=1", "clock.constructor"]] as const) {
      const r = tcod("run", plan, "--set", kv, "--out", join(out, "run"), "-q");
      userError(r, "TC7009", { at: "tcod run", message: `--set ${kv}: the plan has no field ${field}`, hint: "Write --set PATH=VALUE with a path of the plan's own fields" });
    }
  }, 60_000);
});

describe("numbers in flags and overrides", () => {
  it.each([
    ["--expert-length", "abc", "'abc' is not a whole number ≥ 0"],
    ["--expert-length", "4,x", "'x' is not a whole number ≥ 0"],
    ["--at", "1,,2", "an empty entry is not a whole number ≥ 0"],
    ["--at", "-3", "'-3' is not a whole number ≥ 0"],
    ["--at", "1e3", "'1e3' is not a whole number ≥ 0"],
  ])("explain %s %s", (flag, v, why) => {
    const r = tcod("explain", F, "texthouse_tcod_b2f.prefix", flag, v);
    userError(r, "TC7009", { at: "tcod explain", message: `${flag} ${v}: ${why}`, hint: "Give comma-separated whole numbers" });
    expect(r.stdout).not.toContain("NaN");
  }, 60_000);

  it("plot --expert-length abc", () => {
    userError(tcod("plot", F, "--expert-length", "abc"), "TC7009", { at: "tcod plot", message: "--expert-length abc: 'abc' is not a whole number ≥ 0", hint: "e.g. --expert-length 10" });
  }, 60_000);

  it("run --seed 1.5", () => {
    userError(tcod("run", F, "--seed", "1.5", "-q"), "TC7009", { at: "tcod run", message: "--seed 1.5: expected an integer", hint: "e.g. --seed 7" });
  }, 60_000);

  it("run --seed beyond 2^53 − 1 states the accepted range", () => {
    const r = tcod("run", F, "--seed", "99999999999999999999", "-q");
    userError(r, "TC7009", { at: "tcod run", message: "--seed 99999999999999999999: out of range; a seed is an integer from -9007199254740991 to 9007199254740991", hint: "Use a smaller seed" });
  }, 60_000);

  it("--set steps=1e999 is reported as Infinity, not 0", () => {
    const r = tcod("compile", F, "--set", "steps=1e999", "--out", mkdtempSync(join(tmpdir(), "tcod-edges-")));
    userError(r, "TC4001", { at: "<--set 1>:1:7", message: "got Infinity" });
  }, 60_000);

  it("an unknown explain field is a coded error", () => {
    userError(tcod("explain", F, "texthouse_tcod_b2f.horizn"), "TC7009", { at: "tcod explain", message: "target 'texthouse_tcod_b2f.horizn': a curriculum has no field 'horizn'", hint: /^Fields: .*\bhorizon\b/ });
  }, 60_000);
});

describe("tcod import trinity: user errors, with positions", () => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-edges-import-"));
  const base = readFileSync(join(ROOT, OPD), "utf8");
  // Each: the text, where its first error is (line:column), that error's message and hint, and how many errors in all.
  const cases: [string, string, string, string, string, number][] = [
    ["keyword name", base.replace(`name: "alfworld_opd"`, `name: "curriculum"`), "2:7", "name 'curriculum' is a tcod keyword and cannot name the curriculum (at name)", `Rename it, e.g. name: "curriculum_run".`, 1],
    ["non-ASCII name", base.replace(`name: "alfworld_opd"`, `name: "ålf"`), "2:7", `name "ålf" cannot name a tcod curriculum (ASCII letters, digits and _, not starting with a digit) (at name)`, "Rename it", 1],
    // One error: the path is there, refused, not also "missing required key taskset.path".
    ["control characters in a path", base.replace("path: /path/to/alfworld_data/train_expert.jsonl", `path: "/path/to\\u0007x.jsonl"`), "37:13", "taskset path contains the control character U+0007 (at buffer.explorer_input.taskset.path)", "Remove it", 1],
    ["non-finite betas", base.replace("    lr: 1e-6", "    lr: 1e-6\n    betas: [.nan, .inf]"), "17:13", "betas[0] must be a finite number, got .nan (at algorithm.optimizer.betas[0])", "Write a finite number, e.g. betas[0]: 1", 2],
  ];
  it.each(cases)("%s", (name, text, at, message, hint, errors) => {
    const f = join(dir, `${name.replace(/\W/g, "_")}.yaml`);
    writeFileSync(f, text);
    const r = tcod("import", "trinity", f);
    userError(r, "TC7101", { at: `${f}:${at}`, message, hint });
    expect(r.stderr.match(/ error TC\d+: /g)).toHaveLength(errors);
    expect(r.stderr).toContain(`\n${errors} error(s)\n`);
  }, 60_000);

  it("total_steps: 10^20 finishes (no hang): more than a plan holds, a coded error at its line; 1e20, a float to YAML, is one Trinity's int field refuses", () => {
    const f = join(dir, "huge.yaml");
    writeFileSync(f, base.replaceAll("total_steps: 250", "total_steps: 100000000000000000000"));
    const r = tcod("import", "trinity", f);
    expect(r.signal).toBeNull();
    userError(r, "TC7101", { at: /huge\.yaml:\d+:\d+$/, message: "total_steps must be at most 2^53 − 1 (9007199254740991), got 100000000000000000000 (at buffer.total_steps)", hint: "Write a smaller whole number." });
    // Not also "missing required key buffer.total_steps": it is there, refused.
    expect(r.stderr).not.toContain("missing required key");
    writeFileSync(f, base.replaceAll("total_steps: 250", "total_steps: 1e20"));
    const e = tcod("import", "trinity", f);
    userError(e, "TC7101", { at: /huge\.yaml:\d+:\d+$/, message: "total_steps must be an integer, got 1e20, which YAML reads as a float: Trinity-RFT's integer field refuses a float", hint: /^Write a whole number without a decimal point or exponent\.$/ });
  }, 60_000);

  it("an unknown format and a missing file", () => {
    userError(tcod("import", "yaml", OPD), "TC7009", { at: "tcod import", message: "unknown format 'yaml'", hint: "The formats are: trinity." });
    const yaml = join(dir, "missing.yaml"), plan = join(dir, "missing.plan.json");
    userError(tcod("import", "trinity", yaml), "TC7009", { at: yaml, message: `cannot read ${yaml}: no such file`, hint: "Give the Trinity-RFT config" });
    userError(tcod("export", "trinity", plan), "TC7009", { at: plan, message: `cannot read ${plan}: no such file`, hint: "Give a plan that `tcod compile` wrote" });
    // run's own check for a missing FILE: at the file, with a hint (it was "tcod run error TC7009: FILE: no such file", no hint).
    for (const missing of [join(dir, "missing.tcod"), plan]) {
      userError(tcod("run", missing, "-q"), "TC7009", { at: missing, message: /^no such file$/, hint: "Give the .tcod file to run, or a plan .json that `tcod compile` wrote." });
    }
  }, 60_000);
});

describe("paths that would hang a naive reader or mkdir", () => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-edges-"));
  const linux = existsSync("/proc/self") && existsSync("/dev/zero");

  // Node 20's mkdirSync(…, { recursive: true }) never returns under /proc (bin/out-path.ts makeDirs).
  it.skipIf(!linux).each([
    ["compile", [F, "--out", "/proc/tcod-x/out"]],
    ["plot", [F, "--out", "/proc/tcod-x/out"]],
    ["run", [F, "--set", "steps=1", "--out", "/proc/tcod-x/out", "-q"]],
    ["run", [F, "--sweep", "--out", "/proc/tcod-x/out"]],
    ["export", ["trinity", F, "--out", "/proc/tcod-x/out"]],
    ["import", ["trinity", OPD, "--out", "/proc/tcod-x/out/x.tcod"]],
    ["compare", [join(ROOT, "test/fixtures"), "--out", "/proc/tcod-x/c.html"]],
  ])("%s --out under /proc", (cmd, args) => {
    const r = tcod(cmd, ...args);
    if (cmd === "compare") {
      // compare reads its run folders first: test/fixtures is not a run folder, its own error.
      userError(r, "TC7009", { at: join(ROOT, "test/fixtures"), message: "not a run folder" });
    } else {
      const out = cmd === "import" ? "/proc/tcod-x/out" : args[args.indexOf("--out") + 1]!;
      userError(r, "TC7009", { at: out, message: `cannot write ${out}: a folder on the path cannot be created there`, hint: /folder you can write/ });
    }
  }, 60_000);

  it.skipIf(!linux)("compare --out under /proc, with a run folder", () => {
    // A finished run folder as compare reads it: the plan, the evaluation before step 1 and one
    // training step (a run without one is left out, and compare would stop at that instead).
    const run = join(dir, "run");
    mkdirSync(run);
    writeFileSync(join(run, "plan.json"), readFileSync(join(ROOT, "test/fixtures/plans/texthouse-f2b-small.json")));
    const train = {
      kind: "train", step: 1, policyStep: 0, policyVersion: 1, episodes: 4, successRate: 0.25, meanReward: 0.25,
      horizon: 2, prefix: 0, expertLength: 0, studentTurns: 2, turns: 2, invalidActions: 0, admissibleRate: 0.5,
      noExperience: 0, droppedFailed: 0, droppedStale: 0, kl: { mean: 0.1, perTurn: [0.1, 0.2] }, tokens: { prompt: 10, response: 3 },
      coefs: { opd: 1 }, blendWeight: null, adaptiveCap: null, lr: 0.01, loss: 0.5, gradNorm: 1.5, updates: 1, time: { rollout: 0.5 },
    };
    writeFileSync(join(run, "metrics.jsonl"), '{"kind":"eval","name":"valid","step":0,"successRate":0.25,"meanReward":0.25,"meanTurns":3,"episodes":4,"time":{"eval":0}}\n' + JSON.stringify(train) + "\n");
    const cannot = { message: "cannot write /proc/tcod-x: a folder on the path cannot be created there", hint: /folder you can write/ };
    userError(tcod("compare", run, "--out", "/proc/tcod-x/c.html"), "TC7009", { at: /^\/proc\/tcod-x/, ...cannot });
    userError(tcod("compare", run, "--out", join(dir, "c.html"), "--json", "/proc/tcod-x/c.json"), "TC7009", { at: /^\/proc\/tcod-x/, ...cannot });
  }, 120_000);

  it.skipIf(!linux)("a source or trace that is a device is a coded error, not an endless read", () => {
    userError(tcod("check", "/dev/zero"), "TC1109", { at: "/dev/zero:1:1", message: "Cannot read '/dev/zero': it is not a regular file (a device, pipe or socket).", hint: "Give a .tcod file that you may read" });
    for (const args of [["explain", F, "texthouse_tcod_b2f.horizon"], ["plot", F]]) {
      userError(tcod(...args, "--trace", "/dev/zero"), "TC7009", { at: "/dev/zero", message: "--trace /dev/zero: cannot read it: it is not a regular file", hint: "Give a run's metrics.jsonl" });
    }
  }, 60_000);

  it.skipIf(!linux)("an import of a FIFO is a coded error at the import, not a blocked read", () => {
    const project = join(dir, "fifo");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), "{}");
    execFileSync("mkfifo", [join(project, "pipe.tcod")]);
    writeFileSync(join(project, "main.tcod"), `import { x } from "./pipe.tcod"\nlet y = x\n`);
    const r = tcod("check", join(project, "main.tcod"));
    // The code for a source that is there but not a file (it was TC1101, "check the path"), at the import's path.
    userError(r, "TC1109", { at: `${join(project, "main.tcod")}:1:19`, message: "Cannot read 'pipe.tcod': it is not a regular file", hint: "Give a .tcod file that you may read" });
    expect(r.stderr).not.toContain("TC1101");
  }, 60_000);

  it("an import of a folder is a coded error at the import that says it is a folder", () => {
    const project = join(dir, "folder-import");
    mkdirSync(join(project, "lib.tcod"), { recursive: true });
    writeFileSync(join(project, "package.json"), "{}");
    writeFileSync(join(project, "main.tcod"), `import { x } from "./lib.tcod"\nlet y = x\n`);
    const r = tcod("check", join(project, "main.tcod"));
    userError(r, "TC1109", { at: `${join(project, "main.tcod")}:1:19`, message: "Cannot read 'lib.tcod': it is a folder, not a file", hint: "Give a .tcod file that you may read" });
    expect(r.stderr).not.toContain("TC1101");
  }, 60_000);

  it("a source larger than the limit is a coded error, read no further", () => {
    const big = join(dir, "big.tcod");
    const fd = openSync(big, "w");
    ftruncateSync(fd, 40 * 1024 * 1024); // sparse: 40 MiB of NULs, no disk
    closeSync(fd);
    const r = tcod("check", big);
    // Its own code, naming the size and the limit (it was TC1101, "cannot find module").
    userError(r, "TC1108", { at: `${big}:1:1`, message: `'${big}' is 40 MiB, more than the 32 MiB tcod reads of a source file; it was not read.`, hint: "Split it into modules" });
  }, 60_000);

  it("--set steps=1e308 (finite, but more than a plan holds) is a range error, not an invalid plan", () => {
    const r = tcod("compile", F, "--set", "steps=1e308", "--out", join(dir, "o"));
    userError(r, "TC4001", { at: "<--set 1>:1:7", message: "steps must be an integer ≥ 1, at most 2^53 − 1 (9007199254740991), got 1e+308.", hint: "Choose an integer ≥ 1" });
  }, 60_000);
});

describe("inputs of fmt, import, export and run that are devices or FIFOs", () => {
  const linux = existsSync("/dev/zero");
  it.skipIf(!linux)("are coded errors, not endless reads", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-edges-"));
    const fifo = join(dir, "plan.json");
    execFileSync("mkfifo", [fifo]);
    const notFile = "it is not a regular file (a device, pipe or socket)";
    userError(tcod("import", "trinity", "/dev/zero"), "TC7009", { at: "/dev/zero", message: `cannot read /dev/zero: ${notFile}`, hint: "Give the Trinity-RFT config" });
    userError(tcod("run", fifo, "-q"), "TC7009", { at: fifo, message: `cannot read ${fifo}: ${notFile}`, hint: "Give a plan that `tcod compile` wrote" });
    userError(tcod("export", "trinity", fifo), "TC7009", { at: fifo, message: `cannot read ${fifo}: ${notFile}`, hint: "Give a plan that `tcod compile` wrote" });
    userError(tcod("fmt", "/dev/zero"), "TC1109", { at: "/dev/zero:1:1", message: "Cannot read '/dev/zero': it is not a regular file", hint: "Give a .tcod file that you may read" });
  }, 120_000);
});

describe("a reader that closes the pipe early", () => {
  it("`tcod metrics --csv RUN | head -c 100` ends quietly: exit 0, no EPIPE stack trace", async () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-epipe-"));
    // ~1 MB of CSV: far more than a pipe's buffer, so the writer meets the closed end.
    const row = (step: number) => JSON.stringify({
      kind: "train", step, policyStep: step - 1, policyVersion: step, episodes: 4, successRate: 0.25, meanReward: 0.25,
      horizon: 2, prefix: 0, expertLength: 0, studentTurns: 2, turns: 2, invalidActions: 0, admissibleRate: 0.5,
      noExperience: 0, droppedFailed: 0, droppedStale: 0, kl: { mean: 0.1, perTurn: [0.1, 0.2] }, tokens: { prompt: 10, response: 3 },
      coefs: { opd: 1 }, blendWeight: null, adaptiveCap: null, lr: 0.01, loss: 1 / step, gradNorm: 1.5, updates: 1, time: { rollout: 0.5 },
    });
    writeFileSync(join(dir, "metrics.jsonl"), Array.from({ length: 6000 }, (_, i) => row(i + 1)).join("\n") + "\n");
    const child = spawn(process.execPath, [join(ROOT, "bin/tcod.mjs"), "metrics", "--csv", dir], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (b: Buffer) => { stderr += b.toString(); });
    const first = await new Promise<string>((res) => child.stdout.once("data", (b: Buffer) => res(b.toString())));
    child.stdout.destroy(); // head has read its 100 bytes and gone
    const code = await new Promise<number | null>((res) => child.on("close", (c) => res(c)));
    expect(first.startsWith("run,kind,set,step")).toBe(true);
    expect(stderr).not.toContain("EPIPE");
    expect(stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
    expect(code).toBe(0);
  }, 60_000);
});
