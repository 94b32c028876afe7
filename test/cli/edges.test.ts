/**
 * The command line at its edges: an --out that is a file or cannot be written, prototype keys in
 * --set, non-numbers in numeric flags, Infinity in an override, hostile Trinity configs. Every one a
 * coded error (TCxxxx) with exit 1 and no stack trace; nothing written where it should not be. And a
 * reader that closes the pipe early: the rest of the output is dropped, exit 0, no stack trace.
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { chmodSync, closeSync, existsSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const tcod = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
const F = "examples/texthouse/tcod-b2f.tcod";
const OPD = "test/fixtures/trinity/official/opd.yaml";

/** Exit 1, the code, no stack trace, no "internal error". */
function userError(r: ReturnType<typeof tcod>, code: string): void {
  expect(r.status, r.stderr).toBe(1);
  expect(r.stderr).toContain(code);
  expect(r.stderr).not.toMatch(/\n\s+at .+:\d+:\d+/);
  expect(r.stderr).not.toContain("internal error");
}

describe("--out at an existing file or an unwritable folder", () => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-edges-"));
  const file = join(dir, "a-file");
  writeFileSync(file, "keep me");
  const locked = join(dir, "locked");
  mkdirSync(locked);
  chmodSync(locked, 0o500);
  const root = process.getuid?.() === 0; // root may write anywhere: only the file cases apply

  it.each([
    ["compile", [F, "--out", file]],
    ["plot", [F, "--out", file]],
    ["run", [F, "--set", "steps=1", "--out", file, "-q"]],
    ["export", ["trinity", F, "--out", file]],
    ["import", ["trinity", OPD, "--out", join(file, "x.tcod")]],
    ["compile (inside a file)", [F, "--out", join(file, "sub")]],
  ])("%s", (_name, args) => {
    const r = tcod(...(_name.split(" ")[0]! === "compile" ? ["compile"] : [_name]), ...args);
    userError(r, "TC7009");
    expect(readFileSync(file, "utf8")).toBe("keep me");
  }, 60_000);

  it.skipIf(root)("a folder that cannot be written", () => {
    userError(tcod("compile", F, "--out", join(locked, "out")), "TC7009");
  }, 60_000);

  it("import --out naming a folder", () => {
    userError(tcod("import", "trinity", OPD, "--out", dir), "TC7009");
  }, 60_000);

  it("import --out naming an existing file refuses to overwrite it unless --force", () => {
    const existing = join(dir, "existing.tcod");
    writeFileSync(existing, "// mine\n");
    const r = tcod("import", "trinity", OPD, "--out", existing);
    userError(r, "TC7009");
    expect(r.stderr).toContain(`${existing} exists; tcod import does not overwrite it`);
    expect(r.stderr).toContain("--force");
    expect(readFileSync(existing, "utf8")).toBe("// mine\n");
    const forced = tcod("import", "trinity", OPD, "--out", existing, "--force");
    expect(forced.status, forced.stderr).toBe(0);
    expect(readFileSync(existing, "utf8")).toMatch(/^curriculum /m);
  }, 120_000);
});

describe("--set keys that name prototype members", () => {
  it.each(["__proto__=1", "constructor=1", "toString=1", "texthouse_tcod_b2f.__proto__=1", "texthouse_tcod_b2f.constructor=2"])("compile --set %s", (kv) => {
    const r = tcod("compile", F, "--set", kv, "--out", mkdtempSync(join(tmpdir(), "tcod-edges-")));
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/TC5002|TC2004/);
    expect(r.stderr).not.toContain("internal error");
  }, 60_000);

  it("a plan JSON's --set cannot reach a built-in object", () => {
    const out = mkdtempSync(join(tmpdir(), "tcod-edges-"));
    expect(tcod("compile", F, "--out", out).status).toBe(0);
    const plan = join(out, "texthouse_tcod_b2f.plan.json");
    for (const kv of ["__proto__.hasOwnProperty=1", "constructor.prototype.x=1", "clock.__proto__.x=1", "clock.constructor=1"]) {
      const r = tcod("run", plan, "--set", kv, "--out", join(out, "run"), "-q");
      userError(r, "TC7009");
    }
  }, 60_000);
});

