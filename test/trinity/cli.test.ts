/** `tcod export trinity` / `tcod import trinity` as a user runs them: files, exit codes, messages. */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";

const ROOT = join(import.meta.dirname, "../..");
const tcod = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd: ROOT, encoding: "utf8" });
const noStack = (s: string) => expect(s).not.toMatch(/\n\s+at .+:\d+:\d+/);
const escapeRegExp = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
type RefusedCase = [name: string, content: Buffer | string, error: RegExp, hint: RegExp];
/** Writes each case's file into `dir` and imports it: exit 1, no stack trace, `FILE` + error, hint, then `more`. */
function expectRefused(dir: string, cases: RefusedCase[], more: (stderr: string, name: string) => void): void {
  for (const [name, content, error, hint] of cases) {
    const file = join(dir, name);
    writeFileSync(file, content);
    const r = tcod("import", "trinity", file);
    expect(r.status, name).toBe(1);
    noStack(r.stderr);
    expect(r.stderr, name).toMatch(new RegExp(escapeRegExp(file) + error.source));
    expect(r.stderr, name).toMatch(hint);
    more(r.stderr, name);
  }
}

describe("tcod import/export trinity", () => {
  it("import → .tcod file → export gives a config and, for upstream, a plugin directory", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-cli-trinity-"));
    const tc = join(dir, "b2f.tcod");
    const imp = tcod("import", "trinity", "test/fixtures/trinity/official/tcod_b2f.yaml", "--out", tc);
    expect(imp.stderr).toContain("curriculum alfworld_tcod_b2f");
    expect(imp.status).toBe(0);
    expect(readFileSync(tc, "utf8")).toContain("prefix:");
    const out = join(dir, "out");
    const exp = tcod("export", "trinity", tc, "--out", out, "--target", "upstream", "--json");
    expect(exp.status).toBe(0);
    const res = JSON.parse(exp.stdout.trim()) as { command: string; ok: boolean; exports: { config: string; plugin: string; workflow: string }[] };
    expect(res).toMatchObject({ command: "export", ok: true });
    const line = res.exports[0]!;
    expect(line.workflow).toBe("tcod_alfworld_tcod_b2f_workflow");
    expect(existsSync(join(line.plugin, "tcod_workflow.py"))).toBe(true);
    expect(existsSync(join(line.plugin, "tcod_runtime", "core.py"))).toBe(true);
    const yamlText = readFileSync(line.config, "utf8");
    expect(yamlText).toContain("--plugin-dir alfworld_tcod_b2f.plugin");
    expect((parseYaml(yamlText) as any).buffer.explorer_input.default_workflow_type).toBe("tcod_alfworld_tcod_b2f_workflow");
  });

  it("import prints to stdout without --out", () => {
    const r = tcod("import", "trinity", "test/fixtures/trinity/official/opd.yaml");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^\/\/ Imported from/);
    expect(r.stdout).toContain("curriculum alfworld_opd {");
  });

  it("bad config: file:line error, exit 1, no stack trace", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-cli-trinity-"));
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, readFileSync("test/fixtures/trinity/official/tcod_f2b.yaml", "utf8").replace("TCOD_f2b_alfworld_workflow", "Foo_workflow"));
    const r = tcod("import", "trinity", bad);
    expect(r.status).toBe(1);
    noStack(r.stderr);
    expect(r.stderr).toMatch(new RegExp(`${escapeRegExp(bad)}:\\d+:\\d+ error TC7101: unknown workflow type 'Foo_workflow'`));
  });

  it("a UTF-16 file (PowerShell's `>`), a file of two YAML documents and a misspelt buffer key: TC7101 each, exit 1 (were: 'not a mapping', the YAML library's wording, accepted)", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-cli-trinity-"));
    const f2b = readFileSync("test/fixtures/trinity/official/tcod_f2b.yaml", "utf8");
    const cases: RefusedCase[] = [
      ["utf16.yaml", Buffer.from("\uFEFF" + f2b, "utf16le"), /:1:1 error TC7101: the file is encoded as UTF-16 \(little-endian, with a byte-order mark\); Trinity-RFT \(OmegaConf\.load\) and tcod read a config as UTF-8/, /hint: Save it as UTF-8/],
      ["appended.yaml", Buffer.concat([Buffer.from(f2b, "utf8"), Buffer.from("log:\n  level: INFO\n", "utf16le")]), new RegExp(`:${f2b.split("\n").length}:1 error TC7101: the file is encoded as UTF-16 from here on \\(UTF-8 before it\\)`), /hint: Save it as UTF-8.*\(Windows PowerShell's `>>` appends UTF-16 to a UTF-8 file\)/],
      ["two.yaml", f2b + "---\nname: other\n", new RegExp(`:${f2b.split("\n").length}:1 error TC7101: a second YAML document starts here`), /hint: Keep the config's one document/],
      ["typo.yaml", f2b.replace("  batch_size: 16", "  batch_sise: 16"), /:33:3 error TC7101: unknown key buffer\.batch_sise/, /hint: Did you mean 'batch_size'\?/],
    ];
    expectRefused(dir, cases, (stderr) => expect(stderr).not.toMatch(/not a mapping|parseAllDocuments/));
  });

  it("a Latin-1 byte in a comment, and a typo in a file of lone CR line endings: TC7101 at the right line and column, exit 1 (were: accepted; line 1)", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-cli-trinity-"));
    const f2b = readFileSync("test/fixtures/trinity/official/tcod_f2b.yaml", "utf8");
    const latin1 = join(dir, "latin1.yaml");
    writeFileSync(latin1, Buffer.from(f2b.replace("checkpoint_root_dir:", "# caf\u00e9\ncheckpoint_root_dir:"), "latin1"));
    const r = tcod("import", "trinity", latin1);
    expect(r.status).toBe(1);
    noStack(r.stderr);
    expect(r.stderr).toContain(`${latin1}:3:6 error TC7101: the file is not valid UTF-8: the byte 0xE9 here is not UTF-8`);
    expect(r.stderr).toContain("hint: Save the file as UTF-8");
    const json = tcod("import", "trinity", latin1, "--json");
    expect(JSON.parse(json.stdout.trim().split("\n").at(-1)!)).toMatchObject({ ok: false, exitCode: 1, error: { code: "TC7101", where: { line: 3, column: 6 } } });
    const genuine = join(dir, "genuine.yaml");
    writeFileSync(genuine, "# \uFFFD\n" + f2b);
    expect(tcod("import", "trinity", genuine).status).toBe(0);

    const cr = join(dir, "cr.yaml");
    writeFileSync(cr, f2b.replace("  batch_size: 16", "  batch_sise: 16").replace(/\n/g, "\r"));
    const c = tcod("import", "trinity", cr);
    expect(c.status).toBe(1);
    expect(c.stderr).toContain(`${cr}:33:3 error TC7101: unknown key buffer.batch_sise`);
    const ok = join(dir, "cr-ok.yaml");
    writeFileSync(ok, f2b.replace(/\n/g, "\r"));
    expect(tcod("import", "trinity", ok).stdout).toBe(tcod("import", "trinity", "test/fixtures/trinity/official/tcod_f2b.yaml").stdout.replace("test/fixtures/trinity/official/tcod_f2b.yaml", ok));
  });

  it("a NUL byte in a comment, a misspelt model or cluster key, and one in explorer.over_rollout: TC7101 each at its line and column, exit 1 (were: accepted)", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-cli-trinity-"));
    const f2b = readFileSync("test/fixtures/trinity/official/tcod_f2b.yaml", "utf8");
    const cases: RefusedCase[] = [
      // "  # Student model" is line 22; the NUL is its 12th character.
      ["nul.yaml", Buffer.from(f2b.replace("# Student model", "# Student\0 model"), "utf8"), /:22:12 error TC7101: the file contains the control character U\+0000 \(NUL\), which YAML does not allow in a file: Trinity-RFT's loader \(OmegaConf\.load, PyYAML\) refuses the config \("unacceptable character"\) \(at \$\)/, /hint: Remove it; a NUL usually means a binary, truncated or wrongly encoded file/],
      ["model.yaml", f2b.replace("  max_response_tokens: 512", "  max_respose_tokens: 512"), /:25:3 error TC7101: unknown key model\.max_respose_tokens: Trinity-RFT's model section has no such key/, /hint: Did you mean 'max_response_tokens'\?/],
      ["cluster.yaml", f2b.replace("  gpu_per_node: 8", "  gpus_per_node: 8"), /:29:3 error TC7101: unknown key cluster\.gpus_per_node/, /hint: Did you mean 'gpu_per_node'\?/],
      ["over.yaml", f2b.replace("  max_timeout: 3600", "  max_timeout: 3600\n  over_rollout:\n    ratoi: 0.5"), /:124:5 error TC7101: unknown key explorer\.over_rollout\.ratoi: Trinity-RFT's explorer\.over_rollout section has no such key/, /hint: Did you mean 'ratio'\? Remove it, or correct its name; explorer\.over_rollout section takes ratio, wait_after_min, return_partial_tasks\./],
    ];
    expectRefused(dir, cases, (stderr, name) => expect(stderr, name).toMatch(/\n1 error\(s\)\n$/));
  });

  it("YAML aliases and merge keys: a merged eval taskset imports; a typo an alias or merge key brings, an alias bomb, an alias without its anchor: TC7101 each, exit 1 (were: refused whole, not checked, 'expand too far')", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-cli-trinity-"));
    const f2b = readFileSync("test/fixtures/trinity/official/tcod_f2b.yaml", "utf8");
    const merged = join(dir, "merged.yaml");
    writeFileSync(merged, f2b.replace("      - name: alfworld_eval_seen\n", "      - &seen\n        name: alfworld_eval_seen\n")
      .replace("    default_workflow_type:", "      - <<: *seen\n        name: alfworld_eval_unseen\n        path: /path/to/alfworld_data/test_unseen.jsonl\n    default_workflow_type:"));
    const ok = tcod("import", "trinity", merged);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`env: alfworld(split: "valid_unseen", task_file: "/path/to/alfworld_data/test_unseen.jsonl"), tasks: 10 tasks, temperature: 0.4, name: "alfworld_eval_unseen")`);
    const laughs = ["lol0: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"];
    for (let i = 1; i <= 9; i++) laughs.push(`lol${i}: &l${i} [${Array(10).fill(`*l${i - 1}`).join(", ")}]`);
    const cases: RefusedCase[] = [
      // rollout_model is line 123; the typo, line 124, is reported there once, though the teacher merges it in too.
      ["engine.yaml", f2b.replace("  rollout_model:\n", "  rollout_model: &engine\n    tensor_paralel_size: 2\n").replace("    - model_path: /path/to/teacher\n", "    - <<: *engine\n      model_path: /path/to/teacher\n"),
        /:124:5 error TC7101: unknown key explorer\.rollout_model\.tensor_paralel_size: /, /hint: Did you mean 'tensor_parallel_size'\?/],
      ["bomb.yaml", `${f2b}${laughs.join("\n")}\n`, /:\d+:\d+ error TC7101: the YAML's aliases expand too far: with the alias \*l3 here they add more than 100,000 values/, /hint: Write the values out/],
      ["undefined.yaml", f2b.replace("  repeat_times: 1\n", "  repeat_times: *times\n"), /:12:17 error TC7101: the alias \*times names no anchor &times before it: PyYAML/, /hint: Anchor the value it repeats before it/],
    ];
    expectRefused(dir, cases, (stderr, name) => expect(stderr, name).toMatch(/\n1 error\(s\)\n$/));
    const section = join(dir, "section.yaml");
    writeFileSync(section, `x_algorithm: &algo\n  algorithm_type: on_policy_distill\n  kl_coef: 1.0\n${f2b.replace(/algorithm:\n(?: {2}.*\n|\n)+/, "algorithm: *algo\n")}`);
    const r = tcod("import", "trinity", section);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${section}:3:3 error TC7101: unknown key algorithm.kl_coef: Trinity-RFT's algorithm section has no such key, and Trinity refuses the config (the key is written under the anchor &algo; the alias *algo at line 9, column 12 brings it here) (at algorithm.kl_coef)`);
  });

  it("a value tcod refuses is TC7101 at its YAML key, exit 1 (was: internal error, exit 2)", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-cli-trinity-"));
    const base = readFileSync("test/fixtures/trinity/shapes/alfworld-b2f/config.yaml", "utf8");
    const lines = base.split("\n");
    /** `base` with line `n` (1-based) changed by `edit`. */
    const withLine = (n: number, edit: (l: string) => string) => lines.map((l, i) => (i === n - 1 ? edit(l) : l)).join("\n");
    const lineOf = (needle: string, from = 0) => lines.findIndex((l, i) => i >= from && l.includes(needle)) + 1;
    const evalTemp = lineOf("temperature: 0.4");
    const cases: [string, string, number, string][] = [
      ["lr: 0", base.replace("lr: 1e-6", "lr: 0"), lineOf("lr: 1e-6"), "algorithm.optimizer.lr"],
      ["lr: 1e308", base.replace("lr: 1e-6", "lr: 1e308"), lineOf("lr: 1e-6"), "algorithm.optimizer.lr"],
      ["grad_clip: 0", base.replace("grad_clip: 1.0", "grad_clip: 0"), lineOf("grad_clip: 1.0"), "trainer.grad_clip"],
      ["grad_clip: -1", base.replace("grad_clip: 1.0", "grad_clip: -1"), lineOf("grad_clip: 1.0"), "trainer.grad_clip"],
      ["eval temperature: 1e10", withLine(evalTemp, (l) => l.replace("0.4", "1e10")), evalTemp, "buffer.explorer_input.eval_tasksets[0].rollout_args.temperature"],
      ["max_env_steps: 2^53 − 1", base.replace("max_env_steps: 30", "max_env_steps: 9007199254740991"), lineOf("max_env_steps: 30"), "buffer.explorer_input.taskset.workflow_args.max_env_steps"],
      ["taskset path: ''", base.replace("path: /path/to/alfworld_data/train_expert.jsonl", "path: ''"), lineOf("train_expert.jsonl"), "buffer.explorer_input.taskset.path"],
    ];
    for (const [name, text, line, path] of cases) {
      const f = join(dir, "c.yaml");
      writeFileSync(f, text);
      const r = tcod("import", "trinity", f);
      expect(r.status, `${name}: ${r.stderr}`).toBe(1);
      noStack(r.stderr);
      expect(r.stderr, name).not.toContain("internal error");
      expect(r.stderr, name).toMatch(new RegExp(`c\\.yaml:${line}:\\d+ error TC7101: .*\\(at ${path.replace(/[.[\]]/g, "\\$&")}\\)`));
    }
    // train_batch_size: 0 is Trinity's "batch_size × repeat_times", which the export writes: imported.
    writeFileSync(join(dir, "z.yaml"), base.replace("train_batch_size: 64", "train_batch_size: 0"));
    const z = tcod("import", "trinity", join(dir, "z.yaml"));
    expect(z.stderr).not.toContain("internal error");
    expect(z.status).toBe(0);
    expect(z.stdout).toMatch(/train_batch: +16 turns/);
  }, 60_000);

  it("--infra values Trinity-RFT would not take are TC7009 naming the key and its range or choices (were written to the YAML)", () => {
    const refused: [string, RegExp][] = [
      ["nodeNum=-1", /--infra nodeNum must be a whole number ≥ 0 \(0: Trinity detects it/],
      ["nodeNum=1.5", /--infra nodeNum must be a whole number ≥ 0/],
      ["gpuMemoryUtilization=5", /--infra gpuMemoryUtilization must be a number in \(0, 1\]; got 5/],
      ["maxTimeout=-5", /--infra maxTimeout must be a whole number ≥ 1; got -5/],
      ["rolloutEngines=-2", /--infra rolloutEngines must be a whole number ≥ 1; got -2/],
      ["syncMethod=bogus", /--infra syncMethod must be one of nccl, checkpoint, memory \(or online, offline\), in any case; got 'bogus'/],
      ["monitor=bogus", /--infra monitor must be one of tensorboard, wandb, mlflow, swanlab .*; got 'bogus'/],
    ];
    for (const [arg, message] of refused) {
      const out = join(mkdtempSync(join(tmpdir(), "tcod-cli-infra-")), "o");
      const r = tcod("export", "trinity", "examples/alfworld/tcod-f2b.tcod", "-o", out, "--infra", arg);
      expect(r.status, arg).toBe(1);
      expect(r.stderr, arg).toMatch(/TC7009/);
      expect(r.stderr, arg).toMatch(message);
      expect(existsSync(out), arg).toBe(false);
    }
    // Trinity's own spellings are taken: 0 GPUs per node (detect), an alias, a case, a dotted monitor class.
    const ok = tcod("export", "trinity", "examples/alfworld/tcod-f2b.tcod", "-o", join(mkdtempSync(join(tmpdir(), "tcod-cli-infra-")), "o"),
      "--infra", "gpuPerNode=0", "--infra", "syncMethod=CHECKPOINT", "--infra", "syncStyle=fixed", "--infra", "monitor=my_pkg.monitors.MyMonitor");
    expect(ok.status, ok.stderr).toBe(0);
  }, 60_000);

  it("export errors name the construct; exit 1; unknown format and target are refused", () => {
    const r = tcod("export", "trinity", "examples/texthouse/tcod-f2b.tcod", "--out", mkdtempSync(join(tmpdir(), "tcod-cli-")));
    expect(r.status).toBe(1);
    noStack(r.stderr);
    expect(r.stderr).toContain("env: env kind 'texthouse' has no Trinity-RFT workflow");
    expect(tcod("export", "verl", "examples/texthouse/tcod-f2b.tcod").stderr).toContain("unknown format 'verl'");
    expect(tcod("export", "trinity", "examples/texthouse/tcod-f2b.tcod", "--target", "fork").stderr).toContain("unknown --target 'fork'");
    expect(tcod("export", "trinity", "examples/texthouse/tcod-f2b.tcod", "--infra", "gpus=3").stderr).toContain("unknown --infra key 'gpus'");
  });

  it("a hand-edited plan .json whose lr expression is out of range: TC7102 naming the field and the range, no config written", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-cli-trinity-lr-"));
    expect(tcod("compile", "examples/alfworld/opd.tcod", "--out", dir).status).toBe(0);
    const file = join(dir, "alfworld_opd.plan.json");
    const plan = JSON.parse(readFileSync(file, "utf8")) as { exprs: Record<string, unknown>; graph: { nodes: { kind: string; params: { optimizer: { lr: unknown } } }[] } };
    plan.exprs.hand_lr = { level: "step", unit: "", tree: { op: "const", value: 0 } };
    plan.graph.nodes.find((n) => n.kind === "Update")!.params.optimizer.lr = { expr: "hand_lr" };
    writeFileSync(file, JSON.stringify(plan));
    const out = join(dir, "out");
    const r = tcod("export", "trinity", file, "--out", out);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toContain("error TC7102: cannot export to Trinity-RFT: optimizer range: lr must be > 0, got 0 (it would be written to algorithm.optimizer.lr)");
    expect(r.stderr).toMatch(/hint: Choose lr > 0: the range tcod checks \(plan\/ranges\.ts\)/);
    noStack(r.stderr);
    expect(existsSync(join(out, "alfworld_opd.yaml"))).toBe(false);
  });
});

