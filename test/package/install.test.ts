/**
 * The package installs: `npm pack` of this repository, `npm install` of the tarball into an empty
 * project, then `npx tcod check / compile / run` of a curriculum with a TypeScript extension that
 * imports its types from `tcod/extension` — what a new user does. Needs the npm registry (the
 * tarball's dependencies are fetched), as CI has.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../..");
const npm = process.platform === "win32" ? "npm.cmd" : "npm";

describe("npm pack → npm install → npx tcod", () => {
  it("checks, compiles and runs a curriculum with a TypeScript extension from the installed package", () => {
    const base = mkdtempSync(join(tmpdir(), "tcod-pkg-"));
    // dist/ is built by the test setup; --ignore-scripts keeps `prepare` from rebuilding it meanwhile.
    const packed = execFileSync(npm, ["pack", "--ignore-scripts", "--json", "--pack-destination", base], { cwd: ROOT, encoding: "utf8" });
    const packInfo = JSON.parse(packed) as { filename: string; files: { path: string }[] }[];
    const tarball = join(base, packInfo[0]!.filename);
    expect(existsSync(tarball)).toBe(true);
    // No blob, and not the checkout's hash seed: an installed package draws its own (bin/snapshot-cache.ts).
    const shipped = packInfo[0]!.files.map((f) => f.path);
    expect(shipped).toContain("dist/tcod.js");
    for (const f of ["dist/check.blob", "dist/check.blob.node", "dist/check.seed"]) expect(shipped).not.toContain(f);

    const proj = join(base, "lab");
    mkdirSync(proj);
    writeFileSync(join(proj, "package.json"), JSON.stringify({ name: "lab", private: true, type: "module" }));
    execFileSync(npm, ["install", "--no-audit", "--no-fund", "--loglevel=error", tarball], { cwd: proj, stdio: "pipe", timeout: 300_000 });
    copyFileSync(join(ROOT, "test/fixtures-ts/ext.tcod"), join(proj, "ext.tcod"));
    copyFileSync(join(ROOT, "test/fixtures-ts/weights.ts"), join(proj, "weights.ts"));
    const npx = (...args: string[]) => spawnSync("npx", ["--no-install", "tcod", ...args], { cwd: proj, encoding: "utf8", timeout: 300_000 });

    const version = npx("--version");
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe((JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version);

    const check = npx("check", "ext.tcod");
    expect(check.status, check.stderr + check.stdout).toBe(0);
    if (process.platform !== "win32") {
      // That first check built the start-up snapshot in the background and gave the npm bin
      // (node_modules/.bin/tcod → bin/tcod.js) `#!/bin/sh`: from now on a check starts from the snapshot.
      const launcher = join(proj, "node_modules", "tcod", "bin", "tcod.js");
      for (let i = 0; i < 600 && !readFileSync(launcher, "utf8").startsWith("#!/bin/sh\n"); i++) execFileSync("sleep", ["0.25"]);
      expect(readFileSync(launcher, "utf8").split("\n")[0]).toBe("#!/bin/sh");
      const traced = spawnSync("sh", ["-x", join(proj, "node_modules", ".bin", "tcod"), "check", "ext.tcod"], { cwd: proj, encoding: "utf8" });
      expect(traced.status, traced.stderr).toBe(0);
      expect(traced.stderr).toContain("--snapshot-blob");
      expect(npx("check", "ext.tcod").stdout).toBe(check.stdout);
    }

    const compile = npx("compile", "ext.tcod", "--out", "plans");
    expect(compile.status, compile.stderr + compile.stdout).toBe(0);
    expect(readdirSync(join(proj, "plans")).sort()).toEqual(["with_ext.plan.bundle.mjs", "with_ext.plan.json"]);

    const run = npx("run", "ext.tcod", "--set", "steps=2", "--out", "run", "--quiet");
    expect(run.status, run.stderr + run.stdout).toBe(0);
    const rows = readFileSync(join(proj, "run", "metrics.jsonl"), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { kind: string });
    expect(rows.filter((r) => r.kind === "train")).toHaveLength(2);

    // The shipped pieces a run may need beside the bundle.
    const pkg = join(proj, "node_modules", "tcod");
    for (const f of ["stdlib/std/tcod.tcod", "types/extension.d.ts", "targets/trinity/plugin/tcod_runtime/core.py", "runtime/sinks/wandb_sink.py", "worker/tcod_worker/__main__.py", "examples/texthouse/tcod-f2b.tcod"]) {
      expect(existsSync(join(pkg, f)), f).toBe(true);
    }
  }, 600_000);
});