describe("numbers in flags and overrides", () => {
  it.each([["--expert-length", "abc"], ["--expert-length", "4,x"], ["--at", "1,,2"], ["--at", "-3"], ["--at", "1e3"]])("explain %s %s", (flag, v) => {
    const r = tcod("explain", F, "texthouse_tcod_b2f.prefix", flag, v);
    userError(r, "TC7009");
    expect(r.stdout).not.toContain("NaN");
  }, 60_000);

  it("plot --expert-length abc", () => {
    userError(tcod("plot", F, "--expert-length", "abc"), "TC7009");
  }, 60_000);

  it("run --seed 1.5", () => {
    userError(tcod("run", F, "--seed", "1.5", "-q"), "TC7009");
  }, 60_000);

  it("run --seed beyond 2^53 − 1 states the accepted range", () => {
    const r = tcod("run", F, "--seed", "99999999999999999999", "-q");
    userError(r, "TC7009");
    expect(r.stderr).toContain("--seed 99999999999999999999: out of range; a seed is an integer from -9007199254740991 to 9007199254740991");
  }, 60_000);

  it("--set steps=1e999 is reported as Infinity, not 0", () => {
    const r = tcod("compile", F, "--set", "steps=1e999", "--out", mkdtempSync(join(tmpdir(), "tcod-edges-")));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("got Infinity");
  }, 60_000);

  it("an unknown explain field is a coded error", () => {
    userError(tcod("explain", F, "texthouse_tcod_b2f.horizn"), "TC7009");
  }, 60_000);
});

