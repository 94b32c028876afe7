/**
 * `tcod import trinity`: the text it writes, and bad input reported with the YAML path and line.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { importTrinity, TrinityImportError, resolvedConfig } from "../../targets/trinity/import.js";
import { pythonStr, readPlain } from "../../targets/trinity/yaml-scalars.js";
import { TRINITY_PY, itWithTrinity } from "./real.js";

const F2B = readFileSync("test/fixtures/trinity/official/tcod_f2b.yaml", "utf8");

function issues(text: string) {
  try { importTrinity(text, "x.yaml"); } catch (e) { if (e instanceof TrinityImportError) return e.issues; throw e; }
  throw new Error("expected a TrinityImportError");
}
/** The 1-based line of the first line of `text` containing `needle`. */
const lineOf = (text: string, needle: string) => text.split("\n").findIndex((l) => l.includes(needle)) + 1;

describe("import output", () => {
  it("writes the idiomatic stdlib calls for the official f2b config", () => {
    const { source, curriculum } = importTrinity(F2B, "tcod_f2b.yaml");
    expect(curriculum).toBe("alfworld_tcod_f2b");
    expect(source).toContain(`import { f2b } from "std/tcod"`);
    expect(source).toMatch(/horizon: +f2b\(every: 6 steps, max: 30 turns\)/);
    expect(source).toMatch(/loss: +opd\(coef: 1\.0, aggregate: "seq_mean_token_mean"\)/);
    expect(source).toMatch(/optimizer: +adam\(lr: 1e-6, grad_clip: 1\.0\)/);
    expect(source).toMatch(/batch: +16 tasks × 1 rollout/);
    expect(source).toMatch(/train_batch: +64 turns/);
    expect(source).toMatch(/staleness: +2 steps/);
    expect(source).toContain(`evaluate(every: 5 steps, env: alfworld(split: "valid_seen", task_file: "/path/to/alfworld_data/test.jsonl"), tasks: 10 tasks, temperature: 0.4, name: "alfworld_eval_seen")`);
  });
  it("resolves ${key.path} interpolation and ${oc.env:VAR,default}", () => {
    const text = F2B.replace("  total_steps: 250\n  batch_size: 16", "  total_steps: ${trainer.total_steps}\n  batch_size: ${oc.env:BATCH,12}");
    const { source, notes } = importTrinity(text, "x.yaml");
    expect(source).toMatch(/steps: +250\n/);
    expect(source).toMatch(/batch: +12 tasks/);
    expect(notes.filter((n) => !n.includes("selector_type"))).toEqual(["buffer.batch_size: ${oc.env:BATCH,12} → its default '12' (tcod does not read the environment)"]);
    // OmegaConf's oc.env gives its default as a string; Trinity's int field converts it (the import reads 12).
    expect((resolvedConfig(text) as any).buffer.batch_size).toBe("12");
  });
});

describe("bad input names the YAML path and line", () => {
  it("invalid YAML", () => {
    const [i] = issues("algorithm:\n  lr: [1, 2\nmodel: {}\n");
    expect(i!.message).toMatch(/not valid YAML/);
    expect(i!.line).toBeGreaterThanOrEqual(2);
  });
  it("a YAML that is not a Trinity config", () => {
    expect(issues("- a\n- b\n")[0]!.message).toMatch(/not a Trinity-RFT config: the document is not a mapping/);
    expect(issues("name: x\nversion: 3\n")[0]!.message).toMatch(/none of the sections algorithm, model, buffer, explorer, trainer/);
  });
  it("an unknown workflow type", () => {
    const text = F2B.replace("'TCOD_f2b_alfworld_workflow'", "'TCOD_f2b_minecraft_workflow'");
    const [i] = issues(text);
    expect(i).toMatchObject({ path: "buffer.explorer_input.default_workflow_type", line: lineOf(text, "default_workflow_type") });
    expect(i!.message).toBe("unknown workflow type 'TCOD_f2b_minecraft_workflow'");
    expect(i!.hint).toMatch(/OPD_<env>_workflow/);
  });
  it("a config of a generated plugin (an export's tcod_<plan>_workflow) says so, without a second error from a guessed env", () => {
    // Was: "unknown workflow type", "has no tcod equivalent", and prompt_key 'task_desc' "differs from
    // alfworld's 'game_file'": the env of an unknown workflow was taken to be alfworld.
    const text = F2B.replace("'TCOD_f2b_alfworld_workflow'", "'tcod_scienceworld_paced_f2b_workflow'")
      .replace("advantage_fn: multi_turn_opd", "advantage_fn: tcod_scienceworld_paced_f2b_advantage")
      .replaceAll("prompt_key: 'game_file'", "prompt_key: 'task_desc'");
    const is = issues(text);
    expect(is.map((i) => [i.path, i.line])).toEqual([
      ["algorithm.advantage_fn", lineOf(text, "advantage_fn:")],
      ["buffer.explorer_input.default_workflow_type", lineOf(text, "default_workflow_type")],
    ]);
    expect(is[0]!.message).toBe("advantage_fn 'tcod_scienceworld_paced_f2b_advantage' is the plugin advantage `tcod export trinity` generates; its loss is in the plugin's spec.json, which tcod does not import");
    expect(is[1]!.message).toBe("workflow type 'tcod_scienceworld_paced_f2b_workflow' is the plugin workflow `tcod export trinity` generates; its curriculum is in the plugin's spec.json, which tcod does not import");
    for (const i of is) expect(i.hint).toMatch(/^Use the \.tcod file \(or compiled plan \.json\) this config was exported from/);
  });
  it("missing required keys point at the nearest parent", () => {
    const text = F2B.replace("  model_path: Qwen/Qwen2.5-1.5B-Instruct\n", "");
    const [i] = issues(text);
    expect(i).toMatchObject({ path: "model.model_path", line: lineOf(text, "max_prompt_tokens") });
    expect(i!.message).toMatch(/missing required key model\.model_path \(the student model\)/);
    const noTeacher = F2B.replace(/  auxiliary_models:\n[\s\S]*?max_response_tokens: 512\n/, "");
    expect(issues(noTeacher).map((x) => x.path)).toContain("explorer.auxiliary_models[0].model_path");
  });
  it("wrong types and values tcod cannot express, all at once, each at its line", () => {
    const text = F2B
      .replace("  batch_size: 16", "  batch_size: sixteen")
      .replace("checkpoint_strategy: linear\n", "checkpoint_strategy: linear_decay\n")
      .replace('loss_agg_mode: "seq-mean-token-mean"', 'loss_agg_mode: "seq-mean-token-sum"')
      .replace("  sync_interval: 1", "  sync_interval: 2");
    const got = issues(text).map((i) => [i.path, i.line]);
    expect(got).toEqual([
      ["algorithm.loss_agg_mode", lineOf(text, "loss_agg_mode")],
      ["buffer.explorer_input.taskset.workflow_args.checkpoint_strategy", lineOf(text, "linear_decay")],
      ["buffer.batch_size", lineOf(text, "batch_size: sixteen")],
      ["synchronizer.sync_interval", lineOf(text, "sync_interval: 2")],
    ]);
  });
  it("not an OPD algorithm; unknown advantage; env interpolation without default", () => {
    expect(issues(F2B.replace("algorithm_type: on_policy_distill", "algorithm_type: grpo"))[0]!.message).toMatch(/algorithm_type 'grpo' is not on-policy distillation/);
    expect(issues(F2B.replace("advantage_fn: multi_turn_opd", "advantage_fn: grpo"))[0]!.message).toMatch(/advantage_fn 'grpo' has no tcod equivalent/);
    const [e] = issues(F2B.replace("model_path: Qwen/Qwen2.5-1.5B-Instruct", "model_path: ${oc.env:STUDENT}"));
    expect(e).toMatchObject({ path: "model.model_path" });
    expect(e!.message).toMatch(/reads the environment variable STUDENT and has no default/);
  });
  it("workflow_args.total_steps that differs from the run is noted (TCOD's pacing ignores it)", () => {
    const { notes } = importTrinity(F2B.replace("        total_steps: 250\n", "        total_steps: 200\n"), "x.yaml");
    expect(notes.filter((n) => !n.includes("selector_type"))).toEqual(["buffer.explorer_input.taskset.workflow_args.total_steps: 200 differs from the run's 250 steps; TCOD's pacing does not read it, and export writes 250"]);
  });
  it("unknown workflow_args and multi-stage configs are refused, not dropped", () => {
    expect(issues(F2B.replace("        checkpoint_steps: 6\n", "        checkpoint_steps: 6\n        naive: true\n"))[0]!.path).toBe("buffer.explorer_input.taskset.workflow_args.naive");
    expect(issues(F2B + "stages:\n  - stage_name: warmup\n")[0]!.message).toMatch(/multi-stage/);
  });
  it("unknown top-level and algorithm keys, which Trinity itself refuses, are TC7101 at the key (were: dropped unsaid)", () => {
    const text = F2B.replace("  repeat_times: 1\n", "  repeat_times: 1\n  bogus_key: 3\n") + "bogus_top: x\n";
    const is = issues(text);
    expect(is.map((i) => [i.path, i.line, i.column])).toEqual([["bogus_top", lineOf(text, "bogus_top:"), 1], ["algorithm.bogus_key", lineOf(text, "bogus_key:"), 3]]);
    expect(is[0]!.message).toBe("unknown key bogus_top: Trinity-RFT's config (top level) has no such key, and Trinity refuses the config");
    expect(is[1]!.message).toBe("unknown key algorithm.bogus_key: Trinity-RFT's algorithm section has no such key, and Trinity refuses the config");
    expect(is[1]!.hint).toMatch(/^Remove it, or correct its name; algorithm section takes algorithm_type, repeat_times, /);
    const e = (() => { try { importTrinity(text, "x.yaml"); } catch (err) { return err as TrinityImportError; } })()!;
    expect(e.code).toBe("TC7101");
    expect(e.problems()[0]!.where).toEqual({ file: "x.yaml", line: lineOf(text, "bogus_top:"), column: 1, path: "bogus_top" });
    // Keys Trinity knows but tcod does not map (cluster, monitor, project, kl_loss_fn: none…) still import.
    expect(() => importTrinity(F2B.replace("  repeat_times: 1\n", "  repeat_times: 1\n  kl_loss_fn: none\n") + "group: g\nlog:\n  level: INFO\n", "x.yaml")).not.toThrow();
  });
  it("add_strategy, add_strategy_args and use_token_level_loss, which no Trinity-RFT release from 0.4.1 to 0.6.0 has in AlgorithmConfig, are unknown keys (were: accepted)", () => {
    const text = F2B.replace("  repeat_times: 1\n", "  repeat_times: 1\n  add_strategy: step_wise_grpo\n  add_strategy_args: {}\n  use_token_level_loss: true\n");
    const is = issues(text);
    expect(is.map((i) => [i.path, i.line, i.column])).toEqual([
      ["algorithm.add_strategy", lineOf(text, "add_strategy:"), 3],
      ["algorithm.add_strategy_args", lineOf(text, "add_strategy_args:"), 3],
      ["algorithm.use_token_level_loss", lineOf(text, "use_token_level_loss:"), 3],
    ]);
    expect(is[0]!.message).toBe("unknown key algorithm.add_strategy: Trinity-RFT's algorithm section has no such key, and Trinity refuses the config");
    // The hint lists what AlgorithmConfig has, these three not among them.
    expect(is[0]!.hint).toBe("Remove it, or correct its name; algorithm section takes algorithm_type, repeat_times, optimizer, sample_strategy, sample_strategy_args, advantage_fn, advantage_fn_args, kl_penalty_fn, kl_penalty_fn_args, policy_loss_fn, policy_loss_fn_args, kl_loss_fn, kl_loss_fn_args, entropy_loss_fn, entropy_loss_fn_args, loss_agg_mode, enable_router_replay, bypass_old_logprobs, rollout_correction.");
  });
});

