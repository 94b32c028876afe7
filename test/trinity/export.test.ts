/**
 * Plan → Trinity config: the mapping of every plan field, recognition of the official TCOD schedules,
 * when a plugin is generated and what it carries, and errors that name what cannot be exported.
 */
import { spawnSync } from "node:child_process";
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { compileFile } from "../../compiler/index.js";
import { semanticsOf, type EpisodeSemantics } from "../../plan/env-semantics.js";
import { resolvedConfig } from "../../targets/trinity/import.js";
import { exportTrinity, MAX_EXPORT_STEPS, REFUSED_CONSTRUCTS, refusedConstruct, TrinityExportError } from "../../targets/trinity/export.js";
import { officialB2f, officialF2b, recogniseB2f, recogniseF2b, simplify } from "../../targets/trinity/plugin/recognise.js";
import type { ExprTree } from "../../plan/expr.js";
import { parsePlan, PlanError, type AgentFormat, type Plan, type PlanNode } from "../../plan/schema.js";
import { TRINITY_PY, itWithTrinity } from "./real.js";
import { ALFWORLD_AGENT, atodPlan, b2fPlan, b2fTree, f2bPlan, f2bTree, makePlan, opdPlan, turnopdPlan, SCIENCEWORLD_AGENT, TCOD_AGENT, WEBSHOP_AGENT } from "./plans.js";

const fork = { target: "tcod-fork" as const };
const cfg = (e: { config: Record<string, unknown> }) => e.config as any;
function exportError(f: () => unknown): TrinityExportError {
  try { f(); } catch (e) { if (e instanceof TrinityExportError) return e; throw e; }
  throw new Error("expected a TrinityExportError");
}
const c = (value: number): ExprTree => ({ op: "const", value });
const step: ExprTree = { op: "var", name: "step" };

describe("official schedule recognition", () => {
  const ctx = { steps: 250, maxTurns: 30 };
  it("recognises f2b written as the stdlib lowers it, for every k", () => {
    for (const k of [1, 4, 5, 6, 8, 50]) expect(recogniseF2b(f2bTree(k, 30), ctx)).toBe(k);
  });
  it("recognises an equivalent spelling (no outer min: the runtime caps at Hmax)", () => {
    expect(recogniseF2b({ op: "add", args: [{ op: "floor", args: [{ op: "div", args: [step, c(6)] }] }, c(1)] }, ctx)).toBe(6);
  });
  it("rejects H0 ≠ 1, a faster growth, a lower cap, and a ceil instead of floor", () => {
    expect(recogniseF2b(f2bTree(6, 30, 2), ctx)).toBeUndefined();
    expect(recogniseF2b({ op: "min", args: [{ op: "add", args: [c(1), { op: "mul", args: [{ op: "floor", args: [{ op: "div", args: [step, c(6)] }] }, c(2)] }] }, c(30)] }, ctx)).toBeUndefined();
    expect(recogniseF2b(f2bTree(6, 20), ctx)).toBeUndefined();
    expect(recogniseF2b({ op: "min", args: [{ op: "add", args: [c(1), { op: "ceil", args: [{ op: "div", args: [step, c(6)] }] }] }, c(30)] }, ctx)).toBeUndefined();
  });
  it("accepts a lower cap the run never reaches (identical values over the run)", () => {
    expect(recogniseF2b(f2bTree(6, 20), { steps: 100, maxTurns: 30 })).toBe(6); // H(100) = 17 < 20
  });
  it("recognises b2f and checks it for every expert length", () => {
    expect(recogniseB2f(b2fTree(5), ctx)).toBe(5);
    const shifted: ExprTree = { op: "clamp", args: [{ op: "sub", args: [{ op: "var", name: "episode.expert_length" }, { op: "floor", args: [{ op: "div", args: [step, c(5)] }] }] }, c(0), { op: "sub", args: [{ op: "var", name: "episode.expert_length" }, c(1)] }] };
    expect(recogniseB2f(shifted, ctx)).toBeUndefined(); // L − ⌊t/k⌋ instead of L − 1 − ⌊t/k⌋
  });
  it("the official formulas match hand-computed TCOD values", () => {
    expect([1, 5, 6, 11, 12, 250].map((t) => officialF2b(t, 6, 30))).toEqual([1, 1, 2, 2, 3, 30]);
    expect([1, 4, 5, 9, 10, 40].map((t) => officialB2f(t, 5, 8))).toEqual([7, 7, 6, 6, 5, 0]);
    expect(officialB2f(3, 5, 0)).toBe(0); // no expert actions → no prefix
  });
  it("simplify folds constants and identities", () => {
    expect(simplify({ op: "mul", args: [{ op: "floor", args: [{ op: "div", args: [step, { op: "add", args: [c(2), c(4)] }] }] }, c(1)] }))
      .toEqual({ op: "floor", args: [{ op: "div", args: [step, c(6)] }] });
  });
});