describe("tcod import trinity: user errors, with positions", () => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-edges-import-"));
  const base = readFileSync(join(ROOT, OPD), "utf8");
  const cases: [string, string, RegExp][] = [
    ["keyword name", base.replace(`name: "alfworld_opd"`, `name: "curriculum"`), /:2:7 error TC7101: .*tcod keyword/],
    ["non-ASCII name", base.replace(`name: "alfworld_opd"`, `name: "ålf"`), /:2:7 error TC7101: .*cannot name a tcod curriculum/],
    ["control characters in a path", base.replace("path: /path/to/alfworld_data/train_expert.jsonl", `path: "/path/to\\u0007x.jsonl"`), /error TC7101: .*control character U\+0007/],
    ["non-finite betas", base.replace("    lr: 1e-6", "    lr: 1e-6\n    betas: [.nan, .inf]"), /error TC7101: betas\[0\] must be a finite number, got \.nan \(at algorithm\.optimizer\.betas\[0\]\)/],
  ];
  it.each(cases)("%s", (name, text, want) => {
    const f = join(dir, `${name.replace(/\W/g, "_")}.yaml`);
    writeFileSync(f, text);
    const r = tcod("import", "trinity", f);
    userError(r, "TC7101");
    expect(r.stderr).toMatch(want);
  }, 60_000);

  it("total_steps: 10^20 finishes (no hang): more than a plan holds, a coded error at its line; 1e20, a float to YAML, is one Trinity's int field refuses", () => {
    const f = join(dir, "huge.yaml");
    writeFileSync(f, base.replaceAll("total_steps: 250", "total_steps: 100000000000000000000"));
    const r = tcod("import", "trinity", f);
    expect(r.signal).toBeNull();
    userError(r, "TC7101");
    expect(r.stderr).toMatch(/huge\.yaml:\d+:\d+ error TC7101: total_steps must be at most 2\^53 − 1/);
    // Not also "missing required key buffer.total_steps": it is there, refused.
    expect(r.stderr).not.toContain("missing required key");
    writeFileSync(f, base.replaceAll("total_steps: 250", "total_steps: 1e20"));
    const e = tcod("import", "trinity", f);
    userError(e, "TC7101");
    expect(e.stderr).toMatch(/huge\.yaml:\d+:\d+ error TC7101: total_steps must be an integer, got 1e20, which YAML reads as a float: Trinity-RFT's integer field refuses a float/);
    expect(e.stderr).toContain("hint: Write a whole number without a decimal point or exponent.\n");
  }, 60_000);

  it("an unknown format and a missing file", () => {
    userError(tcod("import", "yaml", OPD), "TC7009");
    userError(tcod("import", "trinity", join(dir, "missing.yaml")), "TC7009");
    userError(tcod("export", "trinity", join(dir, "missing.plan.json")), "TC7009");
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
      // compare reads its run folders first: a folder that is not a run is its own error.
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).not.toContain("internal error");
    } else userError(r, "TC7009");
  }, 60_000);

  it.skipIf(!linux)("compare --out under /proc, with a run folder", () => {
    // A finished run folder as compare reads it: the plan and its metrics rows.
    const run = join(dir, "run");
    mkdirSync(run);
    writeFileSync(join(run, "plan.json"), readFileSync(join(ROOT, "test/fixtures/plans/texthouse-f2b-small.json")));
    writeFileSync(join(run, "metrics.jsonl"), '{"kind":"eval","name":"valid","step":0,"successRate":0.25,"meanReward":0.25,"meanTurns":3,"episodes":4,"time":{"eval":0}}\n');
    userError(tcod("compare", run, "--out", "/proc/tcod-x/c.html"), "TC7009");
    userError(tcod("compare", run, "--out", join(dir, "c.html"), "--json", "/proc/tcod-x/c.json"), "TC7009");
  }, 120_000);

  it.skipIf(!linux)("a source or trace that is a device is a coded error, not an endless read", () => {
    const r = tcod("check", "/dev/zero");
    userError(r, "TC1109");
    expect(r.stderr).toContain("not a regular file");
    userError(tcod("explain", F, "texthouse_tcod_b2f.horizon", "--trace", "/dev/zero"), "TC7009");
    userError(tcod("plot", F, "--trace", "/dev/zero"), "TC7009");
  }, 60_000);

  it.skipIf(!linux)("an import of a FIFO is a coded error at the import, not a blocked read", () => {
    const project = join(dir, "fifo");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), "{}");
    execFileSync("mkfifo", [join(project, "pipe.tcod")]);
    writeFileSync(join(project, "main.tcod"), `import { x } from "./pipe.tcod"\nlet y = x\n`);
    const r = tcod("check", join(project, "main.tcod"));
    // The code for a source that is there but not a file (it was TC1101, "check the path").
    userError(r, "TC1109");
    expect(r.stderr).toMatch(/main\.tcod:1:\d+/);
    expect(r.stderr).toContain("Cannot read 'pipe.tcod': it is not a regular file");
    expect(r.stderr).not.toContain("TC1101");
  }, 60_000);

  it("an import of a folder is a coded error at the import that says it is a folder", () => {
    const project = join(dir, "folder-import");
    mkdirSync(join(project, "lib.tcod"), { recursive: true });
    writeFileSync(join(project, "package.json"), "{}");
    writeFileSync(join(project, "main.tcod"), `import { x } from "./lib.tcod"\nlet y = x\n`);
    const r = tcod("check", join(project, "main.tcod"));
    userError(r, "TC1109");
    expect(r.stderr).toMatch(/main\.tcod:1:\d+/);
    expect(r.stderr).toContain("Cannot read 'lib.tcod': it is a folder, not a file");
    expect(r.stderr).not.toContain("TC1101");
  }, 60_000);

  it("a source larger than the limit is a coded error, read no further", () => {
    const big = join(dir, "big.tcod");
    const fd = openSync(big, "w");
    ftruncateSync(fd, 40 * 1024 * 1024); // sparse: 40 MiB of NULs, no disk
    closeSync(fd);
    const r = tcod("check", big);
    // Its own code, naming the size and the limit (it was TC1101, "cannot find module").
    userError(r, "TC1108");
    expect(r.stderr).toMatch(/big\.tcod' is 40 MiB, more than the 32 MiB/);
  }, 60_000);

  it("--set steps=1e308 (finite, but more than a plan holds) is a range error, not an invalid plan", () => {
    const r = tcod("compile", F, "--set", "steps=1e308", "--out", join(dir, "o"));
    userError(r, "TC4001");
    expect(r.stderr).toMatch(/2\^53 − 1/);
  }, 60_000);
});

describe("inputs of fmt, import, export and run that are devices or FIFOs", () => {
  const linux = existsSync("/dev/zero");
  it.skipIf(!linux)("are coded errors, not endless reads", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-edges-"));
    const fifo = join(dir, "plan.json");
    execFileSync("mkfifo", [fifo]);
    userError(tcod("import", "trinity", "/dev/zero"), "TC7009");
    userError(tcod("run", fifo, "-q"), "TC7009");
    userError(tcod("export", "trinity", fifo), "TC7009");
    const r = tcod("fmt", "/dev/zero");
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain("not a regular file");
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