describe("keys inside buffer, explorer and trainer; several documents; UTF-16", () => {
  it("a misspelt key in buffer, explorer, trainer or a mapping in them is TC7101 at the key, with the key it is closest to (were: dropped unsaid)", () => {
    const text = F2B
      .replace("  batch_size: 16", "  batch_sise: 16")
      .replace("  grad_clip: 1.0", "  grad_clp: 1.0")
      .replace("  eval_interval: 5", "  eval_intervall: 5")
      .replace("    default_workflow_type:", "    default_workflow_typ: x\n    default_workflow_type:")
      .replace("      - name: alfworld_eval_seen\n", "      - name: alfworld_eval_seen\n        total_step: 10\n")
      .replace("  rollout_model:\n", "  rollout_model:\n    tensor_paralel_size: 1\n");
    const is = issues(text);
    expect(is.map((i) => [i.path, i.line, i.column])).toEqual([
      ["buffer.batch_sise", lineOf(text, "batch_sise:"), 3],
      ["buffer.explorer_input.default_workflow_typ", lineOf(text, "default_workflow_typ:"), 5],
      ["buffer.explorer_input.eval_tasksets[0].total_step", lineOf(text, "total_step:"), 9],
      ["explorer.eval_intervall", lineOf(text, "eval_intervall:"), 3],
      ["explorer.rollout_model.tensor_paralel_size", lineOf(text, "tensor_paralel_size:"), 5],
      ["trainer.grad_clp", lineOf(text, "grad_clp:"), 3],
    ]);
    expect(is[0]!.message).toBe("unknown key buffer.batch_sise: Trinity-RFT's buffer section has no such key, and Trinity refuses the config");
    expect(is[0]!.hint).toMatch(/^Did you mean 'batch_size'\? Remove it, or correct its name; buffer section takes batch_size, train_batch_size, /);
    expect(is.map((i) => /^Did you mean '(\w+)'/.exec(i.hint)?.[1])).toEqual(["batch_size", "default_workflow_type", "total_steps", "eval_interval", "tensor_parallel_size", "grad_clip"]);
    // The inference-model hint names the dataclass, not all its ~60 fields.
    expect(is[4]!.hint).toMatch(/takes the fields of InferenceModelConfig in Trinity-RFT's trinity\/common\/config\.py \(model_path, .* and \d+ more\)\.$/);
    const e = (() => { try { importTrinity(text, "x.yaml"); } catch (err) { return err as TrinityImportError; } })()!;
    expect(e.code).toBe("TC7101");
    // A key far from every name has no guess; the rollout_args, format and selector of a taskset are checked too.
    const [k] = issues(F2B.replace("    taskset:\n", "    taskset:\n      zzz: 1\n"));
    expect(k).toMatchObject({ path: "buffer.explorer_input.taskset.zzz", line: lineOf(F2B, "    taskset:") + 1 });
    expect(k!.hint).toMatch(/^Remove it, or correct its name; taskset section takes name, /);
    expect(issues(F2B.replace(/( +)temperature: 1\.0\n/, "$1temperature: 1.0\n$1temprature: 1.0\n"))[0]!.path).toMatch(/\.rollout_args\.temprature$/);
    expect(issues(F2B.replace(/( +)prompt_key: 'game_file'\n/, "$1prompt_key: 'game_file'\n$1promt_key: x\n"))[0]!.path).toMatch(/\.format\.promt_key$/);
    expect(issues(F2B.replace(/( +)selector_type: random\n/, "$1selector_type: random\n$1sed: 1\n"))[0]!.path).toMatch(/eval_tasksets\[0\]\.task_selector\.sed$/);
  });
  it("keys Trinity-RFT's dataclasses have, of the fork's and of 0.6.0, still import", () => {
    const text = F2B
      .replace("  batch_size: 16", "  batch_size: 16\n  total_epochs: 1\n  pad_token_id: 0")
      .replace("  grad_clip: 1.0", "  grad_clip: 1.0\n  trainer_strategy: fsdp2\n  save_hf_checkpoint: last\n  megatron: { tensor_model_parallel_size: 1 }")
      .replace("  eval_interval: 5", "  eval_interval: 5\n  max_retry_times: 2\n  over_rollout: { ratio: 0.0 }")
      .replace("  rollout_model:\n", "  rollout_model:\n    max_model_len: 4096\n")
      .replace("    default_workflow_type:", "    default_eval_workflow_type: x\n    default_workflow_type:")
      .replace("      - name: alfworld_eval_seen\n", "      - name: alfworld_eval_seen\n        repeat_times: 1\n        data_selector: { selector_type: sequential }\n")
      .replace("  repeat_times: 1\n", "  repeat_times: 1\n  bypass_old_logprobs: true\n")
      + "ignore_validator_suggestions: true\n";
    expect(() => importTrinity(text, "x.yaml")).not.toThrow();
  });
  it("a file of several YAML documents is one TC7101 at the second (was: the YAML library's own wording)", () => {
    const text = F2B + "---\nname: other\n---\nname: third\n";
    const is = issues(text);
    expect(is).toEqual([{
      path: "$", line: lineOf(text, "---"), column: 1,
      message: "a second YAML document starts here (after `---`): Trinity-RFT reads a config file as one document (OmegaConf.load), and refuses a file of several",
      hint: "Keep the config's one document: remove this `---` and what follows it, or put each document in a file of its own.",
    }]);
    // A `---` that opens the one document is fine.
    expect(() => importTrinity("---\n" + F2B, "x.yaml")).not.toThrow();
  });
  it("a UTF-16 or UTF-32 file (as the CLI reads it, decoded as UTF-8) is said to be one, at 1:1 (was: 'not a mapping')", () => {
    const utf16le = Buffer.from("\uFEFF" + F2B, "utf16le");
    const utf16be = Buffer.from(utf16le).swap16();
    const utf32le = Buffer.alloc(4 * (F2B.length + 1));
    ["\uFEFF", ...F2B].forEach((c, i) => utf32le.writeUInt32LE(c.codePointAt(0)!, 4 * i));
    const cases: [Buffer, string][] = [
      [utf16le, "UTF-16 (little-endian, with a byte-order mark)"], [utf16be, "UTF-16 (big-endian, with a byte-order mark)"],
      [utf16le.subarray(2), "UTF-16 (little-endian)"], [utf32le, "UTF-32 (little-endian, with a byte-order mark)"],
    ];
    for (const [bytes, encoding] of cases) {
      const is = issues(bytes.toString("utf8"));
      expect(is.map((i) => [i.path, i.line, i.column, i.message])).toEqual([["$", 1, 1, `the file is encoded as ${encoding}; Trinity-RFT (OmegaConf.load) and tcod read a config as UTF-8`]]);
      expect(is[0]!.hint).toMatch(/^Save it as UTF-8/);
    }
    // A UTF-8 byte-order mark is fine.
    expect(() => importTrinity("\uFEFF" + F2B, "x.yaml")).not.toThrow();
  });
  it("a UTF-16 file whose first characters are not ASCII, and UTF-16 appended to a UTF-8 config (PowerShell's `>>`), are said to be so, once (were: a NUL at its first, or a YAML error)", () => {
    // 学 is 66 5B in UTF-16LE, read as "f[": no NUL at the start.
    const cjk = issues(Buffer.from("学生: 1\n" + F2B, "utf16le").toString("utf8"));
    expect(cjk.map((i) => [i.line, i.column, i.message])).toEqual([[1, 1, "the file is encoded as UTF-16 (little-endian); Trinity-RFT (OmegaConf.load) and tcod read a config as UTF-8"]]);
    // The last lines, given again through `>>`, come out as UTF-16: reported where they start, as bytes or as text.
    const bytes = Buffer.concat([Buffer.from(F2B, "utf8"), Buffer.from("log:\n  level: INFO\n", "utf16le")]);
    for (const config of [bytes, bytes.toString("utf8")]) {
      const is = (() => { try { importTrinity(config, "x.yaml"); } catch (e) { return (e as TrinityImportError).issues; } throw new Error("accepted"); })();
      expect(is.map((i) => [i.path, i.line, i.column, i.message])).toEqual([["$", F2B.split("\n").length, 1, "the file is encoded as UTF-16 from here on (UTF-8 before it); Trinity-RFT (OmegaConf.load) and tcod read a config as UTF-8"]]);
      expect(is[0]!.hint).toMatch(/Windows PowerShell's `>>` appends UTF-16 to a UTF-8 file/);
    }
  });
});

describe("bytes that are not UTF-8; lone CR line endings", () => {
  const issuesOf = (config: Uint8Array | string) => {
    try { importTrinity(config, "x.yaml"); } catch (e) { if (e instanceof TrinityImportError) return e.issues; throw e; }
    throw new Error("expected a TrinityImportError");
  };
  it("a Latin-1 'é' (the byte 0xE9) in a comment or a value is TC7101 at its line and column, as Trinity's UTF-8 read fails (was: read as U+FFFD, accepted)", () => {
    const lines = F2B.split("\n");
    const comment = Buffer.concat([Buffer.from(lines.slice(0, 2).join("\n") + "\n# caf"), Buffer.from([0xe9]), Buffer.from("\n" + lines.slice(2).join("\n"))]);
    const is = issuesOf(comment);
    expect(is.map((i) => [i.path, i.line, i.column])).toEqual([["$", 3, 6]]);
    expect(is[0]!.message).toMatch(/^the file is not valid UTF-8: the byte 0xE9 here is not UTF-8.*UnicodeDecodeError/);
    expect(is[0]!.hint).toMatch(/^Save the file as UTF-8/);
    const value = Buffer.from(F2B.replace('name: "alfworld_tcod_f2b"', 'name: "alfworld_tcod_f2b_\u00e9"'), "latin1");
    expect(issuesOf(value).map((i) => [i.line, i.column])).toEqual([[2, 26]]);
  });
  it("a U+FFFD the file holds as UTF-8 (EF BF BD) is a character, not an error; one before the bad byte does not move where it is reported", () => {
    const genuine = Buffer.from("# \uFFFD \u00e9 \u{1F600}\n" + F2B, "utf8");
    expect(() => importTrinity(genuine, "x.yaml")).not.toThrow();
    const both = Buffer.concat([Buffer.from("# \uFFFD \u{1F600} "), Buffer.from([0xe9]), Buffer.from("\n" + F2B)]);
    // Columns count UTF-16 units, as the YAML parser's do: the emoji is two.
    expect(issuesOf(both).map((i) => [i.line, i.column])).toEqual([[1, 8]]);
  });
  it("a UTF-16 file given as bytes is still said to be UTF-16 (checked first), not 'not valid UTF-8'", () => {
    const is = issuesOf(Buffer.from("\uFEFF" + F2B, "utf16le"));
    expect(is.map((i) => i.message)).toEqual(["the file is encoded as UTF-16 (little-endian, with a byte-order mark); Trinity-RFT (OmegaConf.load) and tcod read a config as UTF-8"]);
  });
  it("lone CR line endings (old Mac) are line breaks, as PyYAML reads them: the same import, and errors at the right line (were: one key, line 1)", () => {
    const cr = F2B.replace(/\n/g, "\r");
    expect(importTrinity(cr, "x.yaml").source).toBe(importTrinity(F2B, "x.yaml").source);
    expect(importTrinity(Buffer.from(cr), "x.yaml").source).toBe(importTrinity(F2B, "x.yaml").source);
    const typo = F2B.replace("  batch_size: 16", "  batch_sise: 16");
    const at = issuesOf(typo.replace(/\n/g, "\r")).map((i) => [i.path, i.line, i.column]);
    expect(at).toEqual([["buffer.batch_sise", lineOf(typo, "batch_sise"), 3]]);
    expect(at).toEqual(issuesOf(typo).map((i) => [i.path, i.line, i.column]));
  });
});

describe("NEL, U+2028 and U+2029 are line breaks, as PyYAML reads them", () => {
  const issuesOf = (config: Uint8Array | string) => {
    try { importTrinity(config, "x.yaml"); } catch (e) { if (e instanceof TrinityImportError) return e.issues; throw e; }
    throw new Error("expected a TrinityImportError");
  };
  it("a typo'd key after a U+2028, U+2029 or NEL line break is reported at PyYAML's line (were: the line of the break, or one key)", () => {
    const typo = F2B.replace("  batch_size: 16", "  batch_sise: 16");
    const expected = issuesOf(typo).map((i) => [i.path, i.line, i.column]);
    expect(expected).toEqual([["buffer.batch_sise", lineOf(typo, "batch_sise"), 3]]);
    for (const sep of ["\u2028", "\u2029", "\u0085"]) {
      // The line ending before the typo'd key, and one earlier between keys, written as the separator.
      const lines = typo.split("\n");
      const k = lineOf(typo, "batch_sise") - 2;
      const text = lines.slice(0, k).join("\n") + "\n" + lines[k] + sep + lines.slice(k + 1).join("\n");
      expect(issuesOf(text).map((i) => [i.path, i.line, i.column]), JSON.stringify(sep)).toEqual(expected);
    }
    // Between keys only, it imports as the file with line feeds does.
    expect(importTrinity(F2B.replace("\n", "\u2028"), "x.yaml").source).toBe(importTrinity(F2B, "x.yaml").source);
  });
  it("a U+2028 inside a value (where PyYAML keeps it, and an LF would fold to a space) is refused at it; in a comment it is a line break", () => {
    const inValue = F2B.replace('  loss_agg_mode: "seq-mean-token-mean"', '  loss_agg_mode: "seq-mean-\u2028    token-mean"');
    const is = issuesOf(inValue);
    expect(is.map((i) => [i.path, i.line, i.column])).toEqual([["$", lineOf(F2B, "loss_agg_mode"), 28]]);
    expect(is[0]!.message).toMatch(/^U\+2028 \(LINE SEPARATOR\) inside a value: PyYAML/);
    expect(is[0]!.hint).toMatch(/escape/);
    expect(() => importTrinity(F2B.replace("# Student model", "# Student model\u2028"), "x.yaml")).not.toThrow();
  });
});

describe("keys of every other section and of the dataclasses nested in them; characters YAML does not allow", () => {
  it("a misspelt key in model, cluster, monitor, synchronizer, data_processor, service, log or a dataclass nested in a section is TC7101 at the key, with the key it is closest to (were: dropped unsaid)", () => {
    // Two configs, each with fewer than the 10 unknown keys past which the rest are counted in one error.
    const one = F2B
      .replace("  max_response_tokens: 512\n", "  max_response_tokens: 512\n  max_respose_tokens: 512\n  lora_configs:\n    - lora_rnk: 8\n  tinker:\n    enabel: false\n")
      .replace("  gpu_per_node: 8\n", "  gpu_per_node: 8\n  gpus_per_node: 8\n")
      .replace("      path: 'sqlite:///alfworld_tcod_f2b_buffer.db'\n", "      path: 'sqlite:///alfworld_tcod_f2b_buffer.db'\n      replay_buffer:\n        priority_fun: linear_decay\n    auxiliary_buffers:\n      sft:\n        capacty: 10\n")
      + "data_processor:\n  experience_pipeline:\n    operators:\n      - name: pass_through\n        arg: { x: 1 }\n";
    const two = F2B
      .replace("  max_timeout: 3600\n", "  max_timeout: 3600\n  over_rollout:\n    ratoi: 0.5\n  dynamic_timeout:\n    enabled: true\n")
      .replace("  ulysses_sequence_parallel_size: 2\n", "  ulysses_sequence_parallel_size: 2\n  megatron:\n    sequence_paralel: true\n")
      .replace("  monitor_type: wandb", "  monitor_type: wandb\n  monitor_typ: wandb")
      .replace("  sync_interval: 1\n", "  sync_interval: 1\n  sync_intervall: 1\n")
      + "service:\n  data_juicer:\n    server_ulr: http://localhost:5005\nlog:\n  levle: INFO\n";
    const is = [...issues(one), ...issues(two)];
    const where = (text: string, key: string, column: number) => [lineOf(text, `${key}:`), column];
    // Depth first, in the order of the dataclasses' fields (Config: algorithm, data_processor, model, cluster, buffer, explorer, trainer, monitor, synchronizer, service, log).
    expect(is.map((i) => [i.path, i.line, i.column])).toEqual([
      ["data_processor.experience_pipeline.operators[0].arg", ...where(one, "arg", 9)],
      ["model.max_respose_tokens", ...where(one, "max_respose_tokens", 3)],
      ["model.lora_configs[0].lora_rnk", ...where(one, "lora_rnk", 7)],
      ["model.tinker.enabel", ...where(one, "enabel", 5)],
      ["cluster.gpus_per_node", ...where(one, "gpus_per_node", 3)],
      ["buffer.trainer_input.experience_buffer.replay_buffer.priority_fun", ...where(one, "priority_fun", 9)],
      ["buffer.trainer_input.auxiliary_buffers.sft.capacty", ...where(one, "capacty", 9)],
      ["explorer.over_rollout.ratoi", ...where(two, "ratoi", 5)],
      ["explorer.dynamic_timeout.enabled", ...where(two, "enabled", 5)],
      ["trainer.megatron.sequence_paralel", ...where(two, "sequence_paralel", 5)],
      ["monitor.monitor_typ", ...where(two, "monitor_typ", 3)],
      ["synchronizer.sync_intervall", ...where(two, "sync_intervall", 3)],
      ["service.data_juicer.server_ulr", ...where(two, "server_ulr", 5)],
      ["log.levle", ...where(two, "levle", 3)],
    ]);
    expect(is.map((i) => /^Did you mean '(\w+)'/.exec(i.hint)?.[1])).toEqual([
      "args", "max_response_tokens", "lora_rank", "enable", "gpu_per_node", "priority_fn", "capacity", "ratio", "enable",
      "sequence_parallel", "monitor_type", "sync_interval", "server_url", "level",
    ]);
    expect(is[1]!.message).toBe("unknown key model.max_respose_tokens: Trinity-RFT's model section has no such key, and Trinity refuses the config");
    expect(is[1]!.hint).toMatch(/^Did you mean 'max_response_tokens'\? Remove it, or correct its name; model section takes model_path, trust_remote_code, critic_model_path, .*, external_model\.$/);
    expect(is[4]!.message).toBe("unknown key cluster.gpus_per_node: Trinity-RFT's cluster section has no such key, and Trinity refuses the config");
    expect(is[7]!.hint).toBe("Did you mean 'ratio'? Remove it, or correct its name; explorer.over_rollout section takes ratio, wait_after_min, return_partial_tasks.");
    const e = (() => { try { importTrinity(one, "x.yaml"); } catch (err) { return err as TrinityImportError; } })()!;
    expect(e.code).toBe("TC7101");
    // A dataclass reached through a list or a mapping of names in a refused section (stages) is checked too.
    const staged = issues(F2B + "stages:\n  - stage_name: warmup\n    explorer:\n      over_rollout: { ratoi: 0.5 }\n");
    expect(staged.map((i) => i.path)).toEqual(["stages[0].explorer.over_rollout.ratoi", "stages"]);
  });
  it("fields of these dataclasses in any release 0.4.1 to 0.6.0 import, and free-form mappings (monitor_args, args, trainer_config, *_args, env_vars…) take any key", () => {
    const text = F2B
      .replace("  max_response_tokens: 512\n", "  max_response_tokens: 512\n  trust_remote_code: false\n  enable_thinking: false\n  rope_scaling: { rope_type: yarn, factor: 4.0, anything: 1 }\n  tinker: { enable: false, base_url: http://x }\n  external_model: { enable: false, model_name: m }\n  lora_configs: [{ name: a, lora_rank: 8, is_dummy: true }]\n")
      .replace("  gpu_per_node: 8\n", "  gpu_per_node: 8\n  ray_address: auto\n  total_gpu_num: 8\n")
      .replace("      path: 'sqlite:///alfworld_tcod_f2b_buffer.db'\n", "      path: 'sqlite:///alfworld_tcod_f2b_buffer.db'\n      replay_buffer: { enable: false, priority_fn: linear_decay, priority_fn_args: { decay: 2.0, anything: { deep: 1 } } }\n    auxiliary_buffers:\n      sft: { name: sft, storage_type: file, path: /x.jsonl, format: { prompt_key: q } }\n")
      .replace("  max_timeout: 3600\n", "  max_timeout: 3600\n  over_rollout: { ratio: 0.0, wait_after_min: 30.0, return_partial_tasks: false }\n  dynamic_timeout: { enable: false, ratio: 3.0, warmup_min_steps: 1 }\n")
      .replace("    gpu_memory_utilization: 0.7\n", "    gpu_memory_utilization: 0.7\n    extra_engine_args: { anything: 1 }\n    lora_kwargs: { anything: 1 }\n    external_model_config: { enable: false }\n")
      .replace("  ulysses_sequence_parallel_size: 2\n", "  ulysses_sequence_parallel_size: 2\n  trainer_config: { actor_rollout_ref: { actor: { anything: 1 } } }\n  megatron: { sequence_parallel: true }\n")
      .replace("  monitor_type: wandb", "  monitor_type: wandb\n  monitor_args: { anything: 1, nested: { deep: true } }\n  detailed_stats: false")
      .replace("  sync_interval: 1\n", "  sync_interval: 1\n  sync_offset: 0\n  group_name: g\n")
      + "data_processor:\n  experience_pipeline:\n    operators:\n      - name: pass_through\n        args: { anything: 1 }\n    inputs:\n      raw: { name: raw, storage_type: queue }\n  task_pipeline:\n    num_process: 1\n    output: { name: out, path: /o.jsonl, format: { prompt_key: q } }\nservice:\n  data_juicer: { auto_start: false, port: 5005 }\nlog:\n  level: INFO\n  group_by_node: false\n";
    expect(() => importTrinity(text, "x.yaml")).not.toThrow();
  });
  it("a NUL or another control character anywhere in the file, a comment or a value the import does not read included, is TC7101 at its line and column, as PyYAML refuses it (was: accepted)", () => {
    const cases: [string, string, string][] = [
      ["a NUL in a value the import reads", F2B.replace("name: \"alfworld_tcod_f2b\"", "name: \"alfworld_tcod_f2b\u0000\""), "the control character U+0000 (NUL)"],
      ["a NUL in a comment", F2B.replace("# Student model", "# Student\u0000 model"), "the control character U+0000 (NUL)"],
      ["an ESC in a value the import does not read", F2B.replace("project: \"ALFWORLD_TCOD\"", "project: \"ALFWORLD\u001b[0m_TCOD\""), "the control character U+001B (ESC)"],
      ["a BEL in a plain scalar of the cluster", F2B.replace("  gpu_per_node: 8", "  gpu_per_node: 8\u0007"), "the control character U+0007 (BEL)"],
      ["a form feed on a line of its own", F2B.replace("\ncluster:", "\n\u000c\ncluster:"), "the control character U+000C (FF)"],
      ["a DEL", F2B.replace("  sync_timeout: 3600", "  sync_timeout: 3600\u007f"), "the control character U+007F (DEL)"],
      ["a C1 control character", F2B.replace("# Student model", "# Student\u0080 model"), "the C1 control character U+0080"],
    ];
    for (const [name, text, what] of cases) {
      const at = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u0084\u0086-\u009f]/.exec(text)!.index;
      const before = text.slice(0, at).split("\n");
      const is = issues(text);
      expect(is.map((i) => [i.path, i.line, i.column]), name).toEqual([["$", before.length, before.at(-1)!.length + 1]]);
      expect(is[0]!.message, name).toBe(`the file contains ${what}, which YAML does not allow in a file: Trinity-RFT's loader (OmegaConf.load, PyYAML) refuses the config ("unacceptable character")`);
      expect(is[0]!.hint, name).toMatch(/^Remove it.*YAML takes a control character only as an escape inside a double-quoted string, such as "\\x07"\.$/);
      const e = (() => { try { importTrinity(text, "x.yaml"); } catch (err) { return err as TrinityImportError; } })()!;
      expect(e.code).toBe("TC7101");
    }
    // One issue, at the first, saying how many more there are.
    const many = issues(F2B.replace("# Student model", "# Student\u0000\u0000 model").replace("  sync_timeout: 3600", "  sync_timeout: 3600\u0001"));
    expect(many).toHaveLength(1);
    expect(many[0]!.message).toMatch(/^the file contains the control character U\+0000 \(NUL\) \(and 2 more such characters after it\), /);
    expect(many[0]!.line).toBe(lineOf(F2B, "# Student model"));
    // TAB, CR (CRLF line ends), NEL, a UTF-8 byte-order mark, other Unicode and an escaped control character in a double-quoted string are fine (PyYAML takes them).
    for (const ok of [
      F2B.replace("  gpu_per_node: 8", "  gpu_per_node:\t8"), F2B.replaceAll("\n", "\r\n"), F2B.replace("# Student model", "# Student model\u0085"),
      "\uFEFF" + F2B, F2B.replace("# Student model", "# Student model 学生 🎓"), F2B.replace("project: \"ALFWORLD_TCOD\"", "project: \"ALFWORLD\\x07_TCOD\""),
    ]) expect(() => importTrinity(ok, "x.yaml")).not.toThrow();
    // resolvedConfig (the round-trip check's reader) refuses it too.
    expect(() => resolvedConfig(F2B.replace("# Student model", "# Student\u0000 model"))).toThrow(TrinityImportError);
  });
});

describe("values that are not numbers, nesting, and where the generated text came from", () => {
  it(".nan, .inf and 1e400 are not finite numbers (were: 'got null')", () => {
    for (const v of [".nan", ".inf", "-.inf", "1e400"]) {
      const is = issues(F2B.replace("lr: 1e-6", `lr: ${v}`));
      expect(is.map((i) => [i.path, i.line, i.message])).toEqual([["algorithm.optimizer.lr", lineOf(F2B, "lr: 1e-6"), `lr must be a finite number, got ${v}`]]);
    }
  });

  it("YAML nested too deeply is one coded issue, not a stack overflow message", () => {
    for (const text of [`a: ${"[".repeat(20000)}${"]".repeat(20000)}`, `a: ${"[".repeat(100)}${"]".repeat(100)}`]) {
      const is = issues(text);
      expect(is.length).toBe(1);
      expect(is[0]!.message).toMatch(/^the YAML is nested too deeply/);
      expect(is[0]!.message).not.toMatch(/call stack/);
    }
  });

  it("a cluster setting Trinity would not take is refused at its key (was: internal error in the self-check)", () => {
    const is = issues(F2B.replace(/sync_method: [^\n]*/, "sync_method: bogus"));
    expect(is.map((i) => [i.path, i.line])).toEqual([["synchronizer.sync_method", lineOf(F2B, "sync_method:")]]);
    expect(is[0]!.message).toContain("must be one of nccl, checkpoint, memory");
  });

  it("an empty taskset path is refused at its line", () => {
    const is = issues(F2B.replace(/path: \/path\/to\/alfworld_data\/train[^\n]*/, "path: ''"));
    expect(is.map((i) => i.path)).toEqual(["buffer.explorer_input.taskset.path"]);
  });

  it("knows the YAML key each piece of the generated text was written from", () => {
    const imp = importTrinity(F2B, "x.yaml");
    const at = (needle: string) => { const i = imp.source.indexOf(needle); return imp.origin(i, i + needle.length); };
    expect(at("lr: 1e-6")).toEqual({ path: "algorithm.optimizer.lr", line: lineOf(F2B, "lr: 1e-6"), column: expect.any(Number) });
    expect(at("grad_clip: 1.0")?.path).toBe("trainer.grad_clip");
    expect(at("temperature: 0.4")?.path).toBe("buffer.explorer_input.eval_tasksets[0].rollout_args.temperature");
    expect(at("16 tasks")?.path).toBe("buffer.batch_size");
    expect(at("import {")).toBeUndefined();
  });
});

describe("eval task selection (the fork's Explorer.eval)", () => {
  it("random imports as the first N with a note; sequential silently; another selector is refused; export writes sequential", () => {
    const withSel = (sel: string) => F2B.replace(/selector_type: random/, `selector_type: ${sel}`);
    expect(F2B).toMatch(/selector_type: random/);
    const random = importTrinity(F2B, "x.yaml");
    expect(random.notes.join("\n")).toMatch(/task_selector.selector_type: random draws 10 tasks afresh at each evaluation .*tcod evaluates the first 10 tasks/);
    expect(random.source).toMatch(/tasks: 10 tasks/);
    const seq = importTrinity(withSel("sequential"), "x.yaml");
    expect(seq.notes.join("\n")).not.toMatch(/selector_type/);
    expect(seq.source).toMatch(/tasks: 10 tasks/);
    expect(() => importTrinity(withSel("offline_easy2hard"), "x.yaml")).toThrow(/eval task_selector 'offline_easy2hard' is not imported/);
  });
});

describe("YAML aliases and merge keys, resolved as PyYAML resolves them", () => {
  // A second eval taskset that repeats the first but for its name and path, the official configs'
  // commented-out alfworld_eval_unseen, written with a merge key; and the same written out.
  const SEEN = "      - name: alfworld_eval_seen\n";
  const UNSEEN = "      - <<: *seen\n        name: alfworld_eval_unseen\n        path: /path/to/alfworld_data/test_unseen.jsonl\n";
  const merged = F2B.replace(SEEN, "      - &seen\n        name: alfworld_eval_seen\n").replace("    default_workflow_type:", `${UNSEEN}    default_workflow_type:`);
  const seenBlock = /( {6}- name: alfworld_eval_seen\n(?: {8}.*\n)+)/.exec(F2B)![1]!;
  const written = F2B.replace("    default_workflow_type:", `${seenBlock.replace("alfworld_eval_seen", "alfworld_eval_unseen").replace("test.jsonl", "test_unseen.jsonl")}    default_workflow_type:`);

  it("a merge key brings the keys of the mapping it names, the mapping's own keys winning: the import is that of the config written out (was: refused)", () => {
    const a = importTrinity(merged, "x.yaml"), b = importTrinity(written, "x.yaml");
    expect(a.source).toBe(b.source);
    expect(a.source).toContain(`name: "alfworld_eval_unseen"`);
    expect(a.source).toContain(`task_file: "/path/to/alfworld_data/test_unseen.jsonl"`);
    expect(resolvedConfig(merged)).toEqual(resolvedConfig(written));
    // A merged value is reported where it is written, under the anchor: total_steps of the merged
    // taskset, once, naming both places and the merge key (were: twice at that line, the merge unsaid).
    const bad = merged.replace("        total_steps: 10\n", "        total_steps: -1\n");
    const is = issues(bad);
    expect(is.map((i) => [i.path, i.line])).toEqual([["buffer.explorer_input.eval_tasksets[0].total_steps", lineOf(bad, "total_steps: -1")]]);
    expect(is[0]!.message).toBe(`eval total_steps must be ≥ 1, got -1 (one value, written under the anchor &seen, used in 2 places: buffer.explorer_input.eval_tasksets[0].total_steps (written there) and buffer.explorer_input.eval_tasksets[1].total_steps (brought by the merge key (\`<<\`) at line ${lineOf(bad, "<<: *seen")}, column 9))`);
  });

  it("a bad value an alias or merge key brings is reported where it is written, naming the alias or merge key (was: at the anchored text, unsaid)", () => {
    // The optimizer written once, anchored under a free-form key Trinity ignores, and aliased into the algorithm.
    const alias = F2B.replace("  optimizer:\n    lr: 1e-6\n", "  optimizer: *opt\n").replace("algorithm:\n", "x_defaults: &opt\n  lr: -1\nalgorithm:\n");
    const a = issues(alias).filter((i) => i.path !== "x_defaults");
    expect(a.map((i) => [i.path, i.line, i.column])).toEqual([["algorithm.optimizer.lr", lineOf(alias, "lr: -1"), 7]]);
    expect(a[0]!.message).toBe(`lr must be ≥ 0, got -1 (the value is written under the anchor &opt; the alias *opt at line ${lineOf(alias, "optimizer: *opt")}, column 14 brings it here)`);
    // A value that is itself an alias: the alias names it.
    const scalar = F2B.replace("  repeat_times: 1\n", "  repeat_times: *zero\n").replace("algorithm:\n", "x_zero: &zero 0\nalgorithm:\n");
    const z = issues(scalar).filter((i) => i.path !== "x_zero");
    expect(z.map((i) => [i.path, i.line, i.message])).toEqual([["algorithm.repeat_times", lineOf(scalar, "x_zero"), `repeat_times must be ≥ 1, got 0 (the value is written under the anchor &zero; the alias *zero at line ${lineOf(scalar, "repeat_times: *zero")}, column 17 brings it here)`]]);
  });

  it("one value that fails two keys with different messages is reported at each, each naming its alias", () => {
    const text = F2B.replace("        temperature: 0.4\n", "        temperature: *t\n").replace("      rollout_args:\n        temperature: 1.0\n", "      rollout_args:\n        temperature: &t -1\n");
    const is = issues(text);
    expect(is.map((i) => [i.path, i.line])).toEqual([
      ["buffer.explorer_input.taskset.rollout_args.temperature", lineOf(text, "temperature: &t -1")],
      ["buffer.explorer_input.eval_tasksets[0].rollout_args.temperature", lineOf(text, "temperature: &t -1")],
    ]);
    expect(is[0]!.message).toBe("temperature must be ≥ 0, got -1");
    expect(is[1]!.message).toBe(`eval temperature must be ≥ 0, got -1 (the value is written under the anchor &t; the alias *t at line ${lineOf(text, "temperature: *t")}, column 24 brings it here)`);
  });

  it("an unknown key in a mapping an alias or merge key brings into a section is TC7101 at the key where it is written, naming the alias (were: not checked)", () => {
    // The brief's case: a section written as an alias of a mapping anchored elsewhere.
    const section = `x_algorithm: &algo\n  algorithm_type: on_policy_distill\n  repeat_times: 1\n  kl_coef: 1.0\n${F2B.replace(/algorithm:\n(?: {2}.*\n|\n)+/, "algorithm: *algo\n")}`;
    const is = issues(section);
    expect(is.map((i) => [i.path, i.line, i.column])).toEqual([
      ["x_algorithm", 1, 1],
      ["algorithm.kl_coef", lineOf(section, "kl_coef: 1.0"), 3],
    ]);
    expect(is[1]!.message).toBe(`unknown key algorithm.kl_coef: Trinity-RFT's algorithm section has no such key, and Trinity refuses the config (the key is written under the anchor &algo; the alias *algo at line ${lineOf(section, "algorithm: *algo")}, column 12 brings it here)`);
    // A free-form mapping (workflow_args, not checked) aliased where a dataclass is (an eval's rollout_args).
    const wa = F2B.replace("      workflow_args:\n", "      workflow_args: &wa\n").replace("          temperature: 0.4\n          logprobs: 0\n", "          temperature: 0.4\n          logprobs: 0\n        workflow_args: *wa\n").replace("        rollout_args:\n          temperature: 0.4", "        rollout_args: *wa\n        x_rollout_args:\n          temperature: 0.4");
    const ws = issues(wa).filter((i) => i.path.includes("rollout_args."));
    expect(ws.map((i) => [i.path, i.line])).toEqual([
      ["buffer.explorer_input.eval_tasksets[0].rollout_args.max_env_steps", lineOf(wa, "max_env_steps: 30")],
      ["buffer.explorer_input.eval_tasksets[0].rollout_args.total_steps", lineOf(wa, "        total_steps: 250")],
      ["buffer.explorer_input.eval_tasksets[0].rollout_args.checkpoint_strategy", lineOf(wa, "checkpoint_strategy:")],
      ["buffer.explorer_input.eval_tasksets[0].rollout_args.checkpoint_steps", lineOf(wa, "checkpoint_steps:")],
    ]);
    expect(ws[0]!.message).toMatch(/\(the key is written under the anchor &wa; the alias \*wa at line \d+, column 23 brings it here\)$/);
    // A merge key that brings keys the mapping's dataclass lacks (workflow_args' into a taskset); a typo of the mapping's own.
    // (Both merged mappings set total_steps, 10 and 250: the mapping sets its own, or PyYAML releases would disagree on it.)
    const m = merged.replace("      workflow_args:\n", "      workflow_args: &wa\n").replace("        name: alfworld_eval_unseen\n", "        name: alfworld_eval_unseen\n        total_steps: 10\n        totl_steps: 5\n").replace("      - <<: *seen\n", "      - <<: [*seen, *wa]\n");
    const ms = issues(m);
    expect(ms.map((i) => [i.path, i.line])).toEqual([
      ["buffer.explorer_input.eval_tasksets[1].temperature", lineOf(m, "max_env_steps: 30") - 1],
      ["buffer.explorer_input.eval_tasksets[1].max_env_steps", lineOf(m, "max_env_steps: 30")],
      ["buffer.explorer_input.eval_tasksets[1].checkpoint_strategy", lineOf(m, "checkpoint_strategy:")],
      ["buffer.explorer_input.eval_tasksets[1].checkpoint_steps", lineOf(m, "checkpoint_steps:")],
      ["buffer.explorer_input.eval_tasksets[1].totl_steps", lineOf(m, "totl_steps")],
    ]);
    expect(ms[1]!.message).toBe(`unknown key buffer.explorer_input.eval_tasksets[1].max_env_steps: Trinity-RFT's eval taskset section has no such key, and Trinity refuses the config (the key is written under the anchor &wa; the merge key (\`<<\`) at line ${lineOf(m, "<<: [*seen, *wa]")}, column 9 brings it here)`);
    expect(ms[4]!.message).not.toMatch(/brings it here/);
    expect(ms[4]!.hint).toMatch(/^Did you mean 'total_steps'\?/);
  });

  it("a mapping anchored in one section and merged into another of the same dataclass has its typo reported once, where it is written", () => {
    // The teacher engine as the student's (rollout_model) but for its path and engine count.
    const text = F2B.replace("  rollout_model:\n", "  rollout_model: &engine\n    tensor_paralel_size: 2\n").replace("    - model_path: /path/to/teacher\n", "    - <<: *engine\n      model_path: /path/to/teacher\n");
    const is = issues(text);
    expect(is.map((i) => [i.path, i.line, i.column])).toEqual([["explorer.rollout_model.tensor_paralel_size", lineOf(text, "tensor_paralel_size"), 5]]);
    expect(is[0]!.hint).toMatch(/^Did you mean 'tensor_parallel_size'\?/);
    // Without the typo, it imports; the merged engine's seed is not the teacher's, which is its own.
    expect(() => importTrinity(text.replace("    tensor_paralel_size: 2\n", ""), "x.yaml")).not.toThrow();
  });

  it("aliases that expand too far (billion laughs), also through merge keys in a section, are one coded issue at the alias that passes the limit, found without expanding them (was: at the first alias, found by expanding)", () => {
    const laughs = ["lol0: &l0 [1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"];
    for (let i = 1; i <= 8; i++) laughs.push(`lol${i}: &l${i} [${Array(10).fill(`*l${i - 1}`).join(", ")}]`);
    const text = `${F2B}\n${laughs.join("\n")}\n`;
    const is = issues(text);
    // 10 × 11 + 10 × 111 + 10 × 1111 values by lol3, then 11111 a *l3: past 100,000 at the eighth of lol4.
    expect(is.map((i) => [i.path, i.line, i.column])).toEqual([["$", lineOf(text, "lol4:"), "lol4: &l4 [".length + 7 * "*l3, ".length + 1]]);
    expect(is[0]!.message).toBe("the YAML's aliases expand too far: with the alias *l3 here they add more than 100,000 values to the config (each alias repeats its anchor's whole content, and these nest into an exponential blow-up)");
    expect(is[0]!.hint).toMatch(/Write the values out/);
    expect(() => resolvedConfig(text, "x.yaml")).toThrow(TrinityImportError);
    // Mappings of aliases of mappings, brought into algorithm.advantage_fn_args by a merge key, 30 levels deep: 10^30 values.
    const maps = ["m0: &m0 {a: 1}"];
    for (let i = 1; i <= 30; i++) maps.push(`m${i}: &m${i} {${"abcdefghij".split("").map((k) => `${k}: *m${i - 1}`).join(", ")}}`);
    const viaMerge = `${maps.join("\n")}\n${F2B.replace("    kl_coef: 1.0\n", "    kl_coef: 1.0\n    <<: *m30\n")}`;
    const t0 = Date.now();
    const vm = issues(viaMerge);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(vm).toHaveLength(1);
    expect(vm[0]!.message).toMatch(/^the YAML's aliases expand too far: with the alias \*m\d+ here/);
    // Aliases within the limit are fine: 100 uses of one anchored scalar (the yaml package's own default limit, maxAliasCount, refuses the 101st).
    const many = `x_values: [&v 1.0${", *v".repeat(150)}]\n${F2B}`;
    expect(issues(many).map((i) => i.path)).toEqual(["x_values"]);
  });

  it("aliases that nest the config too deeply are one coded issue at the alias, before anything recurses into it", () => {
    const chain = [`c0: &c0 ${"[".repeat(40)}${"]".repeat(40)}`];
    for (let i = 1; i <= 3; i++) chain.push(`c${i}: &c${i} ${"[".repeat(40)}*c${i - 1}${"]".repeat(40)}`);
    const text = `${F2B}${chain.join("\n")}\n`;
    const is = issues(text);
    expect(is.map((i) => [i.path, i.line, i.column])).toEqual([["$", lineOf(text, "c1:"), "c1: &c1 ".length + 41]]);
    expect(is[0]!.message).toBe("the YAML is nested too deeply once the alias *c0 here is expanded (tcod reads collections up to 64 levels deep; a Trinity config has about six)");
  });

  it("what PyYAML refuses (an alias without its anchor, an anchor given twice, a merge of a value that is not a mapping) and a recursive alias are TC7101 at the alias or anchor (were: 'aliases expand too far', accepted, or a stack overflow)", () => {
    const cases: [string, string, string, RegExp][] = [
      ["undefined", F2B.replace("  repeat_times: 1\n", "  repeat_times: *times\n"), "*times", /^the alias \*times names no anchor &times before it: PyYAML, which Trinity-RFT reads the config with \(OmegaConf\.load\), refuses the file \("found undefined alias"\)$/],
      ["duplicate", F2B.replace("  repeat_times: 1\n", "  repeat_times: &n 1\n").replace("    max_staleness: 2\n", "    max_staleness: &n 2\n"), "repeat_times: &n 1", /^the anchor &n is defined a second time here: .*\("found duplicate anchor"\)$/],
      ["merge", F2B.replace("    kl_coef: 1.0\n", "    kl_coef: &k 1.0\n    <<: *k\n"), "<<: *k", /^a merge key \(`<<`\) takes a mapping, an alias of one, or a list of them: .*\("expected a mapping or list of mappings for merging"\)$/],
      ["recursive", F2B.replace("  advantage_fn_args:\n    kl_coef: 1.0\n", "  advantage_fn_args: &args\n    kl_coef: 1.0\n    again: *args\n"), "again: *args", /^the alias \*args stands inside the node anchored &args, which would contain itself: OmegaConf/],
    ];
    for (const [name, text, at, message] of cases) {
      const is = issues(text);
      expect(is.map((i) => [i.path, i.line]), name).toEqual([["$", lineOf(text, at)]]);
      expect(is[0]!.message, name).toMatch(message);
      expect(() => resolvedConfig(text, "x.yaml"), name).toThrow(TrinityImportError);
    }
    // A quoted '<<' is a key like any other (PyYAML: a string), and no such key exists.
    const quoted = F2B.replace("    lr: 1e-6\n", "    lr: 1e-6\n    '<<': {lr: 1}\n");
    expect(issues(quoted).map((i) => i.path)).toEqual(["algorithm.optimizer.<<"]);
    // Two merge keys in one mapping are not duplicate keys (OmegaConf's loader skips merge keys in that check); the later wins.
    const two = `${F2B.replace("  optimizer:\n    lr: 1e-6\n", "  optimizer:\n    <<: {lr: 2e-6}\n    <<: {lr: 3e-6, weight_decay: 0.0}\n")}`;
    expect(importTrinity(two, "x.yaml").source).toMatch(/adam\(lr: 3e-6, weight_decay: 0\.0, /);
  });

  itWithTrinity(["yaml"])("resolves aliases and merge keys as PyYAML's SafeLoader does (the config's data, key for key)", () => {
    // The mappings of the list share weight_decay, which the mapping itself sets (its own keys win in every PyYAML).
    const text = `${merged.replace("  optimizer:\n    lr: 1e-6\n", "  optimizer:\n    <<: [{lr: 2.0e-6, weight_decay: 0.1}, {weight_decay: 0.2, betas: [0.9, 0.99]}]\n    weight_decay: 0.0\n")}`;
    const py = spawnSync(TRINITY_PY, ["-c", "import json, sys, yaml; print(json.dumps(yaml.load(sys.stdin.read(), Loader=yaml.SafeLoader)))"], { input: text, encoding: "utf8" });
    expect(py.status, py.stderr).toBe(0);
    expect(resolvedConfig(text)).toEqual(JSON.parse(py.stdout));
    expect((resolvedConfig(text) as any).algorithm.optimizer).toEqual({ lr: 2e-6, weight_decay: 0.0, betas: [0.9, 0.99] });
  });

  it("a key two mappings of one merge list give different values is refused where PyYAML releases disagree on the winner (6.0.3: the earlier, 6.0.4: the later), unless the mapping sets it itself or the values agree", () => {
    const list = (extra: string) => F2B.replace("  optimizer:\n    lr: 1e-6\n", `  optimizer:\n    <<: [{lr: 2.0e-6}, {lr: 3.0e-6, weight_decay: 0.1}]\n${extra}`);
    const text = list("");
    const is = issues(text);
    expect(is.map((i) => [i.path, i.line, i.column])).toEqual([["$", lineOf(text, "<<: ["), 5]]);
    expect(is[0]!.message).toBe("two mappings of this merge list give `lr` different values, and which one Trinity-RFT reads depends on its PyYAML: releases up to 6.0.3 take the earlier mapping's (as the YAML merge spec says), 6.0.4 the later one's");
    expect(() => resolvedConfig(text, "x.yaml")).toThrow(TrinityImportError);
    // The mapping's own key settles it in every release; so do equal values.
    expect(importTrinity(list("    lr: 4.0e-6\n"), "x.yaml").source).toMatch(/adam\(lr: 4e-6, weight_decay: 0\.1, /);
    const same = F2B.replace("  optimizer:\n    lr: 1e-6\n", "  optimizer:\n    <<: [{lr: 2.0e-6}, {lr: 2.0e-6, weight_decay: 0.1}]\n");
    expect(importTrinity(same, "x.yaml").source).toMatch(/adam\(lr: 2e-6, weight_decay: 0\.1, /);
  });
});

describe("scalars read as Trinity-RFT reads them: YAML 1.1 (PyYAML) as OmegaConf.load extends it, then the dataclass field's conversion", () => {
  // Every form where YAML 1.2 (the yaml package's default) and OmegaConf.load's YAML 1.1 differ, and some where they agree.
  const SCALARS = [
    "2e-6", "1.0e6", "1e+21", "1.0E-6", "12e03", ".5", ".5e6", "+.5", "1.", "1_000", "3.14_15", "0b101", "0x1F", "0x_1F", "010", "017", "08", "07", "00", "0o17",
    "-010", "1:30", "-1:30", "1:30.5", "1:60", "yes", "No", "ON", "off", "y", "n", "True", "FALSE", "~", "Null", "", "2001-12-14", "0.000001", "-1e-6", "e5", "1_", "_1",
  ];
  const text = SCALARS.map((v, i) => `k${i}: ${v}`).join("\n") + "\n";
  // omegaconf's own loader where it is installed, else the same built from PyYAML (omegaconf 2.3's _utils.get_yaml_loader).
  const OMEGACONF_LOADER = [
    "import json, re, sys, yaml",
    "try:",
    "    from omegaconf._utils import get_yaml_loader",
    "    loader = get_yaml_loader()",
    "except ImportError:",
    "    class loader(yaml.SafeLoader): pass",
    "    loader.add_implicit_resolver('tag:yaml.org,2002:float', re.compile(r'''^(?:[-+]?[0-9]+(?:_[0-9]+)*\\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+)|\\.[0-9]+(?:_[0-9]+)*(?:[eE][-+][0-9]+)?|[-+]?[0-9]+(?:_[0-9]+)*(?::[0-5]?[0-9])+\\.[0-9_]*|[-+]?\\.(?:inf|Inf|INF)|\\.(?:nan|NaN|NAN))$'''), list('-+0123456789.'))",
    "    loader.yaml_implicit_resolvers = {k: [(t, r) for t, r in v if t != 'tag:yaml.org,2002:timestamp'] for k, v in loader.yaml_implicit_resolvers.items()}",
  ];

  it("numbers without a dot (2e-6), 1_000, 0b101 and 0x1F are numbers; yes/no/on/off booleans; dates and 0o17 strings (were: YAML 1.2's reading)", () => {
    const c = resolvedConfig(text) as Record<string, unknown>;
    const v = (s: string) => c[`k${SCALARS.indexOf(s)}`];
    expect([v("2e-6"), v("1_000"), v("0b101"), v("0x1F"), v("010"), v("1:30"), v("1:30.5")]).toEqual([2e-6, 1000, 5, 31, 8, 90, 90.5]);
    expect([v("yes"), v("No"), v("ON"), v("off"), v("y"), v("True")]).toEqual([true, false, true, false, "y", true]);
    expect([v("0o17"), v("2001-12-14"), v(".5e6"), v("+.5"), v("08"), v("_1")]).toEqual(["0o17", "2001-12-14", ".5e6", "+.5", "08", "_1"]);
    expect([v("1_"), v("~"), v("")]).toEqual([1, null, null]);
  });

  itWithTrinity(["yaml"])("every scalar is what OmegaConf.load's loader makes of it (PyYAML's SafeLoader with OmegaConf's float resolver, no timestamps)", () => {
    const script = [...OMEGACONF_LOADER, "print(json.dumps(yaml.load(sys.stdin.read(), Loader=loader)))"].join("\n");
    const py = spawnSync(TRINITY_PY, ["-c", script], { input: text, encoding: "utf8" });
    expect(py.status, py.stderr).toBe(0);
    expect(resolvedConfig(text)).toEqual(JSON.parse(py.stdout));
    // What PyYAML cannot construct is refused, as PyYAML refuses it.
    for (const bad of ["=", "0b_"]) {
      const p = spawnSync(TRINITY_PY, ["-c", script], { input: `k: ${bad}\n`, encoding: "utf8" });
      expect(p.status, bad).not.toBe(0);
      expect(() => resolvedConfig(`k: ${bad}\n`), bad).toThrow(TrinityImportError);
    }
  });

  it("lr: 2e-6, batch_size: 0b10000, total_steps: 1_000 and eval_on_startup: no import as Trinity reads them (were: lr imported, the others refused as strings)", () => {
    const text = F2B.replace("lr: 1e-6", "lr: 2e-6").replace("batch_size: 16", "batch_size: 0b10000").replace("  total_steps: 250\n", "  total_steps: 1_000\n").replace("  eval_interval: 5\n", "  eval_interval: 5\n  eval_on_startup: no\n");
    const { source } = importTrinity(text, "x.yaml");
    expect(source).toMatch(/optimizer: +adam\(lr: 2e-6, /);
    expect(source).toMatch(/batch: +16 tasks/);
    expect(source).toMatch(/steps: +1000\n/);
    expect(source).toContain("at_start: false");
    // A quoted number in a float or int field of a dataclass: OmegaConf converts it (float("2e-6"), int("16")).
    const quoted = importTrinity(F2B.replace("lr: 1e-6", `lr: "2e-6"`).replace("batch_size: 16", `batch_size: "16"`), "x.yaml").source;
    expect(quoted).toMatch(/adam\(lr: 2e-6, /);
    expect(quoted).toMatch(/batch: +16 tasks/);
  });

  it("eval_on_startup takes what OmegaConf's BooleanNode takes (0, 1, 'no', 'On'); a float, a word it does not know, or 010 are one error each", () => {
    const withStartup = (v: string) => F2B.replace("  eval_interval: 5\n", `  eval_interval: 5\n  eval_on_startup: ${v}\n`);
    for (const [v, atStart] of [["0", false], ["1", true], ["'no'", false], ["'On'", true], ["'0'", false]] as const) {
      expect(importTrinity(withStartup(v), "x.yaml").source.includes("at_start: false"), v).toBe(!atStart);
    }
    expect(issues(withStartup("1.0")).map((i) => i.message)).toEqual(["eval_on_startup must be true or false, got 1.0"]);
    expect(importTrinity(withStartup("0b10"), "x.yaml").source).not.toContain("at_start: false");
    // Where YAML 1.2 reads the text otherwise, the message says what YAML 1.1 made of it.
    expect(issues(F2B.replace("model_path: Qwen/Qwen2.5-1.5B-Instruct", "model_path: 0b10")).map((i) => i.message)).toEqual(["model_path: 0b10 is the number 2 to PyYAML (YAML 1.1), which Trinity-RFT reads the config with, and its string field holds str() of it: '2', not '0b10'"]);
    expect(issues(withStartup("maybe")).map((i) => i.message)).toEqual([`eval_on_startup must be true or false, got "maybe"`]);
    expect(issues(withStartup("010")).map((i) => i.message)).toEqual(["eval_on_startup: 010 is the octal number 8 to PyYAML (YAML 1.1), which Trinity-RFT reads the config with, but 10 to YAML 1.2; tcod does not guess which was meant"]);
  });

  it("010 (octal: 8 to Trinity, 10 to YAML 1.2) and 1:30 (base 60: 90 to Trinity, a string to YAML 1.2) are refused at the key, naming both readings (were: 10, and 'must be a number')", () => {
    const octal = F2B.replace("batch_size: 16", "batch_size: 010");
    const [o] = issues(octal);
    expect([o!.path, o!.line, o!.column]).toEqual(["buffer.batch_size", lineOf(octal, "batch_size: 010"), 15]);
    expect(o!.message).toBe("batch_size: 010 is the octal number 8 to PyYAML (YAML 1.1), which Trinity-RFT reads the config with, but 10 to YAML 1.2; tcod does not guess which was meant");
    expect(o!.hint).toBe("Write 8 (what Trinity-RFT reads now) or 10, without the leading zero.");
    const base60 = F2B.replace("    kl_coef: 1.0\n", "    kl_coef: 1:30\n");
    expect(issues(base60).map((i) => [i.path, i.message])).toEqual([["algorithm.advantage_fn_args.kl_coef", "kl_coef: 1:30 is the base-60 number 90 to PyYAML (YAML 1.1: each ':' multiplies what is before it by 60), which Trinity-RFT reads the config with, but a string to YAML 1.2; tcod does not guess which was meant"]]);
    // 07 and 0x10 mean the same to both: imported.
    expect(importTrinity(F2B.replace("  repeat_times: 1\n", "  repeat_times: 01\n"), "x.yaml").source).toMatch(/× 1 rollout/);
    // An env var: a boolean to PyYAML, which Ray refuses in a runtime_env (omegaconf-fidelity.test.ts).
    const infra = F2B.replace("  env_vars:\n", "  env_vars:\n    DEBUG: on\n");
    expect(issues(infra).map((i) => [i.path, i.message])).toEqual([["explorer.env_vars.DEBUG", "explorer.env_vars.DEBUG: on is the boolean true to PyYAML (YAML 1.1), which Trinity-RFT reads the config with, not a string: Trinity-RFT hands explorer.env_vars to Ray as its workflow runners' environment, and Ray refuses any value that is not a string (\"runtime_env['env_vars'] must be of type Dict[str, str]\")"]]);
  });

  it("yes/no/on/off where a string is wanted is refused: Trinity gets 'True' or 'False' (was: imported as the word, which the export wrote back unquoted)", () => {
    const text = F2B.replace(`name: "alfworld_tcod_f2b"`, "name: off");
    const is = issues(text);
    expect(is.map((i) => [i.path, i.line, i.column])).toEqual([["name", 2, 7]]);
    expect(is[0]!.message).toBe("name: off is the boolean false to PyYAML (YAML 1.1), which Trinity-RFT reads the config with, so Trinity gets 'False' here, not 'off'");
    expect(is[0]!.hint).toBe("Quote it ('off') to mean the word, or write 'False'.");
    // Quoted, it is the word.
    expect(importTrinity(F2B.replace(`name: "alfworld_tcod_f2b"`, "name: 'off'"), "x.yaml").curriculum).toBe("off");
  });

  it("a float in an integer field, and a quoted number in a free-form mapping (workflow_args, advantage_fn_args), are refused as Trinity would not take them (were: imported)", () => {
    const text = F2B.replace("batch_size: 16", "batch_size: 16.0").replace("max_env_steps: 30", `max_env_steps: "30"`).replace("    kl_coef: 1.0\n", "    kl_coef: '1.0'\n").replace("    max_staleness: 2\n", "    max_staleness: 2e0\n");
    const is = issues(text);
    expect(is.map((i) => [i.path, i.message])).toEqual([
      ["algorithm.advantage_fn_args.kl_coef", `kl_coef must be a number, got the string "1.0": algorithm.advantage_fn_args is a free-form mapping, whose values Trinity-RFT passes on as YAML reads them, so this one as a string`],
      ["algorithm.sample_strategy_args.max_staleness", "max_staleness must be an integer, got 2e0, which YAML reads as a float: Trinity-RFT passes it on as a float"],
      ["buffer.explorer_input.taskset.workflow_args.max_env_steps", `max_env_steps must be a number, got the string "30": buffer.explorer_input.taskset.workflow_args is a free-form mapping, whose values Trinity-RFT passes on as YAML reads them, so this one as a string`],
      ["buffer.batch_size", `batch_size must be an integer, got 16.0, which YAML reads as a float: Trinity-RFT's integer field refuses a float (OmegaConf: "could not be converted to Integer")`],
    ]);
  });

  // Explicitly tagged scalars: SafeLoader's constructors, which take text the implicit resolvers would not (`!!int " 3 "`).
  const TAGGED = [
    "!!float 1", "!!float '1_0.5'", "!!float '1:30'", "!!float ' 1.5 '", "!!float 1e5", "!!float .5", "!!float -2", "!!int \"3\"", "!!int 0x1F", "!!int '0o17'", "!!int ' 3 '",
    "!!int '--5'", "!!int 1_", "!!int '1:30'", "!!int 010", "!!str 5", "!!str yes", "!!str", "!!str 1.0", "!!bool yes", "!!bool 'OFF'", "!!bool True", "!!null foo", "!!null ''", "!!null",
    "!<tag:yaml.org,2002:int> '7'", "!!seq [1, !!float 2]", "!!map {x: !!int '4'}",
  ];
  const tagged = TAGGED.map((v, i) => `k${i}: ${v}`).join("\n") + "\n";

  it("an explicitly tagged scalar is what SafeLoader constructs: !!float 1 is 1.0, !!int \"3\" 3, !!str 5 '5', !!bool yes true (was: !!float 1 read as the string '1', refused)", () => {
    const c = resolvedConfig(tagged) as Record<string, unknown>;
    const v = (s: string) => c[`k${TAGGED.indexOf(s)}`];
    expect([v("!!float 1"), v("!!int \"3\""), v("!!str 5"), v("!!bool yes"), v("!!null foo"), v("!!int '0o17'"), v("!!int ' 3 '")]).toEqual([1, 3, "5", true, null, 15, 3]);
    // In the fields of a config: a float where a float is wanted, a string where a string is; an int field refuses !!float 16 as Trinity does.
    const text = F2B.replace("lr: 1e-6", "lr: !!float 1").replace("batch_size: 16", `batch_size: !!int "16"`).replace(`name: "alfworld_tcod_f2b"`, "name: !!str alfworld");
    const { source, curriculum } = importTrinity(text, "x.yaml");
    expect(source).toMatch(/adam\(lr: 1\.0, /);
    expect(source).toMatch(/batch: +16 tasks/);
    expect(curriculum).toBe("alfworld");
    expect(issues(F2B.replace("batch_size: 16", "batch_size: !!float 16")).map((i) => i.message)).toEqual([`batch_size must be an integer, got 16, which YAML reads as a float: Trinity-RFT's integer field refuses a float (OmegaConf: "could not be converted to Integer")`]);
    // !!bool yes where a string is wanted is the boolean, as a plain yes is; !!str yes is the word.
    expect(issues(F2B.replace(`name: "alfworld_tcod_f2b"`, "name: !!bool yes")).map((i) => i.message)).toEqual(["name: yes is the boolean true to PyYAML (YAML 1.1), which Trinity-RFT reads the config with, so Trinity gets 'True' here, not 'yes'"]);
    expect(importTrinity(F2B.replace(`name: "alfworld_tcod_f2b"`, "name: !!str yes"), "x.yaml").curriculum).toBe("yes");
  });

  itWithTrinity(["yaml"])("every explicitly tagged scalar is what PyYAML's SafeLoader makes of it; what it refuses is refused", () => {
    const py = (t: string) => spawnSync(TRINITY_PY, ["-c", "import json, sys, yaml; print(json.dumps(yaml.load(sys.stdin.read(), Loader=yaml.SafeLoader)))"], { input: t, encoding: "utf8" });
    const p = py(tagged);
    expect(p.status, p.stderr).toBe(0);
    expect(resolvedConfig(tagged)).toEqual(JSON.parse(p.stdout));
    for (const bad of ["!!bool y", "!!int 1.5", "!!int", "!!float ''", "!!float 0x10", "!!str [1]", "!!null {a: 1}", "!!map [1]", "!!seq {a: 1}", "!!value x", "!!merge x", "!!python/object:x {}", "!!python/str x", "!foo 1"]) {
      expect(py(`k: ${bad}\n`).status, bad).not.toBe(0);
      expect(() => resolvedConfig(`k: ${bad}\n`), bad).toThrow(TrinityImportError);
    }
  });

  it("a tag SafeLoader has no constructor for, or whose value OmegaConf refuses, is refused naming the tag (was: read as if untagged, with a warning)", () => {
    const one = (v: string) => issues(`k: ${v}\n`).map((i) => [i.line, i.column, i.message]);
    expect(one("!!python/object:os.system {}")).toEqual([[1, 30, `the tag !!python/object:os.system is not one PyYAML's SafeLoader constructs: Trinity-RFT (OmegaConf.load) refuses the file ("could not determine a constructor for the tag 'tag:yaml.org,2002:python/object:os.system'")`]]);
    expect(one("!foo 1")).toEqual([[1, 9, `the tag !foo is not one PyYAML's SafeLoader constructs: Trinity-RFT (OmegaConf.load) refuses the file ("could not determine a constructor for the tag '!foo'")`]]);
    expect(one("!!str [1]")[0]![2]).toBe(`the tag !!str stands on a sequence: PyYAML's SafeLoader, which Trinity-RFT reads the config with, refuses the file ("expected a scalar node, but found sequence")`);
    expect(one("!!timestamp 2001-12-14")[0]![2]).toBe(`the tag !!timestamp: SafeLoader makes a date of it, which OmegaConf (Trinity-RFT's config loader) refuses ("not a supported primitive type")`);
    expect(one("!!binary aGk=")[0]![2]).toBe("the tag !!binary: SafeLoader makes bytes of it, which no key of a Trinity config tcod imports takes");
    expect(one("!!int 1.5")[0]![2]).toMatch(/^not valid YAML: PyYAML cannot construct !!int "1.5" \(Python's int\(\) refuses "1.5"\): Trinity-RFT \(OmegaConf.load\) refuses the file/);
    // `! 1` is 1 to PyYAML (resolved as if untagged), the string "1" to YAML: refused; on a collection it changes nothing.
    expect(one("! 1")[0]![2]).toMatch(/^the non-specific tag `!` on a scalar: PyYAML/);
    expect(resolvedConfig("k: ! [1]\n")).toEqual({ k: [1] });
  });

  it("betas given as quoted numbers are the numbers, as Trinity's List[float] field converts them (float()); a boolean, null or a word is refused at the item (was: all refused)", () => {
    const withBetas = (b: string) => F2B.replace("    lr: 1e-6\n", `    lr: 1e-6\n    betas: ${b}\n`);
    expect(importTrinity(withBetas(`["0.9", "0.999"]`), "x.yaml").source).toMatch(/betas: \[0\.9, 0\.999\]/);
    expect(importTrinity(withBetas(`[" 0.9 ", "9_99e-3"]`), "x.yaml").source).toMatch(/betas: \[0\.9, 0\.999\]/);
    expect(importTrinity(withBetas("[0, 0.5]"), "x.yaml").source).toMatch(/betas: \[0\.0, 0\.5\]/);
    const bad = withBetas(`[true, "x"]`);
    expect(issues(bad).map((i) => [i.path, i.message])).toEqual([
      ["algorithm.optimizer.betas[0]", "betas[0] must be a number, got true"],
      ["algorithm.optimizer.betas[1]", `betas[1] must be a number, got "x": Trinity-RFT converts a string in this field with Python's float(), which refuses it`],
    ]);
    expect(issues(withBetas("[~, 0.9]")).map((i) => i.path)).toEqual(["algorithm.optimizer.betas[0]"]);
    expect(issues(withBetas("[0.9]")).map((i) => i.message)).toEqual(["betas must be a list of two finite numbers"]);
    expect(issues(withBetas(`"0.9"`)).map((i) => i.message)).toEqual(["betas must be a list of two finite numbers"]);
  });

  it("a number or boolean in a string field is the string Trinity holds, str() of it, where that is the text as written (model_path: 123 is '123'); refused where it is not (1e-6 is '1e-06' to Trinity) (was: all refused)", () => {
    const evalName = (v: string) => F2B.replace(/(eval_tasksets:\n {6}- name: )[^\n]+/, `$1${v}`);
    expect(F2B).toMatch(/eval_tasksets:\n {6}- name: /);
    expect(importTrinity(evalName("2024"), "x.yaml").source).toContain(`name: "2024"`);
    expect(importTrinity(evalName("1.5"), "x.yaml").source).toContain(`name: "1.5"`);
    expect(importTrinity(evalName("True"), "x.yaml").source).toContain(`name: "True"`);
    expect(importTrinity(evalName("123456789012345678901234567890"), "x.yaml").source).toContain(`name: "123456789012345678901234567890"`);
    const student = importTrinity(F2B.replace("model_path: Qwen/Qwen2.5-1.5B-Instruct", "model_path: 7"), "x.yaml").source;
    expect(student).toMatch(/"7"/);
    const one = (v: string) => issues(evalName(v)).map((i) => [i.path, i.message, i.hint]);
    expect(one("1e-6")).toEqual([["buffer.explorer_input.eval_tasksets[0].name", "eval name: 1e-6 is the number 1e-06 to PyYAML (YAML 1.1), which Trinity-RFT reads the config with, and its string field holds str() of it: '1e-06', not '1e-6'", `Quote it ("1e-6") to mean the text as written, or write '1e-06'.`]]);
    expect(one("010")[0]![1]).toBe("eval name: 010 is the number 8 to PyYAML (YAML 1.1), which Trinity-RFT reads the config with, and its string field holds str() of it: '8', not '010'");
    expect(one("1.50")[0]![1]).toMatch(/holds str\(\) of it: '1\.5', not '1\.50'$/);
    expect(one("true")[0]![1]).toMatch(/^eval name: true is the boolean true .*: 'True', not 'true'$/);
    // A cluster setting handed back as --infra: the string Trinity holds.
    expect(importTrinity(F2B.replace(/^project: .*$/m, "project: 2024"), "x.yaml").infra).toContain("project=2024");
    expect(issues(F2B.replace(/^project: .*$/m, "project: 2e3")).map((i) => i.message)).toEqual(["project: 2e3 is the number 2000.0 to PyYAML (YAML 1.1), which Trinity-RFT reads the config with, and its string field holds str() of it: '2000.0', not '2e3'"]);
    // In a free-form mapping the number is passed on as a number: still refused.
    expect(issues(F2B.replace("checkpoint_strategy: linear", "checkpoint_strategy: 1")).map((i) => i.message)).toEqual(["checkpoint_strategy must be a string, got 1"]);
  });

  itWithTrinity(["yaml"])("str() of a number or boolean as the import computes it is Python's, for OmegaConf.load's readings", () => {
    const texts = ["123", "-5", "+5", "-0", "0", "1.0", "1.5", "1.50", "-2.0", "1e-6", "1e20", "1.0e16", "1e15", "123456789.125", "0.0001", "0.00001", "1e300", "2.5e-300", ".5", "1_000", "0x1F", "010", "1:30", "1:30.5", ".inf", "-.inf", ".nan", "True", "no", "99999999999999999999999", "1e22", "5e-324", "0.1", "100.0"];
    const script = [...OMEGACONF_LOADER, "print(json.dumps([str(yaml.load(t, Loader=loader)) for t in json.load(sys.stdin)]))"].join("\n");
    const py = spawnSync(TRINITY_PY, ["-c", script], { input: JSON.stringify(texts), encoding: "utf8" });
    expect(py.status, py.stderr).toBe(0);
    expect(texts.map((t) => pythonStr(readPlain(t), t))).toEqual(JSON.parse(py.stdout));
  });

  it("an unknown key YAML 1.1 reads as a boolean is named as written (a GitHub workflow's `on:`)", () => {
    expect(issues(`on: push\nmodel: {model_path: x}\n${F2B.replace(/^model:\n(?: {2}.*\n)+/m, "")}`).map((i) => i.path)).toEqual(["on"]);
  });
});

describe("many unknown keys; another program's config", () => {
  it("past 10 unknown keys, the first 5 are errors of their own and one more counts and names the rest (was: one error per key)", () => {
    const typos = Array.from({ length: 30 }, (_, i) => `  algo_typo_${i + 1}: 1\n`).join("");
    const text = `${Array.from({ length: 8 }, (_, i) => `stray_${i + 1}: ${i}\n`).join("")}${F2B.replace("algorithm:\n", `algorithm:\n${typos}`)}`;
    const is = issues(text);
    expect(is.slice(0, 6).map((i) => [i.path, i.line, i.column])).toEqual([...[1, 2, 3, 4, 5].map((n) => [`stray_${n}`, n, 1]), ["stray_6", 6, 1]]);
    expect(is[5]!.message).toBe("33 more unknown keys (38 in all), which Trinity-RFT refuses as it does those above: stray_6, stray_7, stray_8, algorithm.algo_typo_1, algorithm.algo_typo_2, algorithm.algo_typo_3, algorithm.algo_typo_4, algorithm.algo_typo_5, algorithm.algo_typo_6, algorithm.algo_typo_7, algorithm.algo_typo_8, algorithm.algo_typo_9 and 21 more");
    // The rest of the config is still checked: its other problems follow.
    expect(issues(text.replace("lr: 1e-6", "lr: -1")).at(-1)!.path).toBe("algorithm.optimizer.lr");
    expect(is[5]!.hint).toMatch(/^Remove or correct each of them/);
    // Ten are each said.
    const ten = `${Array.from({ length: 10 }, (_, i) => `stray_${i + 1}: ${i}\n`).join("")}${F2B}`;
    expect(issues(ten).map((i) => i.path)).toEqual(Array.from({ length: 10 }, (_, i) => `stray_${i + 1}`));
  });

  it("a config of another program with a Trinity section or two among its keys (verl's) is one error saying it is not a Trinity-RFT config (was: an error per key, then missing keys)", () => {
    const verl = [
      "data:\n  train_files: ~/data/gsm8k/train.parquet\n", "actor_rollout_ref:\n  model:\n    path: Qwen/Qwen2.5-0.5B\n", "critic:\n  optim:\n    lr: 1e-5\n",
      "reward_model:\n  enable: False\n", "algorithm:\n  gamma: 1.0\n  lam: 1.0\n  adv_estimator: gae\n", "trainer:\n  total_epochs: 30\n  project_name: verl_examples\n  n_gpus_per_node: 8\n",
      "ray_init:\n  num_cpus: null\n",
    ].join("");
    const is = issues(verl);
    expect(is.map((i) => [i.path, i.line, i.column])).toEqual([["$", 1, 1]]);
    expect(is[0]!.message).toBe("not a Trinity-RFT config: only 2 of its 7 top-level keys are Trinity-RFT's (algorithm, trainer); the other 5 are not (data, actor_rollout_ref, critic, reward_model, ray_init), nor are 6 keys inside those sections: Trinity-RFT refuses each of these 11 keys");
    expect(is[0]!.hint).toMatch(/^Give the YAML of a `trinity run --config` file, whose top-level keys are those of Trinity-RFT's Config/);
    // 300 keys beside a model section; and 300 with no Trinity section at all, counted.
    const many = (n: number) => Array.from({ length: n }, (_, i) => `key_${i + 1}: ${i}\n`).join("");
    expect(issues(`model: {model_path: x}\n${many(300)}`).map((i) => i.message)).toEqual(["not a Trinity-RFT config: only 1 of its 301 top-level keys is Trinity-RFT's (model); the other 300 are not (key_1, key_2, key_3, key_4, key_5, key_6, key_7, key_8 and 292 more): Trinity-RFT refuses each of these 300 keys"]);
    expect(issues(many(300)).map((i) => i.message)).toEqual(["not a Trinity-RFT config: none of the sections algorithm, model, buffer, explorer, trainer is present (found 300 top-level keys: key_1, key_2, key_3, key_4, key_5, key_6 and 294 more)"]);
    // A GitHub workflow: its `on:` (the key true to YAML 1.1) is named as written.
    expect(issues("name: CI\non:\n  push:\n    branches: [main]\njobs:\n  test:\n    runs-on: ubuntu-latest\n")[0]!.message).toMatch(/found 3 top-level keys: name, on, jobs\)$/);
  });
});