describe("config mapping (tcod-fork)", () => {
  it("maps every field of an official f2b plan", () => {
    const e = exportTrinity(f2bPlan(6), fork);
    const x = cfg(e);
    expect(e.workflow).toBe("TCOD_f2b_alfworld_workflow");
    expect(e.advantageFn).toBe("multi_turn_opd");
    expect(e.plugin).toBeUndefined();
    expect(x.model.model_path).toBe("Qwen/Qwen2.5-1.5B-Instruct");
    expect(x.explorer.auxiliary_models[0].model_path).toBe("/path/to/teacher");
    expect(x.algorithm).toMatchObject({
      algorithm_type: "on_policy_distill", repeat_times: 1, advantage_fn: "multi_turn_opd", advantage_fn_args: { kl_coef: 1 },
      sample_strategy: "staleness_control", sample_strategy_args: { max_staleness: 2 }, loss_agg_mode: "seq-mean-token-mean",
      policy_loss_fn: "ppo", policy_loss_fn_args: { clip_range: 0.2 }, optimizer: { lr: 1e-6, betas: [0.9, 0.999], weight_decay: 0.01 },
    });
    expect(x.buffer).toMatchObject({ total_steps: 250, batch_size: 16, train_batch_size: 64 });
    expect(x.buffer.explorer_input.taskset).toMatchObject({
      path: "/path/to/alfworld_data/train_expert.jsonl", split: "train", format: { prompt_key: "game_file" },
      rollout_args: { temperature: 1, logprobs: 0 },
      workflow_args: { max_env_steps: 30, temperature: 1, total_steps: 250, checkpoint_strategy: "linear", checkpoint_steps: 6 },
    });
    expect(x.buffer.explorer_input.eval_tasksets).toEqual([expect.objectContaining({
      name: "alfworld_eval_seen", path: "/path/to/alfworld_data/test.jsonl", split: "test", total_steps: 10,
      rollout_args: { temperature: 0.4, logprobs: 0 }, workflow_args: { temperature: 1, max_env_steps: 30, total_steps: 250, checkpoint_strategy: "linear", checkpoint_steps: 6 },
    })]);
    expect(x.explorer).toMatchObject({ eval_interval: 5, eval_on_startup: true });
    expect(x.trainer).toMatchObject({ total_steps: 250, save_interval: 250, grad_clip: 1 });
    expect(x.synchronizer.sync_interval).toBe(1);
  });
  it("token_mean → token-mean, turn_mean → seq-mean-token-mean (one row = one turn)", () => {
    expect(cfg(exportTrinity(opdPlan(), fork)).algorithm.loss_agg_mode).toBe("token-mean");
    expect(cfg(exportTrinity(makePlan({ name: "x", aggregate: { kind: "turn_mean" } }), fork)).algorithm.loss_agg_mode).toBe("seq-mean-token-mean");
  });
  it("the YAML is the config, with a header giving the launch command; output is deterministic", () => {
    const a = exportTrinity(b2fPlan(), fork), b = exportTrinity(b2fPlan(), fork);
    expect(a.yaml).toBe(b.yaml);
    expect(parseYaml(a.yaml)).toEqual(JSON.parse(JSON.stringify(a.config)));
    expect(a.yaml).toMatch(/^# .*\n# Run: trinity run --config THIS_FILE\n/);
    expect(cfg(a).buffer.explorer_input.taskset.workflow_args.checkpoint_steps).toBe(5);
  });
  it("infrastructure comes from options, not the plan", () => {
    const x = cfg(exportTrinity(opdPlan(), { target: "tcod-fork", infra: { gpuPerNode: 4, rolloutEngines: 1, monitor: "wandb" } }));
    expect(x.cluster.gpu_per_node).toBe(4);
    expect(x.explorer.rollout_model.engine_num).toBe(1);
    expect(x.monitor.monitor_type).toBe("wandb");
  });
  it("a string Trinity's loader (YAML 1.1) would read as a boolean or a number is quoted in the YAML (was: written plain, `DEBUG: on` read as True)", () => {
    const e = exportTrinity(opdPlan(), { target: "tcod-fork", infra: { envVars: { DEBUG: "on", MASK: "010", T: "1:30", U: "1_000", B: "0b1", X: "plain" } } });
    for (const line of [`DEBUG: "on"`, `MASK: "010"`, `T: "1:30"`, `U: "1_000"`, `B: "0b1"`, "X: plain"]) expect(e.yaml).toContain(`    ${line}\n`);
    // Read back as Trinity reads it (import trinity's reading), each is the string written.
    expect((resolvedConfig(e.yaml) as any).explorer.env_vars).toEqual({ DEBUG: "on", MASK: "010", T: "1:30", U: "1_000", B: "0b1", X: "plain" });
  });
  it("a string that is exactly `=` is quoted (was: written plain, which PyYAML resolves to tag:yaml.org,2002:value and SafeLoader cannot construct, so Trinity could not load the file)", () => {
    const e = exportTrinity(opdPlan(), { target: "tcod-fork", infra: { checkpointRootDir: "=", envVars: { EQ: "=", EQ2: "==" } } });
    expect(e.yaml).toContain(`checkpoint_root_dir: "="\n`);
    expect(e.yaml).toContain(`    EQ: "="\n`);
    expect(e.yaml).toContain("    EQ2: ==\n");
    expect((resolvedConfig(e.yaml) as any).explorer.env_vars).toEqual({ EQ: "=", EQ2: "==" });
  });
  itWithTrinity(["yaml"])("every string the export writes reads back as that string to PyYAML's SafeLoader (Trinity's loader), over tricky and random strings", () => {
    // Each of PyYAML's implicit resolvers (and OmegaConf's float) near its edges, YAML indicators, line breaks PyYAML knows.
    const tricky = [
      "=", "==", "<<", "~", "null", "Null", "NULL", "", " ", "-", "?", ":", "a: b", "#x", "x #y", "0o17", "1e5", "1E5", ".5", "+.5", "+1", "-.inf", ".NaN", ".nan", ".Inf",
      "2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "y", "n", "Y", "NO", "yes", "On", "off", "TRUE", "0x_", "0b", "0b_", "0b2", "1__0", "1:2:3", "190:20:30.15",
      "685_230.15", "6.8523015e+5", "1.", "1.e5", "0.", "-0", "00", "08", "09.5", "0_", "_0", "1_", "+0x1F", "-0b11", "1:60", "1:5", "1:05.5", "e5", "1e", "1e+", "1.0e-6",
      "—", "é", "a\nb", "a\n\nb", "tab\tx", "'", "\"", "!x", "&a", "*a", "%x", "@x", "`x", "|", ">", "---", "...", "- x", "[a]", "{a}", ",", "a,b", "trailing ", " leading",
      "x\u0085y", "x\u2028y", "x\u2029y", "\u00a0", "\ufeffx", "x\u0007", "\t", "\n", "a\r\nb",
    ];
    // Random strings over the characters those resolvers turn on, seeded (a linear congruential generator).
    const alphabet = "0123456789._:-+=~exXbBoOnNyYlLtTfFaAsS #,[]{}!&*?|>'\"%@`\n\t\\";
    let seed = 19;
    const rand = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n; };
    const random = Array.from({ length: 3000 }, () => Array.from({ length: 1 + rand(7) }, () => alphabet[rand(alphabet.length)]).join(""));
    const strings = [...tricky, ...random];
    const envVars = Object.fromEntries(strings.map((s, i) => [`V${i}`, s]));
    const e = exportTrinity(opdPlan(), { target: "tcod-fork", infra: { checkpointRootDir: "=", project: "1:30", envVars } });
    const py = spawnSync(TRINITY_PY, ["-c", "import json, sys, yaml; print(json.dumps(yaml.load(sys.stdin.read(), Loader=yaml.SafeLoader)))"], { input: e.yaml, encoding: "utf8", maxBuffer: 1 << 26 });
    expect(py.status, py.stderr.slice(-2000)).toBe(0);
    const read = JSON.parse(py.stdout);
    expect([read.checkpoint_root_dir, read.project]).toEqual(["=", "1:30"]);
    const wrong = strings.map((s, i) => [s, read.explorer.env_vars[`V${i}`]]).filter(([s, got]) => got !== s);
    expect(wrong).toEqual([]);
    // The import reads the file as PyYAML does.
    expect((resolvedConfig(e.yaml) as any).explorer.env_vars).toEqual(envVars);
  });
});

