/**
 * What Trinity-RFT's loader (OmegaConf.load over PyYAML's SafeLoader, merged into the structured
 * Config) does with three kinds of value, and the export and import doing the same: `${` in a
 * string (an interpolation unless escaped `\${`), a plain `<<` as a value (PyYAML's merge tag,
 * which it cannot construct there), and null in a field that is not Optional (refused).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { exportTrinity } from "../../targets/trinity/export.js";
import { importTrinity, resolvedConfig, TrinityImportError } from "../../targets/trinity/import.js";
import { escapeInterpolations, splitInterpolations } from "../../targets/trinity/interpolation.js";
import { makePlan } from "./plans.js";
import { TRINITY_PY, itWithTrinity } from "./real.js";

const F2B = readFileSync("test/fixtures/trinity/official/tcod_f2b.yaml", "utf8");
function issues(text: string) {
  try { importTrinity(text, "x.yaml"); } catch (e) { if (e instanceof TrinityImportError) return e.issues; throw e; }
  throw new Error("expected a TrinityImportError");
}
const lineOf = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;

/** Strings with `${` and backslashes in every arrangement OmegaConf's grammar distinguishes. */
const LITERALS = ["${HOME}/models/x", "${oc.env:X}", "a${b} ${c.d}", "\\${x}", "\\\\${x}", "C:\\dir\\${x}\\y", "${", "x${y", "${x}\\", "$ {x}", "$\\{x}", "plain"];

