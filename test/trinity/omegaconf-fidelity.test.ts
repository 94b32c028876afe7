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

/** Each YAML text loaded by the installed Trinity-RFT's load_config (test/trinity/load_config.py): the values at `paths`, or its error. */
function trinityLoads(cases: { yaml: string; paths: string[] }[]): ({ values: Record<string, unknown> } | { error: string })[] {
  const py = spawnSync(TRINITY_PY, [new URL("./load_config.py", import.meta.url).pathname], { input: JSON.stringify(cases), encoding: "utf8", maxBuffer: 1 << 26 });
  expect(py.status, py.stderr.slice(-2000)).toBe(0);
  return JSON.parse(py.stdout);
}
/** The official f2b config with `monitor.monitor_args` (a free-form dict) holding `args` (YAML lines, indented 4). */
const withArgs = (text: string, args: string) => text.replace("monitor:\n", `monitor:\n  monitor_args:\n${args}`);
const at = (obj: unknown, path: string) => path.split(".").reduce<any>((o, k) => o?.[k], obj);

/**
 * Interpolations standing for a whole value (`${a.b}` alone: the value itself, typed, a mapping or
 * a list included), inside list items and nested mappings, and inside longer strings (Python's
 * str() of the value), each imported as Trinity-RFT reads it; what Trinity refuses, refused.
 * Every case here reads the same under OmegaConf 2.3 and 2.4.
 */