describe("plugins", () => {
  it("a non-official horizon (H0 = 2) gets the generated workflow with the tree as data", () => {
    const e = exportTrinity(makePlan({ name: "h0", horizon: f2bTree(6, 30, 2) }), fork);
    expect(e.workflow).toBe("tcod_h0_workflow");
    expect(e.advantageFn).toBe("multi_turn_opd");
    expect(Object.keys(e.plugin!).sort()).toEqual(["README.md", "tcod_runtime/__init__.py", "tcod_runtime/core.py", "tcod_runtime/range_table.py", "tcod_runtime/ranges.py", "tcod_runtime/spec.json", "tcod_workflow.py"]);
    const spec = JSON.parse(e.plugin!["tcod_runtime/spec.json"]!);
    expect(spec.workflow.pacing.horizon).toEqual({ expr: "horizon" });
    expect(spec.exprs.horizon.tree).toEqual(f2bTree(6, 30, 2));
    expect(spec.workflow.agent).toEqual(ALFWORLD_AGENT);
    expect(e.notes.join("\n")).toMatch(/horizon schedule other than TCOD-f2b/);
  });
  it("TurnOPD: adaptive depth and progressive normalisation in the plugin, token-mean in the config", () => {
    const e = exportTrinity(turnopdPlan(), fork);
    const spec = JSON.parse(e.plugin!["tcod_runtime/spec.json"]!);
    expect(spec.workflow.pacing.adaptive.rule).toEqual({ kind: "coverage", keep: 0.9 });
    expect(spec.advantage.aggregate).toEqual({ kind: "progressive", weight: { expr: "blend" } });
    expect(Object.keys(spec.exprs)).toEqual(["blend"]);
    expect(cfg(e).algorithm).toMatchObject({ advantage_fn: "tcod_alfworld_turnopd_advantage", loss_agg_mode: "token-mean", advantage_fn_args: {} });
  });
  it("ATOD: κ/ρ schedules, GRPO and T-DUR weights in the advantage plugin; the official OPD workflow stays", () => {
    const e = exportTrinity(atodPlan(), fork);
    expect(e.workflow).toBe("OPD_alfworld_workflow");
    const spec = JSON.parse(e.plugin!["tcod_runtime/spec.json"]!);
    expect(spec.workflow).toBeUndefined();
    expect(spec.advantage.terms.map((t: { kind: string }) => t.kind)).toEqual(["opd", "grpo"]);
    expect(spec.advantage.turnWeights).toEqual({ expr: "turn_weights" });
    expect(spec.advantage.teacherKey).toBe("teacher_logprobs");
    expect(Object.keys(spec.exprs).sort()).toEqual(["kappa", "rho", "turn_weights"]);
    expect(cfg(e).algorithm.repeat_times).toBe(8);
  });
  it("upstream: always the plugin workflow, on_policy_distill for plain OPD", () => {
    const e = exportTrinity(f2bPlan(), { target: "upstream" });
    expect(e.workflow).toBe("tcod_alfworld_tcod_f2b_workflow");
    expect(e.advantageFn).toBe("on_policy_distill");
    expect(JSON.parse(exportTrinity(atodPlan(), { target: "upstream" }).plugin!["tcod_runtime/spec.json"]!).advantage.teacherKey).toBe("teacher_logprobs");
  });
  it("a non-TCOD agent format needs the plugin workflow", () => {
    const agent = { ...TCOD_AGENT, name: "agentgym_react", parser: { kind: "react" as const, prefix: "Action:" }, historyWindow: 0 };
    expect(exportTrinity(makePlan({ name: "r", agent }), fork).workflow).toBe("tcod_r_workflow");
  });
});

