/**
 * `tcod check` from the start-up snapshot (bin/tcod → node --snapshot-blob dist/check.blob) prints,
 * writes and exits exactly as bin/tcod.mjs does: a clean file, files with errors (human and --json;
 * bytes that are not UTF-8 too),
 * a TypeScript extension (ts-morph loaded at run time), a missing file, --help; also through a symlink
 * (as npm links the bin), and with TCOD_NO_SNAPSHOT=1. A plain `check FILE…`, which the CLI runs
 * without commander, prints, writes and exits as it does through commander. A package installed
 * without a blob builds one on its first check and uses it from the next, moved from where the bundle
 * was built; its npm bin (bin/tcod.js, run by Node.js until then, as on Windows) then starts as sh,
 * and Node.js still runs it.
 * The blob's V8 flags carry the package's hash seed, drawn once (dist/check.seed); bin/tcod takes no
 * other flags line.
 * `tcod --version` answered by bin/tcod.mjs without the CLI prints what the CLI prints. The Windows
 * shims npm writes for the bin (npm's own cmd-shim, run here) start it with node.
 */
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageHashSeed, snapshotFlags, SNAPSHOT_FLAGS_LINE } from "../../bin/snapshot-cache.js";

const ROOT = join(import.meta.dirname, "../..");
const run = (cmd: string, args: string[], env: Record<string, string> = {}) => {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: "utf8", env: { ...process.env, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};

describe("tcod check from the start-up snapshot", () => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-snap-"));
  writeFileSync(join(dir, "bad.tcod"), 'import { f2b } from "std/tcod"\nlet h = f2b(every: 3, max: 30 steps)\nlet x = 3 +\n');
  const cases: string[][] = [
    ["check", "examples/texthouse/tcod-f2b.tcod"],
    ["check", "examples/texthouse/tcod-f2b.tcod", "examples/webshop/atod.tcod"],
    ["check", join(dir, "bad.tcod")],
    ["check", "--json", join(dir, "bad.tcod")],
    ["check", "test/fixtures-ts/ext.tcod"],
    // Bytes that are not UTF-8, named (the Chevrotain parser, loaded on demand, is given them), and a
    // U+FFFD the file holds.
    ["check", "--json", "test/fixtures/syntax/invalid-utf8/input.tcod", "test/fixtures/syntax/replacement-character/input.tcod"],
    ["check", join(dir, "missing.tcod")],
    ["check", "--help"],
  ];

  it("the blob is built with the bundle", () => {
    expect(existsSync(join(ROOT, "dist/check.blob"))).toBe(true);
    // bin/tcod takes the snapshot path for this Node.js (sh -x shows the exec).
    const traced = spawnSync("sh", ["-x", join(ROOT, "bin/tcod"), "check", "examples/texthouse/tcod-f2b.tcod"], { cwd: ROOT, encoding: "utf8" });
    expect(traced.stderr).toContain("--snapshot-blob");
  });

  it("the blob runs under a hash seed drawn when it was built; bin/tcod takes no other flags line", () => {
    const [, , flags] = readFileSync(join(ROOT, "dist/check.blob.node"), "utf8").split("\n");
    expect(flags).toMatch(SNAPSHOT_FLAGS_LINE);
    // A package whose dist/check.blob.node names other flags (an older build's, a seed that is not a
    // number, an extra flag) checks without the snapshot, and prints the same.
    const pkg = join(dir, "flags-pkg");
    for (const f of ["bin/tcod", "bin/tcod.mjs", "dist", "stdlib", "package.json"]) cpSync(join(ROOT, f), join(pkg, f), { recursive: true });
    // Without the snapshot's bundle, a check that falls back builds no blob in the background (one
    // would rewrite dist/check.blob.node while this test writes it).
    rmSync(join(pkg, "dist/snapshot/check.cjs"));
    symlinkSync(join(ROOT, "node_modules"), join(pkg, "node_modules"));
    const args = ["check", join(dir, "bad.tcod")];
    const plain = run(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args]);
    const seed = flags!.split(" ")[1]!.slice("--hash-seed=".length);
    const take = (line: string) => {
      writeFileSync(join(pkg, "dist/check.blob.node"), `${process.execPath}\n${process.version}\n${line}\n`);
      const traced = spawnSync("sh", ["-x", join(pkg, "bin/tcod"), ...args], { cwd: ROOT, encoding: "utf8" });
      expect(run(join(pkg, "bin/tcod"), args), line).toEqual(plain);
      return traced.stderr.includes("--snapshot-blob");
    };
    expect(take(flags!)).toBe(true);
    for (const line of ["--initial-old-space-size=1024", `--initial-old-space-size=1024 --hash-seed=${seed}`,
      "--initial-old-space-size=1024 --hash-seed=0 --no-rehash-snapshot", "--initial-old-space-size=1024 --hash-seed=12a --no-rehash-snapshot",
      `--initial-old-space-size=1024 --hash-seed=${seed} --no-rehash-snapshot --expose-gc`, `--initial-old-space-size=1024 --hash-seed=${seed} --expose-gc --no-rehash-snapshot`,
      "--initial-old-space-size=1024 --hash-seed= --no-rehash-snapshot"]) {
      expect(SNAPSHOT_FLAGS_LINE.test(line), line).toBe(false);
      expect(take(line), line).toBe(false);
    }
  });

  it("a package keeps one hash seed for all its blobs (dist/check.seed), drawn once", () => {
    const dist = join(dir, "seed-dist");
    mkdirSync(dist);
    const seed = packageHashSeed(dist);
    expect(String(seed)).toMatch(/^[1-9][0-9]{0,14}$/);
    expect(readFileSync(join(dist, "check.seed"), "utf8")).toBe(`${seed}\n`);
    expect(packageHashSeed(dist)).toBe(seed);
    // A file that is not a seed is replaced; the build keeps the repository's (scripts/build.mjs).
    writeFileSync(join(dist, "check.seed"), "0\n");
    const next = packageHashSeed(dist);
    expect(next).not.toBe(0);
    expect(packageHashSeed(dist)).toBe(next);
    const [, , flags] = readFileSync(join(ROOT, "dist/check.blob.node"), "utf8").split("\n");
    expect(flags).toBe(snapshotFlags(Number(readFileSync(join(ROOT, "dist/check.seed"), "utf8"))).join(" "));
  });

  for (const args of cases) {
    it(args.join(" ").replace(dir, "DIR"), () => {
      const plain = run(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args]);
      expect(run(join(ROOT, "bin/tcod"), args)).toEqual(plain);
    });
  }

  it("a plain `check FILE…` (run without commander, bin/commands/check.ts direct) is what commander runs", () => {
    // `--max-points 1000` (the default) is not plain: that command line goes through commander.
    for (const args of cases.filter((a) => !a.includes("--help"))) {
      const viaCommander = run(process.execPath, [join(ROOT, "bin/tcod.mjs"), "check", "--max-points", "1000", ...args.slice(1)]);
      expect(run(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args]), args.join(" ")).toEqual(viaCommander);
    }
  });

  it("the blob keeps Node.js's code for the built-in modules a check loads, no other (bin/snapshot-trim.ts)", () => {
    const trim = createRequire(import.meta.url)(join(ROOT, "dist/snapshot/trim.cjs")) as typeof import("../../bin/snapshot-trim.js");
    const found = trim.findCodeCache(readFileSync(join(ROOT, "dist/check.blob")));
    // Another Node.js may lay the blob out otherwise; then it is not trimmed, and nothing is asserted.
    if (found) for (const [id] of found.entries) expect(trim.KEPT).toContain(id);
    // A trimmed blob that does not answer as the whole one does is not kept.
    const copy = join(dir, "dist", "check.blob");
    mkdirSync(dirname(copy), { recursive: true });
    cpSync(join(ROOT, "dist/check.blob"), copy);
    const before = readFileSync(copy);
    expect(trim.trimCodeCache(copy, () => false, [])).toBe(false);
    expect(readFileSync(copy).equals(before)).toBe(true);
  });

  it("through a symlink, and with TCOD_NO_SNAPSHOT=1", () => {
    const link = join(dir, "tcod");
    symlinkSync(join(ROOT, "bin/tcod"), link);
    const args = ["check", join(dir, "bad.tcod")];
    const plain = run(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args]);
    expect(run(link, args)).toEqual(plain);
    expect(run(join(ROOT, "bin/tcod"), args, { TCOD_NO_SNAPSHOT: "1" })).toEqual(plain);
  });

  it("an installed package without a blob builds one on its first check, then starts from it", async () => {
    const pkg = join(dir, "installed", "node_modules", "tcod");
    mkdirSync(pkg, { recursive: true });
    for (const f of ["bin/tcod", "bin/tcod.js", "bin/tcod.mjs", "dist/tcod.js", "dist/chunks", "dist/snapshot", "stdlib", "package.json"]) cpSync(join(ROOT, f), join(pkg, f), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(pkg, "node_modules"));
    // As npm links the bin on Linux and macOS: node_modules/.bin/tcod → ../tcod/bin/tcod.js.
    const bins = join(dir, "installed", "node_modules", ".bin");
    mkdirSync(bins);
    symlinkSync("../tcod/bin/tcod.js", join(bins, "tcod"));
    const npmBin = join(bins, "tcod");
    const bad = join(dir, "bad.tcod");
    const plain = run(process.execPath, [join(ROOT, "bin/tcod.mjs"), "check", bad]);
    expect(readFileSync(join(pkg, "bin/tcod.js"), "utf8").split("\n")[0]).toBe("#!/usr/bin/env node");
    const first = run(npmBin, ["check", bad]);
    expect(first).toEqual(plain);
    const blob = join(pkg, "dist/check.blob.node");
    const launcher = join(pkg, "bin/tcod.js");
    for (let i = 0; i < 600 && !(existsSync(blob) && readFileSync(launcher, "utf8").startsWith("#!/bin/sh\n")); i++) await new Promise((r) => setTimeout(r, 250));
    const [built, , flags] = readFileSync(blob, "utf8").split("\n");
    expect(built).toBe(process.execPath);
    // Its own hash seed, not the one the repository's build drew.
    expect(flags).toMatch(SNAPSHOT_FLAGS_LINE);
    expect(flags).not.toBe(readFileSync(join(ROOT, "dist/check.blob.node"), "utf8").split("\n")[2]);
    expect(readFileSync(launcher, "utf8")).toBe(readFileSync(join(ROOT, "bin/tcod"), "utf8"));
    for (const bin of [join(pkg, "bin/tcod"), npmBin]) {
      const traced = spawnSync("sh", ["-x", bin, "check", bad], { cwd: ROOT, encoding: "utf8" });
      expect(traced.stderr).toContain("--snapshot-blob");
      expect(run(bin, ["check", bad])).toEqual(plain);
    }
    // What runs the bin with node (pnpm's shims, Windows' npm shims) still can.
    expect(run(process.execPath, [launcher, "check", bad])).toEqual(plain);
  }, 200_000);

  it("bin/tcod and bin/tcod.js are one file but for the first line, and run as sh and as JavaScript", () => {
    const [sh, ...rest] = readFileSync(join(ROOT, "bin/tcod"), "utf8").split("\n");
    const [node, ...rest2] = readFileSync(join(ROOT, "bin/tcod.js"), "utf8").split("\n");
    expect([sh, node]).toEqual(["#!/bin/sh", "#!/usr/bin/env node"]);
    expect(rest2).toEqual(rest);
    expect(JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).bin).toEqual({ tcod: "bin/tcod.js" });
    const args = ["check", join(dir, "bad.tcod")];
    const plain = run(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args]);
    for (const f of ["bin/tcod", "bin/tcod.js"]) {
      expect(run(process.execPath, [join(ROOT, f), ...args]), `node ${f}`).toEqual(plain);
      expect(run("sh", [join(ROOT, f), ...args]), `sh ${f}`).toEqual(plain);
    }
    expect(run(join(ROOT, "bin/tcod.js"), args)).toEqual(plain);
  });

  it("tcod --version prints the CLI's version without loading the CLI", () => {
    const traced = spawnSync("sh", ["-x", join(ROOT, "bin/tcod"), "--version"], { cwd: ROOT, encoding: "utf8" });
    expect(traced.stderr).not.toContain("exec node");
    for (const flag of ["--version", "-V"]) {
      const cli = run(process.execPath, [join(ROOT, "dist/tcod.js"), flag]);
      expect(cli.stdout).toBe(`${JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version}\n`);
      // bin/tcod and `sh bin/tcod.js` answer from package.json in sh; bin/tcod.js here (node) and bin/tcod.mjs in Node.js.
      for (const bin of [[process.execPath, join(ROOT, "bin/tcod.mjs")], [join(ROOT, "bin/tcod")], [join(ROOT, "bin/tcod.js")], ["sh", join(ROOT, "bin/tcod.js")]]) {
        expect(run(bin[0]!, [...bin.slice(1), flag]), bin.join(" ")).toEqual(cli);
      }
    }
  });

  it("npm's Windows shims for the bin start it with node", async () => {
    // npm's own cmd-shim (bundled with npm), as npm runs it on Windows when it links the bin.
    let cmdShim: (from: string, to: string) => Promise<void>;
    try {
      const npmDir = dirname(dirname(realpathSync(join(dirname(process.execPath), "npm"))));
      cmdShim = createRequire(join(npmDir, "package.json"))("cmd-shim") as typeof cmdShim;
    } catch {
      return; // no npm next to this Node.js
    }
    const out = join(dir, "shims");
    await cmdShim(join(ROOT, "bin/tcod.js"), join(out, "tcod"));
    const cmd = readFileSync(join(out, "tcod.cmd"), "utf8");
    expect(cmd).toContain('SET "_prog=node"');
    expect(cmd).toMatch(/"%_prog%"\s+"%dp0%\\.*\\bin\\tcod\.js" %\*/);
    expect(readFileSync(join(out, "tcod.ps1"), "utf8")).toContain('"node$exe"');
  });
});
