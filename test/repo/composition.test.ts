/**
 * The composition root (bin/compose.ts): runtime/ registers no backend or env itself, installs no
 * process-wide handler, and no backend imports another backend's files.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { buildSync } from "esbuild";
import { describe, expect, it } from "vitest";
import { createModels } from "../../runtime/backends/registry.js";
import { createEnv, envKinds } from "../../runtime/envs/registry.js";
import { texthouseVocabulary } from "../../runtime/envs/texthouse/index.js";
import type { AgentFormat, ModelSpec } from "../../plan/schema.js";

const root = join(__dirname, "..", "..");
const files = (dir: string): string[] => readdirSync(dir).flatMap((n) => {
  const p = join(dir, n);
  return statSync(p).isDirectory() ? files(p) : p.endsWith(".ts") && !p.endsWith(".test.ts") ? [p] : [];
});

describe("the composition root", () => {
  it("runtime/ alone registers nothing: the registries are empty until bin/compose.ts fills them", async () => {
    expect(envKinds()).toEqual([]);
    expect(() => createEnv({ kind: "texthouse" } as never, { seed: 0, instance: 0 })).toThrow(/no environment of kind "texthouse"/);
    const m: ModelSpec = { path: "m", backend: { kind: "embedded", smoothing: 0.1, features: 64 } };
    const setup = { student: m, teacher: m, agent: {} as AgentFormat, seed: 0, vocabulary: texthouseVocabulary() };
    await expect(createModels(setup)).rejects.toThrow(/no backend pairing/);
    const { composeRuntime } = await import("../../bin/compose.js");
    composeRuntime();
    composeRuntime(); // idempotent
    expect(envKinds()).toEqual(["alfworld", "scienceworld", "sciworld", "textcraft", "texthouse", "textworld_express", "webshop"]);
  });

  it("no file under runtime/ installs a process-wide exit or signal handler", () => {
    const offenders = files(join(root, "runtime")).filter((f) => /process\.(on|once|addListener)\(\s*["'](exit|SIG\w+)["']/.test(readFileSync(f, "utf8")));
    expect(offenders.map((f) => relative(root, f))).toEqual([]);
  });

  it("no backend imports another backend's files", () => {
    const backends = join(root, "runtime", "backends");
    const kinds = readdirSync(backends).filter((n) => statSync(join(backends, n)).isDirectory());
    const crossings: string[] = [];
    for (const k of kinds) {
      for (const f of files(join(backends, k))) {
        for (const m of readFileSync(f, "utf8").matchAll(/from\s+"([^"]+)"/g)) {
          const target = join(f, "..", m[1]!);
          const other = kinds.find((o) => o !== k && target.startsWith(join(backends, o) + "/"));
          if (other) crossings.push(`${relative(root, f)} → ${m[1]}`);
        }
      }
    }
    expect(crossings).toEqual([]);
  });
});

describe("bin/process-guard.ts", () => {
  const dir = mkdtempSync(join(tmpdir(), "tcod-guard-"));
  const script = join(dir, "guard.mjs");
  writeFileSync(join(dir, "entry.ts"), `
    import { onProcessEnd, pendingCleanups } from ${JSON.stringify(join(root, "bin", "process-guard.ts"))};
    import { existsSync, writeFileSync } from "node:fs";
    const counts = () => [process.listenerCount("SIGTERM"), process.listenerCount("SIGHUP"), process.listenerCount("exit")].join(",");
    const before = counts();
    const off = onProcessEnd(() => writeFileSync(process.argv[2] + ".a", "ran"));
    const during = counts();
    off();
    const after = counts();
    onProcessEnd(() => writeFileSync(process.argv[2] + ".b", "ran"));
    writeFileSync(process.argv[2] + ".counts", JSON.stringify({ before, during, after, pending: pendingCleanups() }));
    if (process.argv[3] === "signal") { process.kill(process.pid, "SIGTERM"); setTimeout(() => {}, 5000); }
    if (process.argv[3] === "owned") {
      // As \`tcod run\` does: its own handler finishes the step, then exits (a second signal quits).
      let seen = 0;
      process.on("SIGTERM", () => {
        seen++;
        if (seen > 1) process.exit(99);
        setTimeout(() => { writeFileSync(process.argv[2] + ".graceful", String(existsSync(process.argv[2] + ".b"))); process.exit(143); }, 200);
      });
      process.kill(process.pid, "SIGTERM");
      setTimeout(() => {}, 5000);
    }
  `);
  buildSync({ entryPoints: [join(dir, "entry.ts")], bundle: true, platform: "node", format: "esm", outfile: script, logLevel: "silent" });

  it("installs handlers only while a clean-up is registered, and runs the clean-ups on exit", () => {
    const out = join(dir, "exit");
    const r = spawnSync(process.execPath, [script, out], { encoding: "utf8" });
    expect(r.status).toBe(0);
    const c = JSON.parse(readFileSync(out + ".counts", "utf8")) as { before: string; during: string; after: string; pending: number };
    const n = (s: string) => s.split(",").map(Number);
    expect(n(c.during)).toEqual(n(c.before).map((x) => x + 1)); // SIGTERM, SIGHUP, exit: one each
    expect(c.after).toBe(c.before);
    expect(c.pending).toBe(1);
    expect(existsSync(out + ".a")).toBe(false); // unregistered before the exit
    expect(readFileSync(out + ".b", "utf8")).toBe("ran");
  });

  it("leaves a SIGTERM that the process handles itself to that handler; the clean-ups run at its exit", () => {
    const out = join(dir, "owned");
    const r = spawnSync(process.execPath, [script, out, "owned"], { encoding: "utf8" });
    expect(r.status).toBe(143);   // the run's graceful path, not a second signal (99)
    expect(readFileSync(out + ".graceful", "utf8")).toBe("false");   // workers still there mid-step
    expect(readFileSync(out + ".b", "utf8")).toBe("ran");   // and cleaned up on exit
  });

  it("on SIGTERM runs the clean-ups, then dies of the same signal", () => {
    const out = join(dir, "signal");
    const r = spawnSync(process.execPath, [script, out, "signal"], { encoding: "utf8" });
    expect(r.signal).toBe("SIGTERM");
    expect(readFileSync(out + ".b", "utf8")).toBe("ran");
  });
});