describe("errors name the construct", () => {
  it("collects every problem of a plan at once", () => {
    const p = makePlan({ name: "bad", envKind: "texthouse", lr: { expr: "lr" }, extraExprs: { lr: { op: "mul", args: [c(1e-6), { op: "min", args: [{ op: "div", args: [step, c(10)] }, c(1)] }] } } });
    const err = exportError(() => exportTrinity(p, fork));
    // Plain OPD on texthouse would use the official workflow, so only the env itself is reported.
    expect(err.issues.map((i) => i.construct)).toEqual(["env", "learning-rate schedule"]);
    expect(err.message).toMatch(/env kind 'texthouse' has no Trinity-RFT workflow/);
  });
  it("top-k teacher scoring, SFT terms, no train_batch", () => {
    const p = makePlan({ name: "x", terms: [{ kind: "opd", coef: 1, estimator: "topk" }, { kind: "sft", coef: 0.1 }] });
    (p.graph.nodes.find((n) => n.kind === "TeacherScore")!.params as { topk: number }).topk = 20;
    (p.graph.nodes.find((n) => n.kind === "Update")!.params as { trainBatchTurns: number }).trainBatchTurns = 0;
    const err = exportError(() => exportTrinity(p, fork));
    expect(err.issues.map((i) => i.construct)).toEqual(["teacher top-k scoring", "opd estimator topk", "sft advantage term", "train_batch"]);
    for (const i of err.issues) expect(i.hint.length).toBeGreaterThan(10);
  });
  it("a clipped opd term: Trinity's multi_turn_opd does not clamp advantages", () => {
    const err = exportError(() => exportTrinity(makePlan({ name: "x", terms: [{ kind: "opd", coef: 1, estimator: "k1", clip: 5 }] }), fork));
    expect(err.issues.map((i) => i.construct)).toEqual(["opd clip"]);
    expect(err.issues[0]!.hint).toMatch(/Drop clip/);
  });
  it("webshop and scienceworld with a non-official schedule or the upstream target: the generated workflow drives them, with their episode semantics", () => {
    for (const envKind of ["webshop", "scienceworld"]) {
      // Each env's official prompt: WebShop's; ScienceWorld's with action templates and objects.
      const agent = envKind === "scienceworld" ? SCIENCEWORLD_AGENT : WEBSHOP_AGENT;
      const e = exportTrinity(makePlan({ name: "w", envKind, agent, horizon: f2bTree(4, 30, 2) }), fork);
      expect(e.workflow).toBe("tcod_w_workflow");
      const spec = JSON.parse(e.plugin!["tcod_runtime/spec.json"]!) as { workflow: { env: string; semantics: EpisodeSemantics; agent: AgentFormat } };
      expect(spec.workflow.semantics).toEqual(semanticsOf(envKind));
      expect(spec.workflow.agent).toEqual(agent);
      const up = exportTrinity(makePlan({ name: "w", envKind, agent, horizon: f2bTree(4, 30) }), { target: "upstream" });
      expect(up.workflow).toBe("tcod_w_workflow");
      expect(exportTrinity(makePlan({ name: "w", envKind, agent, horizon: f2bTree(4, 30) }), fork).workflow).toBe(`TCOD_f2b_${envKind}_workflow`);
    }
    // The official ScienceWorld workflows hard-code the compact prompt: a plan that lists every valid
    // action (tcod_format) there needs the generated workflow, which renders the plan's own format.
    const listed = exportTrinity(makePlan({ name: "w", envKind: "scienceworld", agent: TCOD_AGENT, horizon: f2bTree(4, 30) }), fork);
    expect(listed.workflow).toBe("tcod_w_workflow");
    expect(listed.notes.join("\n")).toMatch(/agent format 'tcod_alfworld' \(the official scienceworld workflows hard-code the ScienceWorld prompt with action templates and objects/);
    // Likewise ALFWorld's: its official prompt is std/agent alfworld_format (the plans' default there).
    const para = exportTrinity(makePlan({ name: "w", agent: TCOD_AGENT, horizon: f2bTree(4, 30) }), fork);
    expect(para.workflow).toBe("tcod_w_workflow");
    expect(para.notes.join("\n")).toMatch(/the official alfworld workflows hard-code the ALFWorld prompt, std\/agent alfworld_format/);
    expect(exportTrinity(makePlan({ name: "w", horizon: f2bTree(4, 30) }), fork).workflow).toBe("TCOD_f2b_alfworld_workflow");
    // And WebShop's: std/agent webshop_format (the plans' default there); tcod_format is a paraphrase.
    const shop = exportTrinity(makePlan({ name: "w", envKind: "webshop", agent: TCOD_AGENT, horizon: f2bTree(4, 30) }), fork);
    expect(shop.workflow).toBe("tcod_w_workflow");
    expect(shop.notes.join("\n")).toMatch(/the official webshop workflows hard-code the WebShop prompt, std\/agent webshop_format/);
    expect(exportTrinity(makePlan({ name: "w", envKind: "webshop", horizon: f2bTree(4, 30) }), fork).workflow).toBe("TCOD_f2b_webshop_workflow");
    expect(semanticsOf("scienceworld")).toMatchObject({ truncation: { kind: "score" }, simplification: "easy" });
    expect(semanticsOf("webshop")).toMatchObject({ invalidAction: { kind: "webshop_validate" }, expertActions: "none" });
  });
  it("b2f on webshop exports with a warning: its data has no expert actions to replay", () => {
    const e = exportTrinity(makePlan({ name: "w", envKind: "webshop", prefix: b2fTree(4) }), fork);
    expect(e.workflow).toBe("TCOD_b2f_webshop_workflow");
    expect(e.notes.join("\n")).toMatch(/warning: b2f on webshop: .*no expert actions/);
    expect(exportTrinity(makePlan({ name: "a", prefix: b2fTree(4) }), fork).notes.join("\n")).not.toMatch(/warning/);
  });
  it("an official prompt that parses actions otherwise than the official parse_action exports with the generated workflow, which parses as tcod run does", () => {
    expect(ALFWORLD_AGENT).toMatchObject({ actionPick: "first", onInvalid: { kind: "empty" } });
    for (const agent of [{ ...ALFWORLD_AGENT, actionPick: undefined }, { ...ALFWORLD_AGENT, onInvalid: { kind: "pass" as const } }]) {
      const e = exportTrinity(makePlan({ name: "w", agent, horizon: f2bTree(4, 30) }), fork);
      expect(e.workflow).toBe("tcod_w_workflow");
      expect(e.notes.join("\n")).toMatch(/parses actions with action_pick "(last|first)" and on_invalid "(empty|pass)" \(the official workflows' parse_action takes the first <action>/);
      expect(JSON.parse(e.plugin!["tcod_runtime/spec.json"]!).workflow.agent).toEqual(JSON.parse(JSON.stringify(agent)));
    }
  });
  it("webshop with page_text \"text\" exports with a warning: tcod run's page text is then not the official workflows' text_rich", () => {
    const p = makePlan({ name: "w", envKind: "webshop", horizon: f2bTree(4, 30) });
    expect(exportTrinity(p, fork).notes.join("\n")).not.toMatch(/page_text/);
    for (const e of Object.values(p.resources.envs)) e.params = { page_text: "text" };
    expect(exportTrinity(p, fork).notes.join("\n")).toMatch(/warning: webshop page_text "text": tcod run shows the AgentGym server's \[SEP\]-joined page line/);
  });
  it("a plan whose importance-sampling clamp is not Trinity's fixed ±20 is refused, naming both", () => {
    const p = makePlan({ name: "clamp" });
    (p.graph.nodes.find((n) => n.kind === "Update")!.params as { logRatioClamp: number }).logRatioClamp = 5;
    const err = exportError(() => exportTrinity(p, fork));
    expect(err.issues.map((i) => i.construct)).toEqual(["log-ratio clamp"]);
    expect(err.issues[0]!.message).toMatch(/±5.*fixed ±20/);
  });
  it("an evaluation that starts at a later step (evaluate(from:)) is refused: eval_interval counts from the start", () => {
    const p = makePlan({ name: "from" });
    (p.graph.nodes.find((n) => n.kind === "Evaluate")!.params as { from?: number }).from = 300;
    const err = exportError(() => exportTrinity(p, fork));
    expect(err.issues.map((i) => i.construct)).toEqual(["eval from"]);
    expect(err.issues[0]!.hint).toMatch(/Remove `from:`/);
  });
  it("a learning rate from a TypeScript extension is a named error, not a crash", () => {
    const p = makePlan({ name: "lrx", lr: { expr: "lr" }, extraExprs: { lr: { op: "ext", fn: "warmup", args: [step] } as ExprTree } });
    expect(exportError(() => exportTrinity(p, fork)).issues.map((i) => i.construct)).toEqual(["learning-rate schedule"]);
  });
  it("expression origins are quoted", () => {
    const p = makePlan({ name: "t", horizon: { op: "ext", fn: "myCap", args: [step] } as ExprTree });
    const err = exportError(() => exportTrinity(p, fork));
    expect(err.issues[0]).toMatchObject({ construct: "TypeScript extension", origin: "test.tcod:10:12" });
  });
});

describe("run length", () => {
  it("a run past MAX_EXPORT_STEPS is refused at once (was: the pacing checks evaluated every step, hours for 10⁹ steps)", () => {
    const p = makePlan({ name: "t", steps: 1_000_000_000, horizon: f2bTree(6, 30) });
    const t0 = Date.now();
    const err = exportError(() => exportTrinity(p, fork));
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(err.issues).toEqual([{ construct: "steps", message: "the run has 1,000,000,000 steps; the export checks its schedules at every step, up to 1,000,000", hint: expect.stringMatching(/tcod run/) }]);
    // At the bound it still exports (the official workflow is recognised over all of it).
    expect(exportTrinity(makePlan({ name: "t", steps: MAX_EXPORT_STEPS, horizon: f2bTree(6, 30) }), fork).notes.join("\n")).toMatch(/TCOD_f2b_alfworld_workflow/);
  });
});

/**
 * Optimizer values are range-checked before the config is written (Trinity checks them only when it
 * loads the config on the cluster). The compiler refuses them in the source (TC4001) and plan loading
 * in a plan .json's constants (TC7001, test/plan/ranges.test.ts); the export refuses whatever reaches
 * it anyway — a plan built in code, a hand-edited lr expression constant over the run — as TC7102
 * naming the field, the YAML key and the range, and writes nothing out of range.
 */
describe("optimizer values out of range are never written", () => {
  const update = (p: Plan) => p.graph.nodes.find((n) => n.kind === "Update") as Extract<PlanNode, { kind: "Update" }>;
  const cases: [string, (p: Plan) => void, RegExp, string][] = [
    ["lr 0", (p) => { update(p).params.optimizer.lr = 0; }, /^lr must be > 0, got 0 \(it would be written to algorithm\.optimizer\.lr\)$/, "Choose lr > 0"],
    ["lr NaN", (p) => { update(p).params.optimizer.lr = NaN; }, /^lr must be > 0, got NaN/, "Choose lr > 0"],
    ["lr ∞", (p) => { update(p).params.optimizer.lr = Infinity; }, /^lr must be > 0 and ≤ 10, got Infinity/, "Choose lr > 0 and ≤ 10"],
    ["beta1 1", (p) => { update(p).params.optimizer.betas[0] = 1; }, /^betas must be in \[0, 1\), got 1 \(it would be written to algorithm\.optimizer\.betas\[0\]\)$/, "Choose betas in [0, 1)"],
    ["beta2 -0.1", (p) => { update(p).params.optimizer.betas[1] = -0.1; }, /^betas must be in \[0, 1\), got -0\.1 \(it would be written to algorithm\.optimizer\.betas\[1\]\)$/, "Choose betas in [0, 1)"],
    ["weight_decay -1", (p) => { update(p).params.optimizer.weightDecay = -1; }, /^weight_decay must be in \[0, 1\], got -1 \(it would be written to algorithm\.optimizer\.weight_decay\)$/, "Choose weight_decay in [0, 1]"],
    ["grad_clip 0", (p) => { update(p).params.optimizer.gradClip = 0; }, /^grad_clip must be > 0, got 0 \(it would be written to trainer\.grad_clip\)$/, "Choose grad_clip > 0"],
    ["clip -0.2", (p) => { update(p).params.clip = -0.2; }, /^clip must be > 0, got -0\.2 \(it would be written to algorithm\.policy_loss_fn_args\.clip_range\)$/, "Choose clip > 0"],
  ];
  it.each(cases)("%s: TC7102 naming the field and its range", (_, set, message, hint) => {
    const p = opdPlan();
    expect(() => exportTrinity(p, fork)).not.toThrow();
    set(p);
    const e = exportError(() => exportTrinity(p, fork));
    expect(e.code).toBe("TC7102");
    expect(e.issues).toEqual([{ construct: "optimizer range", message: expect.stringMatching(message), hint: expect.stringContaining(hint) }]);
    expect(e.issues[0]!.hint).toContain("plan/ranges.ts");
    expect(() => exportTrinity(p, { target: "upstream" })).toThrow(TrinityExportError);
  });

  it("betas out of range in a plan .json are refused on load (TC7001), as the other optimizer constants", () => {
    const p = JSON.parse(JSON.stringify(opdPlan())) as Plan;
    update(p).params.optimizer.betas = [0.9, 1.5];
    let err: unknown;
    try { parsePlan(p); } catch (x) { err = x; }
    expect(err).toBeInstanceOf(PlanError);
    expect((err as PlanError).issues).toContainEqual({ path: expect.stringMatching(/\.params\.optimizer\.betas\[1\]$/), message: "betas must be in [0, 1), got 1.5", hint: expect.stringContaining("[0, 1)") });
  });

  it("an lr expression constant over the run loads (schedules are checked as they are evaluated) but does not export out of range", () => {
    const p = makePlan({ name: "t", lr: { expr: "lr" }, extraExprs: { lr: { op: "const", value: -1e-6 } } });
    expect(() => parsePlan(JSON.parse(JSON.stringify(p)))).not.toThrow();
    const e = exportError(() => exportTrinity(p, fork));
    expect(e.issues.map((i) => [i.construct, i.message])).toEqual([["optimizer range", "lr must be > 0, got -0.000001 (it would be written to algorithm.optimizer.lr)"]]);
    // In range, the same expression exports as its constant.
    const ok = makePlan({ name: "t", lr: { expr: "lr" }, extraExprs: { lr: { op: "const", value: 2e-6 } } });
    expect(cfg(exportTrinity(ok, fork)).algorithm.optimizer.lr).toBe(2e-6);
  });
});

describe("examples", () => {
  /** Every .tcod under examples/, at any depth. */
  const walk = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? walk(join(d, e.name)) : e.name.endsWith(".tcod") ? [join(d, e.name)] : []);
  const files = existsSync("examples") ? walk("examples") : [];
  it("every refused construct is listed, with its reason, in docs/TRINITY.md", () => {
    const doc = readFileSync("docs/TRINITY.md", "utf8");
    const section = doc.slice(doc.indexOf("## Not exported"));
    for (const c of Object.keys(REFUSED_CONSTRUCTS)) expect(section, c).toContain(`\`${c}\``);
  });
  it.skipIf(files.length === 0).each(files)("%s exports to both targets, or is refused only for a listed construct", (file) => {
    const r = compileFile(file);
    expect(r.ok).toBe(true);
    for (const p of r.plans) {
      for (const target of ["tcod-fork", "upstream"] as const) {
        try {
          const e = exportTrinity(p.plan, { target });
          expect(e.yaml.length).toBeGreaterThan(0);
        } catch (e) {
          if (!(e instanceof TrinityExportError)) throw e;
          for (const i of e.issues) expect(Object.keys(REFUSED_CONSTRUCTS), `${file} ${target}: ${i.construct}: ${i.message}`).toContain(refusedConstruct(i.construct));
        }
      }
    }
  });
  it("the official-env examples all export (texthouse and the simulator-drawn embedded example are the refusals)", () => {
    const refused = files.filter((f) => {
      try { for (const p of compileFile(f).plans) for (const target of ["tcod-fork", "upstream"] as const) exportTrinity(p.plan, { target }); return false; } catch { return true; }
    });
    expect(refused.every((f) => f.includes("texthouse") || f.endsWith("embedded-f2b.tcod")), refused.join(", ")).toBe(true);
  });
  it.skipIf(!existsSync("examples/alfworld/tcod-f2b.tcod"))("the ALFWorld OPD, TCOD and TurnOPD examples export to both targets", () => {
    for (const m of ["opd", "tcod-f2b", "tcod-b2f", "turnopd"]) {
      const plan = compileFile(`examples/alfworld/${m}.tcod`).plans[0]!.plan;
      expect(exportTrinity(plan, fork).workflow).toMatch(m === "turnopd" ? /^tcod_/ : /^(OPD|TCOD_f2b|TCOD_b2f)_alfworld_workflow$/);
      expect(() => exportTrinity(plan, { target: "upstream" })).not.toThrow();
    }
  });
});