const NODE_CASES: { name: string; yaml: string; paths: string[]; refused?: RegExp }[] = [
  {
    name: "a free-form mapping standing for another, its own interpolation resolved",
    yaml: withArgs(F2B, "    max_env_steps: 30\n    temperature: 1.0\n    total_steps: ${buffer.total_steps}\n    checkpoint_strategy: linear\n    checkpoint_steps: 6\n").replace(/      workflow_args:\n(        .*\n)+/, "      workflow_args: ${monitor.monitor_args}\n"),
    paths: ["buffer.explorer_input.taskset.workflow_args"],
  },
  { name: "a list field standing for a list", yaml: withArgs(F2B, "    b: [0.8, 0.9]\n").replace("    lr: 1e-6\n", "    lr: 1e-6\n    betas: ${monitor.monitor_args.b}\n"), paths: ["algorithm.optimizer.betas"] },
  { name: "list items, one quoted", yaml: withArgs(F2B, "    b: 0.8\n").replace("    lr: 1e-6\n", "    lr: 1e-6\n    betas: ['${monitor.monitor_args.b}', '${algorithm.advantage_fn_args.kl_coef}']\n"), paths: ["algorithm.optimizer.betas"] },
  { name: "a nested mapping's items", yaml: withArgs(F2B, "    n: {a: '${buffer.total_steps}', b: ['${model.model_path}', 2]}\n"), paths: ["monitor.monitor_args"] },
  { name: "a mapping that holds its own interpolation", yaml: withArgs(F2B, "    a: ${monitor.monitor_args}\n"), paths: ["monitor.monitor_args"], refused: /stands for a mapping that holds it/ },
  { name: "null where the field is not Optional", yaml: withArgs(F2B, "    n: null\n").replace("    lr: 1e-6\n", "    lr: 1e-6\n    weight_decay: ${monitor.monitor_args.n}\n"), paths: ["algorithm.optimizer.weight_decay"], refused: /weight_decay is null .*interpolation \$\{monitor\.monitor_args\.n\}/ },
  { name: "a float in an int field", yaml: withArgs(F2B, "    f: 16.0\n").replace("  batch_size: 16\n", "  batch_size: ${monitor.monitor_args.f}\n"), paths: ["buffer.batch_size"], refused: /batch_size must be an integer, got 16\.0/ },
  {
    name: "numbers and booleans inside a string: Python's str()",
    yaml: withArgs(F2B, "    n: 16\n    y: yes\n    f: 2.50\n    z: ~\n").replace("model_path: Qwen/Qwen2.5-1.5B-Instruct", "model_path: m/${algorithm.optimizer.lr}_${monitor.monitor_args.n}_${monitor.monitor_args.y}_${monitor.monitor_args.f}_${monitor.monitor_args.z}"),
    paths: ["model.model_path"],
  },
  {
    name: "a dataclass field's value inside a string: str() of the value as the field converts it (an int's digits, a float field's int as a float, an enum's member)",
    yaml: F2B.replace("model_path: Qwen/Qwen2.5-1.5B-Instruct", "model_path: m/${buffer.total_steps}_${buffer.batch_size}_${trainer.grad_clip}_${synchronizer.sync_method}_${trainer.save_interval}_${explorer.rollout_model.seed}").replace("  grad_clip: 1.0\n", "  grad_clip: 1\n"),
    paths: ["model.model_path"],
  },
  {
    name: "keys the file leaves out: Trinity's static defaults, whole and inside a string",
    yaml: withArgs(F2B, "    a: ${algorithm.optimizer.clip_grad}\n    b: ${buffer.trainer_input.experience_buffer.max_read_timeout}\n    c: ${log.level}\n    d: ${explorer.max_retry_times}\n    e: m-${algorithm.optimizer.weight_decay}-${buffer.trainer_input.experience_buffer.capacity}-${explorer.over_rollout.wait_after_min}-${explorer.auxiliary_models.0.gpu_memory_utilization}-${explorer.eval_on_startup}-${trainer.save_strategy}\n    f: ${model.model_path}\n"),
    paths: ["monitor.monitor_args"],
  },
  { name: "an item of a default list (was: refused)", yaml: F2B.replace("    lr: 1e-6\n", "    lr: ${algorithm.optimizer.betas.0}\n"), paths: ["algorithm.optimizer.lr"] },
  {
    name: "items of default lists and dicts inside a string: the float 2.0 of a dict's default, 0.999 (was: refused)",
    yaml: F2B.replace("model_path: Qwen/Qwen2.5-1.5B-Instruct", "model_path: m${buffer.trainer_input.experience_buffer.replay_buffer.priority_fn_args.decay}-${algorithm.optimizer.betas.1}"),
    paths: ["model.model_path"],
  },
  { name: "an item a default list lacks", yaml: F2B.replace("    lr: 1e-6\n", "    lr: ${algorithm.optimizer.betas.5}\n"), paths: ["algorithm.optimizer.lr"], refused: /Trinity-RFT's default for algorithm\.optimizer\.betas, \[0\.9,0\.999\], has no item 5/ },
  { name: "an int field standing for a default", yaml: F2B.replace("  batch_size: 16\n", "  batch_size: ${explorer.max_retry_times}\n"), paths: ["buffer.batch_size"] },
  { name: "an int field standing for a float default", yaml: F2B.replace("  batch_size: 16\n", "  batch_size: ${algorithm.optimizer.clip_grad}\n"), paths: ["buffer.batch_size"], refused: /batch_size must be an integer, got 1\.0, .*Trinity-RFT's default for algorithm\.optimizer\.clip_grad, which the file leaves out/ },
  { name: "a key no dataclass has", yaml: F2B.replace("model_path: Qwen/Qwen2.5-1.5B-Instruct", "model_path: m${algorithm.optimizer.nope}"), paths: ["model.model_path"], refused: /refers to algorithm\.optimizer\.nope, which this file does not define \(Trinity-RFT's OptimizerConfig has no field nope\).*Interpolation key 'algorithm\.optimizer\.nope' not found/ },
  { name: "an item a list lacks", yaml: F2B.replace("model_path: Qwen/Qwen2.5-1.5B-Instruct", "model_path: m${explorer.auxiliary_models.3.engine_num}"), paths: ["model.model_path"], refused: /refers to explorer\.auxiliary_models\.3\.engine_num, which this file does not define/ },
  { name: "a key under a section whose default is None", yaml: F2B.replace("model_path: Qwen/Qwen2.5-1.5B-Instruct", "model_path: m${data_processor.task_pipeline.num_process}"), paths: ["model.model_path"], refused: /Trinity-RFT's default for data_processor\.task_pipeline is None, not a section/ },
  { name: "an enum field given a number", yaml: F2B.replace("trainer:\n", "trainer:\n  save_strategy: 1\n"), paths: ["trainer.save_strategy"], refused: /trainer\.save_strategy is an integer, 1: Trinity-RFT's SaveStrategy takes a name of its members/ },
  { name: "an enum field given a misspelt member", yaml: F2B.replace("trainer:\n", "trainer:\n  save_strategy: single_nod\n"), paths: ["trainer.save_strategy"], refused: /"single_nod": not a member of Trinity-RFT's SaveStrategy/ },
  { name: "a format's prompt_type given a non-member", yaml: F2B.replace("        prompt_key: 'game_file'\n      rollout_args:\n        temperature: 1.0", "        prompt_key: 'game_file'\n        prompt_type: chat\n      rollout_args:\n        temperature: 1.0"), paths: ["buffer.explorer_input.taskset.format.prompt_type"], refused: /taskset\.format\.prompt_type is a string, "chat": not a member of Trinity-RFT's PromptType \(messages, plaintext, in any case\)/ },
  { name: "sync_style given a number", yaml: F2B.replace("  sync_style: 'dynamic_by_explorer'\n", "  sync_style: 2\n"), paths: ["synchronizer.sync_style"], refused: /sync_style/ },
  {
    name: "enum fields given members in any case, an alias, or with the enum's name",
    yaml: F2B.replace("trainer:\n", "trainer:\n  save_strategy: SaveStrategy.Single_Node\n").replace("  sync_method: 'nccl'\n", "  sync_method: Online\n").replace("        prompt_key: 'game_file'\n      rollout_args:\n        temperature: 1.0", "        prompt_key: 'game_file'\n        prompt_type: PLAINTEXT\n      rollout_args:\n        temperature: 1.0"),
    paths: ["model.model_path"],
  },
  { name: "a float field given a boolean, which the import does not read", yaml: F2B.replace("  max_timeout: 3600\n", "  max_timeout: 3600\n  over_rollout: {ratio: true}\n"), paths: ["explorer.over_rollout.ratio"], refused: /explorer\.over_rollout\.ratio is a boolean, True: Trinity-RFT's field is a float/ },
  { name: "a list field given a number", yaml: F2B.replace("          selector_type: random\n", "          selector_type: random\n          feature_keys: 5\n"), paths: ["buffer.explorer_input.eval_tasksets.0.task_selector.feature_keys"], refused: /feature_keys is an integer, 5: Trinity-RFT's field is a list/ },
  {
    name: "oc.env defaults: str() of what OmegaConf's grammar reads",
    yaml: withArgs(F2B, "    a: '${oc.env:TCOD_UNSET_X,1e-6}'\n    b: '${oc.env:TCOD_UNSET_X,TRUE}'\n    c: \"${oc.env:TCOD_UNSET_X,'a,b'}\"\n    d: '${oc.env:TCOD_UNSET_X, x y }'\n    e: '${oc.env:TCOD_UNSET_X,010}'\n    f: '${oc.env:TCOD_UNSET_X,1_000}'\n    g: '${oc.env:TCOD_UNSET_X,1.50}'\n    h: '${oc.env:TCOD_UNSET_X,/opt/m-1}'\n    i: '${oc.env:TCOD_UNSET_X,null}'\n"),
    paths: ["monitor.monitor_args"],
  },
];

describe("interpolations of whole values, in lists and nested mappings, and in strings, as Trinity-RFT reads them", () => {
  it("each case imports to those values, or is refused at the key (TC7101)", () => {
    for (const c of NODE_CASES) {
      if (c.refused) { expect(issues(c.yaml).map((i) => i.message).join("\n"), c.name).toMatch(c.refused); continue; }
      expect(() => importTrinity(c.yaml, "x.yaml"), c.name).not.toThrow();
    }
    const wa = NODE_CASES[0]!;
    expect(at(resolvedConfig(wa.yaml), wa.paths[0]!)).toEqual({ max_env_steps: 30, temperature: 1, total_steps: 250, checkpoint_strategy: "linear", checkpoint_steps: 6 });
    expect(importTrinity(wa.yaml, "x.yaml").source).toMatch(/horizon: +f2b\(every: 6 steps, max: 30 turns\)/);
    expect(importTrinity(NODE_CASES[1]!.yaml, "x.yaml").source).toContain("betas: [0.8, 0.9]");
    expect(importTrinity(NODE_CASES[2]!.yaml, "x.yaml").source).toContain("betas: [0.8, 1.0]");
    expect(at(resolvedConfig(NODE_CASES[7]!.yaml), "model.model_path")).toBe("m/1e-06_16_True_2.5_None");
    const item = (name: string) => NODE_CASES.find((x) => x.name.startsWith(name))!.yaml;
    expect(at(resolvedConfig(item("an item of a default list")), "algorithm.optimizer.lr")).toBe(0.9);
    expect(importTrinity(item("an item of a default list"), "x.yaml").source).toMatch(/lr: +0\.9\b/);
    expect(at(resolvedConfig(item("items of default lists and dicts")), "model.model_path")).toBe("m2.0-0.999");
  });

  itWithTrinity(["trinity.common.config"])("Trinity-RFT's load_config reads the same values, and refuses the refused ones", () => {
    const got = trinityLoads(NODE_CASES.map(({ yaml, paths }) => ({ yaml, paths })));
    NODE_CASES.forEach((c, i) => {
      const g = got[i]!;
      if (c.refused) { expect("error" in g, `${c.name}: ${JSON.stringify(g)}`).toBe(true); return; }
      expect("values" in g ? g.values : g, c.name).toEqual(Object.fromEntries(c.paths.map((p) => [p, at(resolvedConfig(c.yaml), p)])));
    });
  });

  it("an interpolation where Trinity's schema has a section (a dataclass, or a list of them) is refused at it, with the alias as the way to repeat one (OmegaConf 2.3 refuses it at the merge)", () => {
    const text = F2B.replace("    taskset:\n", "    taskset: ${buffer.explorer_input.eval_tasksets.0}\n    unused:\n");
    const [i] = issues(text);
    expect(i).toMatchObject({ path: "buffer.explorer_input.taskset", line: lineOf(text, "taskset: ${"), column: 14 });
    expect(i!.message).toBe("buffer.explorer_input.taskset: the interpolation ${buffer.explorer_input.eval_tasksets.0} stands where Trinity-RFT's config has the section TasksetConfig (a dataclass): OmegaConf 2.3 refuses that when Trinity loads the config (\"Merge error: str is not a subclass of TasksetConfig\"), and later releases take it only from a node of the same dataclass");
    expect(i!.hint).toMatch(/YAML alias/);
    const item = F2B.replace(/    eval_tasksets:\n/, "    eval_tasksets:\n      - ${buffer.explorer_input.taskset}\n");
    expect(issues(item)[0]).toMatchObject({ path: "buffer.explorer_input.eval_tasksets[0]", message: expect.stringMatching(/has the section TasksetConfig/) });
    // Standing for a section in a free-form field: OmegaConf fills it with Trinity's defaults, which tcod does not know.
    expect(() => resolvedConfig(withArgs(F2B, "    s: ${buffer.explorer_input.taskset.format}\n"))).toThrow(/stands for buffer\.explorer_input\.taskset\.format, a section of Trinity-RFT's config/);
    // A cycle.
    expect(issues(withArgs(F2B, "    a: ${monitor.monitor_args.b}\n    b: ${monitor.monitor_args.a}\n"))[0]!.message).toMatch(/is part of a cycle of interpolations/);
  });

  it("values inside a string are str() of what the field holds (was: an integer of a dataclass field refused); Trinity's defaults are noted", () => {
    const c = (name: string) => NODE_CASES.find((x) => x.name.startsWith(name))!;
    expect(at(resolvedConfig(c("a dataclass field's value inside a string").yaml), "model.model_path")).toBe("m/250_16_1.0_SyncMethod.NCCL_250_42");
    const d = c("keys the file leaves out");
    expect(at(resolvedConfig(d.yaml), "monitor.monitor_args")).toEqual({ a: 1, b: 1800, c: "INFO", d: 2, e: "m-0.01-10000-30.0-0.9-True-SaveStrategy.UNRESTRICTED", f: "Qwen/Qwen2.5-1.5B-Instruct" });
    const n = importTrinity(c("an int field standing for a default").yaml.replace("model_path: Qwen/Qwen2.5-1.5B-Instruct", "model_path: m-${trainer.save_strategy}-${buffer.trainer_input.experience_buffer.max_read_timeout}"), "x.yaml");
    expect(n.source).toMatch(/batch: +2 tasks/);
    expect(n.source).toContain(`"m-SaveStrategy.UNRESTRICTED-1800.0"`);
    expect(n.notes).toEqual(expect.arrayContaining([
      "buffer.batch_size: ${explorer.max_retry_times} → Trinity-RFT's default 2 (the file does not set explorer.max_retry_times)",
      "model.model_path: ${trainer.save_strategy} → Trinity-RFT's default SaveStrategy.UNRESTRICTED (the file does not set trainer.save_strategy)",
      "model.model_path: ${buffer.trainer_input.experience_buffer.max_read_timeout} → Trinity-RFT's default 1800.0 (the file does not set buffer.trainer_input.experience_buffer.max_read_timeout)",
    ]));
  });

  it("an enum field's non-member is refused at its key with the closest member", () => {
    const text = F2B.replace("trainer:\n", "trainer:\n  save_strategy: single_nod\n");
    const [i] = issues(text);
    expect(i).toMatchObject({ path: "trainer.save_strategy", line: lineOf(text, "save_strategy:"), column: 18 });
    expect(i!.message).toBe(`trainer.save_strategy is a string, "single_nod": not a member of Trinity-RFT's SaveStrategy (single_thread, single_process, single_node, unrestricted, in any case): OmegaConf refuses it ("Invalid value"), and Trinity refuses the config`);
    expect(i!.hint).toBe("Did you mean 'single_node'? Write one of single_thread, single_process, single_node, unrestricted.");
    const [n] = issues(F2B.replace("trainer:\n", "trainer:\n  save_strategy: 1\n"));
    expect(n!.message).toMatch(/'int' object has no attribute 'lower'/);
  });
});

describe("an interpolation of a key the file leaves out, whose default is not the value Trinity runs with", () => {
  const AUTO = F2B.replace("model_path: Qwen/Qwen2.5-1.5B-Instruct", "model_path: ${log.save_dir}").replace("- name: alfworld_eval_seen", "- name: e${model.max_model_len}").replace("    lr: 1e-6\n", "    lr: ${algorithm.optimizer.min_lr_ratio}\n");
  it("is refused at the interpolation: a field Trinity fills when it checks the config, a default that differs between releases", () => {
    const is = issues(AUTO);
    expect(is.map((i) => [i.path, i.line])).toEqual([["algorithm.optimizer.lr", lineOf(AUTO, "lr: ${")], ["model.model_path", lineOf(AUTO, "model_path: ${")], ["buffer.explorer_input.eval_tasksets[0].name", lineOf(AUTO, "name: e${")]]);
    const [lr, mp, name] = is;
    expect(mp!.message).toBe("'${log.save_dir}' refers to log.save_dir, which this file does not set and Trinity-RFT fills itself when it checks the config: OmegaConf resolves the interpolation before that, with the dataclass's placeholder '', not the value the run uses");
    expect(mp!.hint).toMatch(/^Write log\.save_dir in the file, or the value here/);
    expect(name!.message).toMatch(/placeholder None, not the value the run uses/);
    expect(lr!.message).toBe("'${algorithm.optimizer.min_lr_ratio}' refers to algorithm.optimizer.min_lr_ratio, which this file does not set, and Trinity-RFT's default for algorithm.optimizer.min_lr_ratio differs between releases (0.4.1: 0.0, 0.5.0: 0.0, 0.5.1: 0.0, 0.5.2: 0.01, 0.6.0: 0.01)");
  });
  itWithTrinity(["trinity.common.config"])("Trinity-RFT's load_config gives the placeholder there, not the value its run uses", () => {
    expect(trinityLoads([{ yaml: AUTO, paths: ["model.model_path", "buffer.explorer_input.eval_tasksets.0.name", "algorithm.optimizer.lr"] }])[0]).toEqual({ values: { "model.model_path": "", "buffer.explorer_input.eval_tasksets.0.name": "eNone", "algorithm.optimizer.lr": 0.01 } });
  });
});

describe("explorer.env_vars: strings, as Ray takes them", () => {
  /** Values JavaScript and Python would write differently as numbers, and words YAML 1.1 reads as something else. */
  const VALUES = ["1e21", "0.000001", "1e-06", "-0", "-0.0", "1e-7", "True", "on", "010", "1_000", "null", "~", "1.0", "+1", ".5", "0x1F", "1:30", "1e5", ""];

  it("the export writes each as a string Trinity reads back as itself, and the import hands the same --infra back", () => {
    const envVars = Object.fromEntries(VALUES.map((v, i) => [`V${i}`, v]));
    const e = exportTrinity(makePlan({ name: "ev" }), { target: "tcod-fork", infra: { envVars } });
    expect((resolvedConfig(e.yaml) as any).explorer.env_vars).toEqual(envVars);
    expect(importTrinity(e.yaml, "ev.yaml").infra.filter((a) => a.startsWith("env_vars."))).toEqual(VALUES.map((v, i) => `env_vars.V${i}=${v}`));
  });

  itWithTrinity(["trinity.common.config"])("Trinity-RFT's load_config reads the exported strings back as the same strings", () => {
    const envVars = Object.fromEntries(VALUES.map((v, i) => [`V${i}`, v]));
    const e = exportTrinity(makePlan({ name: "ev" }), { target: "tcod-fork", infra: { envVars } });
    expect(trinityLoads([{ yaml: e.yaml, paths: ["explorer.env_vars"] }])[0]).toEqual({ values: { "explorer.env_vars": envVars } });
  });

  it("a number, boolean or null value is refused at its key (was: written back as JavaScript formats the number, 1e-7 for Python's 1e-07)", () => {
    const text = F2B.replace("  env_vars:\n", "  env_vars:\n    A: 1e-7\n    B: ~\n    C: ${buffer.batch_size}\n");
    const is = issues(text);
    expect(is.map((i) => i.path)).toEqual(["explorer.env_vars.A", "explorer.env_vars.B", "explorer.env_vars.C"]);
    expect(is[0]!.message).toMatch(/^explorer\.env_vars\.A: 1e-7 is a number to PyYAML .* Ray refuses any value that is not a string/);
    expect(is[0]!.hint).toBe(`Quote it (A: "1e-7") to set the variable to that text.`);
    expect(is[2]!.message).toMatch(/the interpolation \$\{buffer\.batch_size\} at line \d+, column 8 brings it here/);
    expect(importTrinity(F2B.replace("  env_vars:\n", "  env_vars:\n    A: '1e-7'\n"), "x.yaml").infra).toContain("env_vars.A=1e-7");
  });

  itWithTrinity(["ray"])("Ray refuses a runtime_env whose env_vars holds a number, as Trinity's workflow runners are made with it", () => {
    const py = spawnSync(TRINITY_PY, ["-c", "from ray._private.runtime_env.validation import parse_and_validate_env_vars as v\ntry:\n  v({'A': 1e-07}); print('taken')\nexcept TypeError as e: print(e)"], { encoding: "utf8" });
    expect(py.stdout).toContain("runtime_env['env_vars'] must be of type Dict[str, str]");
  });
});

/**
 * Interpolations in keys the import does not read (monitor.monitor_args, a free-form mapping), which
 * Trinity-RFT resolves all the same when it loads the config (OmegaConf.to_object): each accepted or
 * refused as Trinity's load_config accepts or refuses it (were: all accepted unread).
 */
const UNREAD_CASES: { name: string; args: string; refused?: RegExp }[] = [
  { name: "a key neither the file nor Trinity has", args: "    x: ${nope.key}\n", refused: /'\$\{nope\.key\}' refers to nope\.key, which this file does not define \(Trinity-RFT's Config has no field nope\)/ },
  { name: "the same inside a string", args: "    x: a${nope.key}b\n", refused: /Interpolation key 'nope\.key' not found/ },
  { name: "the same in a list item", args: "    x: [1, '${nope.k}']\n", refused: /nope\.k/ },
  { name: "the same in a nested mapping", args: "    x: {y: {z: '${nope.k}'}}\n", refused: /nope\.k/ },
  { name: "a key under a section whose default is None", args: "    x: ${buffer.explorer_output.name}\n", refused: /Trinity-RFT's default for buffer\.explorer_output is None, not a section/ },
  { name: "a resolver Trinity does not register", args: "    x: ${now:}\n", refused: /calls the resolver now, which Trinity-RFT does not register.*Unsupported interpolation type now/ },
  { name: "oc.env without its argument", args: "    x: ${oc.env:}\n", refused: /gives the resolver oc\.env no argument/ },
  { name: "a key inside a resolver's argument, which OmegaConf resolves first", args: "    x: ${oc.select:nope.k,${nope.j}}\n", refused: /nope\.j/ },
  { name: "a relative key the mapping lacks", args: "    x: ${.z}\n    y: 1\n", refused: /'\$\{\.z\}' refers to monitor\.monitor_args\.z \(relative to monitor\.monitor_args\.x\)/ },
  { name: "a relative key past the root", args: "    x: ${.........nope}\n", refused: /goes 9 levels up from monitor\.monitor_args\.x, past the config's root/ },
  { name: "text OmegaConf's grammar does not parse", args: "    x: ${a b}\n", refused: /is not an interpolation OmegaConf's grammar reads/ },
  { name: "oc.select of a missing key, with or without a default", args: "    x: ${oc.select:nope.key,5}\n    y: ${oc.select:nope.key}\n    z: ${oc.select:nope,${buffer.batch_size}}\n" },
  { name: "oc.decode, oc.dict.keys, oc.deprecated", args: "    x: \"${oc.decode:'[1,2]'}\"\n    y: ${oc.dict.keys:monitor}\n    z: ${oc.deprecated:monitor.monitor_type}\n" },
  { name: "relative keys", args: "    x: ${.y}\n    y: 1\n    z: ${..monitor_type}\n" },
  { name: "keys with a dash, brackets, spaces around", args: "    x: ${monitor.monitor_args.my-key}\n    my-key: 1\n    b: ${algorithm.optimizer.betas[1]}\n    c: ${ monitor.monitor_type }\n" },
  { name: "a field Trinity fills itself, a section, a default that differs between releases: they resolve, whatever their value", args: "    x: a${buffer.explorer_input.taskset.batch_size}\n    y: ${buffer.explorer_input.taskset.format}\n    z: ${trainer.trainer_strategy}\n" },
  { name: "oc.env without a default, of a variable that is set", args: "    x: ${oc.env:HOME}\n" },
];

describe("interpolations in keys the import does not read, as Trinity-RFT resolves them", () => {
  it("each case imports, or is refused (TC7101) at the value holding the interpolation", () => {
    for (const c of UNREAD_CASES) {
      const yaml = withArgs(F2B, c.args);
      if (c.refused) {
        const is = issues(yaml);
        expect(is.map((i) => i.message).join("\n"), c.name).toMatch(c.refused);
        expect(is[0]!.path, c.name).toMatch(/^monitor\.monitor_args\.x/);
        expect(is[0]!.line, c.name).toBe(lineOf(yaml, "    x:"));
        continue;
      }
      expect(() => importTrinity(yaml, "x.yaml"), c.name).not.toThrow();
    }
    const env = importTrinity(withArgs(F2B, "    x: ${oc.env:HOME}\n"), "x.yaml");
    expect(env.notes).toContain("monitor.monitor_args.x: ${oc.env:HOME} is read from the environment when Trinity-RFT loads the config, which it refuses where HOME is unset (the import does not use this key)");
  });

  itWithTrinity(["trinity.common.config"])("Trinity-RFT's load_config accepts and refuses the same ones", () => {
    const got = trinityLoads(UNREAD_CASES.map((c) => ({ yaml: withArgs(F2B, c.args), paths: ["monitor.monitor_args"] })));
    UNREAD_CASES.forEach((c, i) => expect("error" in got[i]!, `${c.name}: ${JSON.stringify(got[i])}`).toBe(c.refused !== undefined));
  });
});
