/**
 * Trinity-RFT's own config loader (the `trinity-rft` package, without GPU dependencies; see
 * ci-install.sh) accepts every exported config: both targets, the five methods, the official
 * configs after import. Skipped only when the package is absent and CI is not set.
 *
 * Python: $TRINITY_PYTHON, else .venv-trinity/bin/python (ci-install.sh's default), else python3.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";
import { exportTrinity, TrinityExportError, TRINITY_UPSTREAM_VERSION, type TrinityTarget } from "../../targets/trinity/export.js";
import { atodPlan, b2fPlan, f2bPlan, opdPlan, turnopdPlan } from "./plans.js";
import { roundTrip } from "./roundtrip.js";

const PY = process.env.TRINITY_PYTHON ?? (existsSync(".venv-trinity/bin/python") ? ".venv-trinity/bin/python" : "python3");
const hasTrinity = spawnSync(PY, ["-c", "import trinity.common.config"], { encoding: "utf8" }).status === 0;
const run = hasTrinity || process.env.CI ? it : it.skip;

interface Result { config: string; ok: boolean; errors: string[]; validators: Record<string, string>; trinity_version: string }
function validate(configs: string[], target: TrinityTarget, pluginDir?: string): { status: number | null; results: Result[]; stderr: string } {
  const args = ["test/trinity/validate_trinity.py", "--target", target, ...(pluginDir ? ["--plugin-dir", pluginDir] : []), ...configs];
  const r = spawnSync(PY, args, { encoding: "utf8", maxBuffer: 1 << 26 });
  const results = r.stdout.split("\n").filter((l) => l.startsWith("TCOD_RESULT ")).map((l) => JSON.parse(l.slice(12)) as Result);
  return { status: r.status, results, stderr: r.stderr };
}

function write(dir: string, name: string, e: ReturnType<typeof exportTrinity>): { config: string; plugin?: string } {
  const config = join(dir, `${name}.yaml`);
  writeFileSync(config, e.yaml);
  if (!e.plugin) return { config };
  const plugin = join(dir, `${name}.plugin`);
  for (const [rel, text] of Object.entries(e.plugin)) {
    mkdirSync(dirname(join(plugin, rel)), { recursive: true });
    writeFileSync(join(plugin, rel), text);
  }
  return { config, plugin };
}

const PLANS = { opd: opdPlan, f2b: f2bPlan, b2f: b2fPlan, turnopd: turnopdPlan, atod: atodPlan };

describe("Trinity-RFT's loader accepts the exported configs", () => {
  if (!hasTrinity && process.env.CI) {
    it("has trinity-rft installed", () => { throw new Error(`${PY} cannot import trinity; run test/trinity/ci-install.sh and set TRINITY_PYTHON`); });
  }
  for (const target of ["tcod-fork", "upstream"] as const) {
    run(`${target}: OPD, TCOD-f2b, TCOD-b2f, TurnOPD and ATOD plans`, () => {
      const dir = mkdtempSync(join(tmpdir(), "tcod-validate-"));
      const jobs = Object.entries(PLANS).map(([name, make]) => {
        const { config, plugin } = write(dir, name, exportTrinity(make(), { target }));
        return plugin ? `${config}::${plugin}` : config;
      });
      const v = validate(jobs, target);
      expect(v.results, v.stderr).toHaveLength(5);
      for (const [i, name] of Object.keys(PLANS).entries()) {
        const r = v.results[i]!;
        expect(r.errors, name).toEqual([]);
        expect(r.ok).toBe(true);
        expect(r.trinity_version).toBe(TRINITY_UPSTREAM_VERSION);
        // The validators that need no GPU packages really ran.
        for (const k of ["GlobalConfigValidator", "ModelConfigValidator", "ExplorerConfigValidator", "SynchronizerConfigValidator"]) {
          expect(r.validators[k], `${name} ${k}`).toBe("ok");
        }
      }
      expect(v.status).toBe(0);
    });
  }

  run("the official configs, imported and exported again", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-validate-"));
    const configs = ["opd", "tcod_f2b", "tcod_b2f"].map((n) => {
      const { compiled } = roundTrip(`test/fixtures/trinity/official/${n}.yaml`);
      return write(dir, n, exportTrinity(compiled.plans[0]!.plan, { target: "tcod-fork" })).config;
    });
    const v = validate(configs, "tcod-fork");
    expect(v.results.map((r) => r.errors)).toEqual([[], [], []]);
    expect(v.status).toBe(0);
  });

  run("every example that exports (examples/{alfworld,webshop,scienceworld})", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-validate-"));
    for (const target of ["tcod-fork", "upstream"] as const) {
      const jobs: string[] = [];
      for (const d of ["alfworld", "webshop", "scienceworld"]) {
        if (!existsSync(join("examples", d))) continue;
        for (const f of readdirSync(join("examples", d)).filter((x) => x.endsWith(".tcod"))) {
          for (const p of compileFile(join("examples", d, f)).plans) {
            let e;
            try { e = exportTrinity(p.plan, { target }); } catch (err) { if (err instanceof TrinityExportError) continue; throw err; }
            const { config, plugin } = write(dir, `${target}-${d}-${f}`, e);
            jobs.push(plugin ? `${config}::${plugin}` : config);
          }
        }
      }
      if (jobs.length === 0) continue;
      const v = validate(jobs, target);
      expect(v.results.map((r) => [r.config, r.errors])).toEqual(v.results.map((r) => [r.config, []]));
      expect(v.results).toHaveLength(jobs.length);
    }
  });

  run("fails on an unknown key, a wrong type and names the target does not register", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-validate-"));
    const { config } = write(dir, "f2b", exportTrinity(f2bPlan(), { target: "tcod-fork" }));
    const text = readFileSync(config, "utf8");
    const typo = join(dir, "typo.yaml");
    writeFileSync(typo, text.replace("  eval_interval: 5", "  eval_intervall: 5"));
    const type = join(dir, "type.yaml");
    writeFileSync(type, text.replace("  batch_size: 16", "  batch_size: sixteen"));
    const v = validate([typo, type], "tcod-fork");
    expect(v.status).toBe(1);
    expect(v.results[0]!.errors.join()).toMatch(/eval_intervall/);
    expect(v.results[1]!.errors.join()).toMatch(/batch_size/);
    // The fork's names do not exist upstream: validating the fork export as upstream must fail.
    const up = validate([config], "upstream");
    expect(up.results[0]!.errors.join("\n")).toMatch(/multi_turn_opd.*not registered/);
    expect(up.results[0]!.errors.join("\n")).toMatch(/TCOD_f2b_alfworld_workflow.*not registered/);
  });
});