describe("tcod import trinity: many unknown keys, another program's config, a shared value", () => {
  const F2B = readFileSync("test/fixtures/trinity/official/tcod_f2b.yaml", "utf8");
  const write = (name: string, text: string) => { const f = join(mkdtempSync(join(tmpdir(), "tcod-cli-many-")), name); writeFileSync(f, text); return f; };
  const lastJson = (stdout: string) => JSON.parse(stdout.trim().split("\n").at(-1)!) as { command: string; ok: boolean; exitCode: number; error: { code: string; message: string; problems?: { message: string }[] } };

  it("past 10 unknown keys: the first 5 and one error counting the rest, exit 1; --json holds the same 6 problems (was: an error per key)", () => {
    const f = write("stray.yaml", `${F2B.replace("algorithm:\n", `algorithm:\n${Array.from({ length: 30 }, (_, i) => `  typo_${i + 1}: 1\n`).join("")}`)}`);
    const r = tcod("import", "trinity", f);
    expect(r.status).toBe(1);
    noStack(r.stderr);
    expect(r.stderr.match(/error TC7101/g)).toHaveLength(6);
    expect(r.stderr).toContain("error TC7101: 25 more unknown keys (30 in all), which Trinity-RFT refuses as it does those above: algorithm.typo_6, ");
    expect(r.stderr).toMatch(/\n6 error\(s\)\n/);
    const j = tcod("import", "trinity", f, "--json");
    expect(j.status).toBe(1);
    const res = lastJson(j.stdout);
    expect(res).toMatchObject({ command: "import", ok: false, exitCode: 1, error: { code: "TC7101" } });
    expect(res.error.problems).toHaveLength(6);
  });

  it("a verl config passed by mistake is one TC7101 saying it is not a Trinity-RFT config, exit 1, in --json too", () => {
    const f = write("verl.yaml", "data:\n  train_files: x.parquet\nactor_rollout_ref:\n  model:\n    path: m\ncritic:\n  optim: {lr: 1e-5}\nalgorithm:\n  gamma: 1.0\n  adv_estimator: gae\ntrainer:\n  total_epochs: 30\n  n_gpus_per_node: 8\n");
    const r = tcod("import", "trinity", f);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain(`${f}:1:1 error TC7101: not a Trinity-RFT config: only 2 of its 5 top-level keys are Trinity-RFT's (algorithm, trainer); the other 3 are not (data, actor_rollout_ref, critic), nor are 4 keys inside those sections`);
    expect(r.stderr).toMatch(/\n1 error\(s\)\n$/);
    const res = lastJson(tcod("import", "trinity", f, "--json").stdout);
    expect(res).toMatchObject({ ok: false, exitCode: 1, error: { code: "TC7101", message: expect.stringMatching(/^not a Trinity-RFT config: only 2 of its 5/) } });
    expect(res.error.problems).toBeUndefined();
  });

  it("a value tcod refuses that an alias gives two keys is one TC7101 where it is written, naming both keys and the alias (was: two errors at one position)", () => {
    const base = readFileSync("test/fixtures/trinity/shapes/alfworld-b2f/config.yaml", "utf8");
    const text = base.replace("      rollout_args:\n        temperature: 1.0\n", "      rollout_args:\n        temperature: &t 1e10\n").replace("        rollout_args:\n          temperature: 0.4\n", "        rollout_args:\n          temperature: *t\n");
    const f = write("shared.yaml", text);
    const r = tcod("import", "trinity", f);
    expect(r.status).toBe(1);
    noStack(r.stderr);
    const line = (needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;
    expect(r.stderr).toContain(`${f}:${line("&t 1e10")}:25 error TC7101: tcod cannot take this value: temperature must be in [0, 2], got 10000000000 (TC4001) (one value, written under the anchor &t, used in 2 places: buffer.explorer_input.taskset.rollout_args.temperature (written there) and buffer.explorer_input.eval_tasksets[0].rollout_args.temperature (brought by the alias *t at line ${line("temperature: *t")}, column 24)) (at buffer.explorer_input.taskset.rollout_args.temperature)`);
    expect(r.stderr).toMatch(/\n1 error\(s\)\n$/);
  });
});