describe("`${` in a string: escaped on export, OmegaConf's reading on import", () => {
  it("escapeInterpolations writes 2n+1 backslashes before each `${` that n backslashes preceded; splitInterpolations reads it back", () => {
    expect(escapeInterpolations("${HOME}/x")).toBe("\\${HOME}/x");
    expect(escapeInterpolations("\\${x}")).toBe("\\\\\\${x}");
    expect(escapeInterpolations("C:\\dir")).toBe("C:\\dir");
    for (const s of LITERALS) expect(splitInterpolations(escapeInterpolations(s)), s).toEqual([{ literal: s }]);
    expect(splitInterpolations("\\\\${x}/y")).toEqual([{ literal: "\\" }, { expr: "x" }, { literal: "/y" }]);
    expect(splitInterpolations("a ${x")).toEqual([{ literal: "a " }, { unclosed: "${x" }]);
  });

  it("the export writes a model path holding `${` escaped; the config object keeps it as Trinity reads it; the import gives it back", () => {
    const e = exportTrinity(makePlan({ name: "esc", student: "${HOME}/models/student" }), { target: "tcod-fork" });
    expect((e.config as any).model.model_path).toBe("${HOME}/models/student");
    expect(e.yaml).toContain("model_path: \\${HOME}/models/student");
    expect((resolvedConfig(e.yaml) as any).model.model_path).toBe("${HOME}/models/student");
    expect(importTrinity(e.yaml, "esc.yaml").source).toContain(`"\${HOME}/models/student"`);
  });

  it("an environment variable's value holding `${` goes out escaped and comes back as the same --infra argument", () => {
    const e = exportTrinity(makePlan({ name: "esc" }), { target: "tcod-fork", infra: { envVars: { CACHE: "${oc.env:HOME}/cache", WIN: "C:\\${x}" } } });
    expect(e.yaml).toContain("CACHE: \\${oc.env:HOME}/cache");
    expect(importTrinity(e.yaml, "esc.yaml").infra).toEqual(expect.arrayContaining(["env_vars.CACHE=${oc.env:HOME}/cache", "env_vars.WIN=C:\\${x}"]));
  });

  itWithTrinity(["omegaconf", "yaml"])("OmegaConf 2.3 reads each escaped string back as the string itself (OmegaConf.create(yaml.load(…)), resolved)", () => {
    const text = LITERALS.map((s, i) => `k${i}: ${JSON.stringify(escapeInterpolations(s))}`).join("\n");
    const script = "import json, sys, yaml\nfrom omegaconf import OmegaConf\nprint(json.dumps(OmegaConf.to_container(OmegaConf.create(yaml.load(sys.stdin.read(), Loader=yaml.SafeLoader)), resolve=True)))";
    const py = spawnSync(TRINITY_PY, ["-c", script], { input: text, encoding: "utf8" });
    expect(py.status, py.stderr).toBe(0);
    expect(Object.values(JSON.parse(py.stdout))).toEqual(LITERALS);
  });

  it("the import reads an escaped `\\${` as the text and resolves the rest; an interpolation it cannot resolve, or one never closed, is TC7101 at the key", () => {
    const text = (v: string) => F2B.replace(/model_path: .*/, `model_path: '${v}'`);
    expect((resolvedConfig(text("\\${HOME}/m")) as any).model.model_path).toBe("${HOME}/m");
    expect((resolvedConfig(text("\\\\${oc.env:X,/opt}/m")) as any).model.model_path).toBe("\\/opt/m");
    const [unknown] = issues(text("${oc.decode:x}/m"));
    expect(unknown).toMatchObject({ path: "model.model_path", line: lineOf(text("${oc.decode:x}/m"), "model_path") });
    expect(unknown!.message).toMatch(/unsupported OmegaConf interpolation '\$\{oc\.decode:x\}': Trinity-RFT \(OmegaConf\) would resolve it/);
    expect(unknown!.hint).toContain("\\${");
    const [open] = issues(text("a${b"));
    expect(open).toMatchObject({ path: "model.model_path" });
    expect(open!.message).toMatch(/'\$\{b' opens an OmegaConf interpolation \(\$\{\) that is never closed/);
  });
});

describe("a plain `<<` as a value", () => {
  it("is refused at its key (PyYAML's merge tag cannot be constructed there); quoted it is the string", () => {
    const text = F2B.replace(/model_path: .*/, "model_path: <<");
    const [i] = issues(text);
    expect(i).toMatchObject({ path: "model.model_path", line: lineOf(text, "model_path: <<"), column: 15 });
    expect(i!.message).toMatch(/model\.model_path: a plain `<<` is YAML 1\.1's merge key to PyYAML.*could not determine a constructor for the tag 'tag:yaml\.org,2002:merge'/);
    expect(i!.hint).toMatch(/quote it \('<<'\)/i);
    const [item] = issues(F2B.replace("  optimizer:\n", "  optimizer:\n    betas: [0.9, <<]\n"));
    expect(item).toMatchObject({ path: "algorithm.optimizer.betas[1]" });
    expect((resolvedConfig(F2B.replace(/model_path: .*/, "model_path: '<<'")) as any).model.model_path).toBe("<<");
    // A merge key in a key's place is still a merge.
    expect((resolvedConfig("a: &x {b: 1}\nc:\n  <<: *x\n") as any).c).toEqual({ b: 1 });
  });

  itWithTrinity(["yaml"])("PyYAML's SafeLoader refuses the same files and reads the quoted one", () => {
    const load = (t: string) => spawnSync(TRINITY_PY, ["-c", "import sys, yaml; print(yaml.load(sys.stdin.read(), Loader=yaml.SafeLoader))"], { input: t, encoding: "utf8" });
    for (const t of ["a: <<\n", "a: [1, <<]\n", "a:\n  - <<\n"]) {
      const p = load(t);
      expect(p.status, t).not.toBe(0);
      expect(p.stderr).toContain("tag:yaml.org,2002:merge");
      expect(() => resolvedConfig(t), t).toThrow(TrinityImportError);
    }
    expect(load("a: '<<'\n").stdout.trim()).toBe("{'a': '<<'}");
  });
});

describe("null in a field Trinity does not make Optional", () => {
  it("is refused at the key, with the dataclass named and the hint to remove it; null in an Optional field is still absent", () => {
    const text = F2B.replace("  optimizer:\n    lr: 1e-6\n", "  optimizer:\n    lr: 1e-6\n    weight_decay: ~\n");
    const [i] = issues(text);
    expect(i).toMatchObject({ path: "algorithm.optimizer.weight_decay", line: lineOf(text, "weight_decay: ~") });
    expect(i!.message).toBe("algorithm.optimizer.weight_decay is null (`~`), but weight_decay is not Optional in Trinity-RFT's OptimizerConfig (trinity/common/config.py): OmegaConf refuses None for it, and Trinity refuses the config");
    expect(i!.hint).toBe("Remove the key to take Trinity's default, or give it a value.");
    // An empty value is null too; so is a whole section.
    const empty = F2B.replace("  optimizer:\n    lr: 1e-6\n", "  optimizer:\n    lr: 1e-6\n    clip_grad:\n");
    expect(issues(empty)[0]).toMatchObject({ path: "algorithm.optimizer.clip_grad", message: expect.stringMatching(/is null \(an empty value\)/) });
    expect(issues(`${F2B}\nlog: null\n`)[0]).toMatchObject({ path: "log", message: expect.stringMatching(/log is null \(`null`\), but log is not Optional in Trinity-RFT's Config/) });
    // Optional fields (Optional[…] in trinity/common/config.py) take null: warmup_style, buffer.total_steps.
    expect(() => importTrinity(F2B.replace("  optimizer:\n    lr: 1e-6\n", "  optimizer:\n    lr: 1e-6\n    warmup_style: null\n"), "x.yaml")).not.toThrow();
    // Inside a free-form field (a dict), null is any value's.
    expect(() => importTrinity(F2B.replace("  optimizer:\n", "  kl_penalty_fn_args:\n    x: ~\n  optimizer:\n"), "x.yaml")).not.toThrow();
  });
});
