/**
 * Plan → Trinity-RFT config (and, where Trinity has no native equivalent, a `--plugin-dir` of
 * generated Python). A pure function: the caller writes the files.
 *
 * Targets (docs/REFERENCES.md#tcod-values, #multi-turn-opd):
 * - `tcod-fork`: the official TCOD fork of Trinity-RFT (0.5.0.dev0). An exactly-official plan names
 *   its registered workflows `OPD_<env>_workflow`, `TCOD_f2b_<env>_workflow`, `TCOD_b2f_<env>_workflow`
 *   and its `multi_turn_opd` advantage.
 * - `upstream`: Trinity-RFT from PyPI (targets 0.6.0, the first release whose `on_policy_distill`
 *   reads the batch key its trainer writes, `teacher_logprobs`; 0.5.1 reads `teacher_log_probs`).
 *   Config schema checked with Trinity's own loader by test/trinity/validate_trinity.py. It has no
 *   TCOD workflows and no `multi_turn_opd`: the workflow always comes from the generated plugin, and
 *   plain OPD uses `on_policy_distill`, the same per-token formula c·(log p_T − log p_S)·mask.
 *
 * What neither the config nor the plugin can express is an error naming the construct
 * (`TrinityExportError`), never dropped.
 */
import { stringify } from "yaml";
import { pyyamlQuoting } from "./yaml-scalars.js";
import { escapeTree } from "./interpolation.js";
import type { EnumName } from "./fields.js";
import { enumChoices, enumMember } from "./field-values.js";
import { GRPO_DEFAULTS } from "../../plan/defaults.js";
import { UserError, type UserIssue } from "../../plan/errors.js";
import { evalScalar, readsFeedback, type ExprDef, type ExprTree, type ValueRef } from "../../plan/expr.js";
import { adaptiveDepthOf, nodeOf, nodesOf, type Plan, type AgentFormat } from "../../plan/schema.js";
import { constantOverRun, recogniseB2f, recogniseF2b, treeOf } from "./plugin/recognise.js";
import { generatePlugin, type PluginSpec, type PluginFiles } from "./plugin/generate.js";
import { DEFAULT_SEMANTICS, semanticsOf, usesAdmissibleLines, usesAvailableActions, usesCompactActions } from "../../plan/env-semantics.js";
import { trinitySplit } from "../../plan/taskset.js";
import { inRange, outOfRangeMessage, PLAN_RANGES, rangeFor, type NumRange } from "../../plan/ranges.js";

export type TrinityTarget = "tcod-fork" | "upstream";
export const TRINITY_TARGETS: readonly TrinityTarget[] = ["tcod-fork", "upstream"];
/** The upstream Trinity-RFT release whose config schema the export is checked against. */
export const TRINITY_UPSTREAM_VERSION = "0.6.0";

/**
 * Cluster and engine settings: not part of a curriculum, so they come from options. Defaults are the
 * official TCOD ALFWorld settings for one 8-GPU node (docs/REFERENCES.md#tcod-values).
 */
export interface TrinityInfra {
  project: string;
  checkpointRootDir: string;
  nodeNum: number;
  gpuPerNode: number;
  rolloutEngines: number;
  rolloutTensorParallel: number;
  teacherEngines: number;
  teacherTensorParallel: number;
  teacherMaxModelLen: number;
  teacherMaxPromptTokens: number;
  maxPromptTokens: number;
  gpuMemoryUtilization: number;
  runnerPerModel: number;
  maxTimeout: number;
  syncMethod: string;
  syncStyle: string;
  syncTimeout: number;
  maxTokenLenPerGpu: number;
  ulyssesSequenceParallel: number;
  monitor: string;
  /** `explorer.env_vars`: environment variables Trinity sets in its explorer/runner processes
   *  (the official configs put TMPDIR and RAY_TMPDIR under /dev/shm). `--infra env_vars.NAME=VALUE`. */
  envVars: Record<string, string>;
}
export const DEFAULT_INFRA: TrinityInfra = {
  project: "tcod", checkpointRootDir: "./checkpoints", nodeNum: 1, gpuPerNode: 8,
  rolloutEngines: 2, rolloutTensorParallel: 2, teacherEngines: 1, teacherTensorParallel: 2,
  teacherMaxModelLen: 20480, teacherMaxPromptTokens: 16384, maxPromptTokens: 10240,
  gpuMemoryUtilization: 0.7, runnerPerModel: 8, maxTimeout: 3600, syncMethod: "nccl",
  syncStyle: "dynamic_by_explorer", syncTimeout: 3600, maxTokenLenPerGpu: 16384, ulyssesSequenceParallel: 2,
  monitor: "tensorboard", envVars: {},
};

/**
 * Where each cluster setting sits in a Trinity config (its meaning: Trinity-RFT
 * trinity/common/config.py), so `tcod import trinity` can hand a config's own values back as
 * `--infra FIELD=VALUE` and the round trip keeps them.
 */
export const INFRA_KEYS: Readonly<Record<string, Exclude<keyof TrinityInfra, "envVars">>> = {
  project: "project", // experiment group; with name, the checkpoint directory
  checkpoint_root_dir: "checkpointRootDir", // root of checkpoints (checkpoint_root_dir/project/name)
  "cluster.node_num": "nodeNum", // Ray nodes
  "cluster.gpu_per_node": "gpuPerNode", // GPUs per node, shared by rollout, teacher and trainer
  "model.max_prompt_tokens": "maxPromptTokens", // student prompt limit (the episode so far)
  "explorer.rollout_model.engine_num": "rolloutEngines", // vLLM engines sampling the student
  "explorer.rollout_model.tensor_parallel_size": "rolloutTensorParallel",
  "explorer.rollout_model.gpu_memory_utilization": "gpuMemoryUtilization",
  "explorer.auxiliary_models.0.engine_num": "teacherEngines", // vLLM engines scoring with the teacher
  "explorer.auxiliary_models.0.tensor_parallel_size": "teacherTensorParallel",
  "explorer.auxiliary_models.0.max_model_len": "teacherMaxModelLen",
  "explorer.auxiliary_models.0.max_prompt_tokens": "teacherMaxPromptTokens",
  "explorer.runner_per_model": "runnerPerModel", // workflow runners per engine (episodes in flight)
  "explorer.max_timeout": "maxTimeout", // seconds a workflow may run
  "synchronizer.sync_method": "syncMethod", // how weights reach the explorer (nccl / checkpoint)
  "synchronizer.sync_style": "syncStyle",
  "synchronizer.sync_timeout": "syncTimeout",
  "trainer.max_token_len_per_gpu": "maxTokenLenPerGpu", // dynamic-batch packing per GPU
  "trainer.ulysses_sequence_parallel_size": "ulyssesSequenceParallel",
  "monitor.monitor_type": "monitor", // tensorboard / wandb / …
};

/**
 * Keys the export writes with one fixed value — the official TCOD configs' value — and what each
 * means there. Not curriculum and not `--infra`: `tcod import trinity` notes a config whose value
 * differs (the export would write this one).
 */
export const FIXED_KEYS: Readonly<Record<string, { value: unknown; meaning: string }>> = {
  continue_from_checkpoint: { value: false, meaning: "start afresh rather than resume the checkpoint directory" },
  "explorer.rollout_model.enable_prefix_caching": { value: false, meaning: "vLLM prefix caching off (its prompt logprobs depend on the cache)" },
  "explorer.rollout_model.enforce_eager": { value: true, meaning: "vLLM without CUDA graphs" },
  "explorer.rollout_model.dtype": { value: "bfloat16", meaning: "engine weights' dtype" },
  "explorer.rollout_model.enable_chunked_prefill": { value: true, meaning: "vLLM chunked prefill" },
  "explorer.auxiliary_models.0.enable_prefix_caching": { value: false, meaning: "teacher engine: prefix caching off" },
  "explorer.auxiliary_models.0.enforce_eager": { value: true, meaning: "teacher engine without CUDA graphs" },
  "explorer.auxiliary_models.0.dtype": { value: "bfloat16", meaning: "teacher weights' dtype" },
  "trainer.use_dynamic_bsz": { value: true, meaning: "pack micro-batches by tokens (max_token_len_per_gpu)" },
  "buffer.trainer_input.experience_buffer.storage_type": { value: "queue", meaning: "experiences pass from explorer to trainer through a queue" },
};

/**
 * `--infra KEY=VALUE` arguments as infra settings, or a message naming the bad one. Keys are the
 * fields of TrinityInfra; `env_vars.NAME=VALUE` sets one entry of `explorer.env_vars`.
 */
/**
 * What Trinity-RFT accepts for each cluster setting (trinity/common/config.py and constants.py of
 * Trinity-RFT, as installed for test/trinity): counts are whole numbers ≥ 1, except node_num and
 * gpu_per_node, where 0 asks Trinity to detect them from the Ray cluster (config_validator.py);
 * gpu_memory_utilization is vLLM's fraction of GPU memory, in (0, 1]; sync_method and sync_style
 * are names of its SyncMethod and SyncStyle enums as its fields take them (fields.ts ENUMS);
 * monitor is a name of trinity/utils/monitor.py's MONITOR registry or a dotted path to a class.
 */
const INFRA_RANGES: Partial<Record<keyof TrinityInfra, { integer?: boolean; min: number; minOpen?: boolean; max?: number } | { choices: readonly string[]; dotted?: boolean } | { enum: EnumName }>> = {
  nodeNum: { integer: true, min: 0 }, gpuPerNode: { integer: true, min: 0 },
  rolloutEngines: { integer: true, min: 1 }, rolloutTensorParallel: { integer: true, min: 1 },
  teacherEngines: { integer: true, min: 1 }, teacherTensorParallel: { integer: true, min: 1 },
  teacherMaxModelLen: { integer: true, min: 1 }, teacherMaxPromptTokens: { integer: true, min: 1 }, maxPromptTokens: { integer: true, min: 1 },
  gpuMemoryUtilization: { min: 0, minOpen: true, max: 1 },
  runnerPerModel: { integer: true, min: 1 }, maxTimeout: { integer: true, min: 1 }, syncTimeout: { integer: true, min: 1 },
  maxTokenLenPerGpu: { integer: true, min: 1 }, ulyssesSequenceParallel: { integer: true, min: 1 },
  syncMethod: { enum: "SyncMethod" },
  syncStyle: { enum: "SyncStyle" },
  monitor: { choices: ["tensorboard", "wandb", "mlflow", "swanlab"], dotted: true },
};

/** Why `value` is not a valid `--infra key`, or undefined when it is. */
export function infraProblem(key: keyof TrinityInfra, value: number | string): string | undefined {
  const r = INFRA_RANGES[key];
  if (!r) return undefined;
  // As Trinity's field converts it (field-values.ts): a member's name in any case, an alias, `SyncMethod.nccl`.
  if ("enum" in r) return enumMember(r.enum, String(value)) !== undefined ? undefined : `--infra ${key} must be one of ${enumChoices(r.enum)}, in any case; got '${value}'`;
  if ("choices" in r) {
    const v = String(value);
    if (r.choices.includes(v.toLowerCase())) return undefined;
    if (r.dotted && /^[A-Za-z_]\w*(\.[A-Za-z_]\w*)+$/.test(v)) return undefined;
    return `--infra ${key} must be one of ${r.choices.join(", ")}${r.dotted ? " (or a dotted path to a class, my_pkg.monitors.MyMonitor)" : ""}; got '${v}'`;
  }
  const n = value as number;
  const range = `${r.integer ? "a whole number " : "a number "}${r.max !== undefined ? `in ${r.minOpen ? "(" : "["}${r.min}, ${r.max}]` : `≥ ${r.min}`}`;
  const zero = r.integer && r.min === 0 ? " (0: Trinity detects it from the Ray cluster)" : "";
  if ((r.integer && !Number.isSafeInteger(n)) || n < r.min || (r.minOpen && n === r.min) || (r.max !== undefined && n > r.max)) {
    return `--infra ${key} must be ${range}${zero}; got ${n}`;
  }
  return undefined;
}

export function parseInfra(items: readonly string[]): Partial<TrinityInfra> | string {
  const out: Record<string, unknown> = {};
  const envVars: Record<string, string> = {};
  for (const item of items) {
    const ev = /^env_vars\.([A-Za-z_][A-Za-z0-9_]*)=(.*)$/s.exec(item);
    if (ev) { envVars[ev[1]!] = ev[2]!; continue; }
    const m = /^(\w+)=(.*)$/s.exec(item);
    if (!m) return `cannot parse --infra '${item}'; write KEY=VALUE, e.g. --infra gpuPerNode=4 or --infra env_vars.TMPDIR=/dev/shm/tmp`;
    const key = m[1]!;
    if (!(key in DEFAULT_INFRA) || key === "envVars") return `unknown --infra key '${key}'; keys: ${Object.keys(DEFAULT_INFRA).filter((k) => k !== "envVars").join(", ")}, env_vars.NAME`;
    const def = DEFAULT_INFRA[key as keyof TrinityInfra];
    if (typeof def === "number") {
      // A decimal number, as YAML writes one: Number() would also take 0x10, 0b1 and "" (as 0).
      const n = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/.test(m[2]!) ? Number(m[2]) : NaN;
      if (!Number.isFinite(n)) return `--infra ${key} needs a number, got '${m[2]}'`;
      const problem = infraProblem(key as keyof TrinityInfra, n);
      if (problem) return problem;
      out[key] = n;
    } else {
      const problem = infraProblem(key as keyof TrinityInfra, m[2]!);
      if (problem) return problem;
      out[key] = m[2]!;
    }
  }
  if (Object.keys(envVars).length > 0) out.envVars = envVars;
  return out as Partial<TrinityInfra>;
}

export interface TrinityExportOptions {
  target: TrinityTarget;
  infra?: Partial<TrinityInfra>;
  /** Directory name of the plugin, as referenced in the header comment (default `plugin`). */
  pluginDir?: string;
}

export interface TrinityExport {
  /** The config object (what the YAML says). */
  config: Record<string, unknown>;
  /** The config as YAML, with a header comment giving the launch command. */
  yaml: string;
  /** Files of the `--plugin-dir` (relative paths → contents), when the plan needs one. */
  plugin?: PluginFiles;
  /** `default_workflow_type` and `advantage_fn` chosen, and why (one line each) — for `--json` and logs. */
  workflow: string;
  advantageFn: string;
  notes: string[];
}

/**
 * Every construct the export refuses (an ExportIssue's `construct`, per-name parts normalised by
 * `refusedConstruct`), each with why; docs/TRINITY.md "Not exported" lists them all
 * (test/trinity/export.test.ts checks both, and that every example exports or fails only on these).
 */
export const REFUSED_CONSTRUCTS: Readonly<Record<string, string>> = {
  "model lora": "Trinity loads a model path; a LoRA adapter on the student or teacher must be merged first",
  "model tokenizer": "Trinity loads the tokenizer from the model path",
  env: "an env kind with no Trinity workflow and no Python implementation the plugin could drive (texthouse lives in tcod's TypeScript runtime)",
  "env taskFile": "an env whose tasks the simulator draws (no task_file): Trinity reads tasks from a taskset",
  "eval taskFile": "the same for an evaluation env",
  temperature: "a sampling-temperature schedule: rollout_args.temperature is fixed for the run",
  "teacher top-k scoring": "Trinity's teacher scoring returns the sampled token's logprob only",
  "TypeScript extension": "a Python plugin cannot run a TypeScript extension",
  "feedback coefficient": "a loss coefficient read from run feedback",
  "plugin workflow env": "a plan that needs the generated workflow on an env it does not drive",
  "gkd loss": "forward KL needs the teacher's full distributions",
  "sft advantage term": "an SFT term cannot be combined with OPD in one Trinity algorithm",
  "opd estimator": "the full/top-k OPD estimators need the teacher's distributions",
  "trajectory rows": "seq_mean_token_mean over whole-trajectory rows (Trinity trains one row per turn)",
  "learning-rate schedule": "an lr expression (Trinity schedules lr only with its own scheduler keys)",
  "optimizer eps": "verl's Adam eps is fixed at 1e-8",
  "optimizer range": "an optimizer value the config would carry out of the range tcod checks (plan/ranges.ts: lr > 0, betas in [0, 1), weight_decay in [0, 1], grad_clip > 0, clip > 0) — a hand-edited plan's; Trinity would refuse it only when it loads the config, or train with it",
  "log-ratio clamp": "Trinity's policy losses clamp log π − log π_old at a fixed ±20",
  train_batch: "`train_batch: 0` (the whole step): train_batch_size is a fixed number of turns",
  "eval every": "evaluations at different intervals: one explorer.eval_interval",
  "eval at_start": "some evaluations at the start and others not: one explorer.eval_on_startup",
  "eval from": "an evaluation that starts at a later step: the explorer evaluates every eval_interval steps from the start",
  steps: `a run of more than ${(1_000_000).toLocaleString("en-US")} steps: the export compares each schedule with the official workflows' at every step`,
};

/**
 * The most steps a plan may have to be exported: the export proves a schedule is the official one
 * (plugin/recognise.ts) or constant by evaluating it at every step (× every expert length for b2f),
 * ~1 s here; a hand-set 10⁹ steps would take hours.
 */
export const MAX_EXPORT_STEPS = 1_000_000;

/** An issue's construct with its per-name parts dropped (`student model lora` → `model lora`). */
export function refusedConstruct(construct: string): string {
  return construct.replace(/^(student|teacher) model /, "model ").replace(/^eval '.*' taskFile$/, "eval taskFile").replace(/^opd estimator .*$/, "opd estimator");
}

export interface ExportIssue { construct: string; message: string; hint: string; origin?: string }
export class TrinityExportError extends UserError {
  readonly code = "TC7102";
  constructor(readonly issues: ExportIssue[]) {
    super(
      `cannot export to Trinity-RFT:\n` +
        issues.map((i) => `  ${i.construct}${i.origin ? ` (${i.origin})` : ""}: ${i.message}\n    hint: ${i.hint}`).join("\n"),
    );
  }
  override problems(): UserIssue[] {
    return this.issues.map((i) => ({ message: `cannot export to Trinity-RFT: ${i.construct}${i.origin ? ` (${i.origin})` : ""}: ${i.message}`, hint: i.hint }));
  }
}

/** Trinity env names of the TCOD workflows, per plan env kind; prompt keys of their tasksets. */
const TRINITY_ENVS: Record<string, { name: string; promptKey: string }> = {
  alfworld: { name: "alfworld", promptKey: "game_file" },
  webshop: { name: "webshop", promptKey: "task_id" },
  scienceworld: { name: "scienceworld", promptKey: "task_desc" },
  sciworld: { name: "scienceworld", promptKey: "task_desc" },
};
/** Env kinds the generated plugin workflow drives itself (in-process, as the official workflows do). */
const PLUGIN_ENVS = new Set(["alfworld", "webshop", "scienceworld", "sciworld"]);

const LOSS_AGG: Record<string, string> = {
  token_mean: "token-mean",
  seq_mean_token_mean: "seq-mean-token-mean",
  // One Trinity row is one turn, so the mean over rows of per-row token means is the turn mean.
  turn_mean: "seq-mean-token-mean",
};

/** Trinity-RFT's fixed clamp of the policy losses' log-ratio. */
const TRINITY_LOG_RATIO_CLAMP = 20;

/** Optimiser epsilon of verl's AdamW; Trinity's OptimizerConfig has no key for it. */
const VERL_ADAM_EPS = 1e-8;

export function exportTrinity(plan: Plan, options: TrinityExportOptions): TrinityExport {
  const infra = { ...DEFAULT_INFRA, ...options.infra };
  const issues: ExportIssue[] = [];
  const notes: string[] = [];
  const fail = (construct: string, message: string, hint: string, origin?: string): void => {
    issues.push({ construct, message, hint, ...(origin ? { origin } : {}) });
  };
  const originOf = (ref: ValueRef | undefined): string | undefined =>
    ref !== undefined && typeof ref !== "number" ? plan.exprs[ref.expr]?.origin : undefined;
  const steps = plan.clock.steps;
  if (steps > MAX_EXPORT_STEPS) {
    throw new TrinityExportError([{ construct: "steps", message: `the run has ${steps.toLocaleString("en-US")} steps; the export checks its schedules at every step, up to ${MAX_EXPORT_STEPS.toLocaleString("en-US")}`, hint: "Export a shorter run (`--set CURRICULUM.steps=N`), or train this one with `tcod run`." }]);
  }

  const need = <K extends Parameters<typeof nodeOf>[1]>(kind: K) => {
    const n = nodeOf(plan, kind);
    if (!n) throw new TrinityExportError([{ construct: `${kind} node`, message: `the plan has no ${kind} node`, hint: "Compile the plan with `tcod compile`; hand-written plans need every node kind of plan/nodes.ts except TurnWeights and Evaluate." }]);
    return n;
  };
  const sampler = need("TaskSampler").params;
  const planner = need("EpisodePlanner").params;
  const rollout = need("Rollout").params;
  const teacherScore = need("TeacherScore").params;
  const advantage = need("Advantage").params;
  const update = need("Update").params;
  const sync = nodeOf(plan, "WeightSync")?.params;
  const checkpoint = nodeOf(plan, "Checkpoint")?.params;
  const turnWeights = nodeOf(plan, "TurnWeights")?.params;
  const evals = nodesOf(plan, "Evaluate").map((n) => n.params);
  const adaptive = adaptiveDepthOf(plan);
  const grpo = nodeOf(plan, "GroupAdvantage")?.params;

  // ---- resources ----
  const student = plan.resources.models[rollout.student];
  const teacher = plan.resources.models[teacherScore.teacher];
  const env = plan.resources.envs[sampler.env];
  const agent = plan.resources.agents[rollout.agent];
  if (!student || !teacher || !env || !agent) {
    throw new TrinityExportError([{ construct: "plan resources", message: `the plan refers to a missing resource (student '${rollout.student}', teacher '${teacherScore.teacher}', env '${sampler.env}', agent '${rollout.agent}')`, hint: "The plan is inconsistent; recompile it with `tcod compile`." }]);
  }
  for (const [role, m] of [["student", student], ["teacher", teacher]] as const) {
    if (m.lora) fail(`${role} model lora`, `a LoRA adapter ('${m.lora}') on the ${role} is not exported`, "Merge the adapter into the model and give the merged path, or train with `tcod run`.");
    if (m.tokenizer && m.tokenizer !== m.path) fail(`${role} model tokenizer`, `a separate tokenizer ('${m.tokenizer}') cannot be set in Trinity; it loads the tokenizer from the model path`, "Remove `tokenizer:` or point `path:` at a model directory that includes the tokenizer.");
  }
  const trinityEnv = TRINITY_ENVS[env.kind];
  if (!trinityEnv) fail("env", `env kind '${env.kind}' has no Trinity-RFT workflow (TCOD's workflows cover alfworld, webshop, scienceworld)`, "Use an alfworld, webshop or scienceworld env, or run this curriculum with `tcod run`.");
  if (!env.taskFile) fail("env taskFile", `env '${sampler.env}' has no task file; Trinity reads tasks from a JSONL taskset`, "Give the env a JSONL taskset (TCOD's `train_expert.jsonl` format, with `actions` for b2f).");
  for (const e of evals) {
    const ee = plan.resources.envs[e.env];
    if (ee && !ee.taskFile) fail(`eval '${e.name}' taskFile`, `eval env '${e.env}' has no task file`, "Give the eval env a JSONL taskset.");
  }

  // ---- pacing: official workflow, or the plugin's ----
  const pacingCtx = { steps, maxTurns: planner.maxTurns };
  const horizonTree = planner.horizon === undefined ? undefined : treeOf(planner.horizon, plan.exprs);
  const prefixTree = planner.prefix === undefined ? undefined : treeOf(planner.prefix, plan.exprs);
  const noHorizon = horizonTree === undefined || isConstantAtLeast(horizonTree, planner.maxTurns, steps);
  const noPrefix = prefixTree === undefined || isConstantZero(prefixTree, steps, planner.maxTurns);
  let official: { method: "OPD" | "TCOD_f2b" | "TCOD_b2f"; k?: number } | undefined;
  const whyPlugin: string[] = [];
  if (adaptive) whyPlugin.push("TurnOPD adaptive depth");
  if (planner.truncatedReward !== 0) whyPlugin.push(`truncated-episode reward ${planner.truncatedReward} (TCOD: 0)`);
  if (!isTcodAgent(agent, env.kind)) {
    const adm = semanticsOf(env.kind).admissible;
    whyPlugin.push(`agent format '${agent.name}' (the official ${env.kind} workflows hard-code ${adm === "templates_and_objects" ? "the ScienceWorld prompt with action templates and objects, std/agent scienceworld_format" : adm === "lines" ? "the ALFWorld prompt, std/agent alfworld_format" : adm === "unquoted_lines" ? "the WebShop prompt, std/agent webshop_format" : "TCOD's prompt format"})`);
  } else if (semanticsOf(env.kind) !== DEFAULT_SEMANTICS && !parsesAsOfficial(agent)) {
    whyPlugin.push(`agent format '${agent.name}' parses actions with action_pick "${agent.actionPick ?? "last"}" and on_invalid "${agent.onInvalid.kind}" (the official workflows' parse_action takes the first <action> and sends "" when there is none: action_pick "first", on_invalid "empty")`);
  }
  const rolloutTemp = constantOverRun(rollout.temperature, plan.exprs, steps);
  if (rolloutTemp === undefined) {
    fail("temperature", "a sampling-temperature schedule cannot be exported: Trinity fixes rollout_args.temperature for the run", "Use a constant `temperature:`.", originOf(rollout.temperature));
  }
  if (teacherScore.topk > 0) fail("teacher top-k scoring", `the teacher scores top-${teacherScore.topk} alternatives, but Trinity's teacher scoring returns only the sampled token's logprob`, "Use the k1 estimator (`opd()` default) for Trinity exports.");
  if (!adaptive && whyPlugin.length === 0) {
    if (noHorizon && noPrefix) official = { method: "OPD" };
    else if (noPrefix && horizonTree) {
      const k = recogniseF2b(horizonTree, pacingCtx);
      if (k !== undefined) official = { method: "TCOD_f2b", k };
      else whyPlugin.push("a horizon schedule other than TCOD-f2b's min(1 + floor(step/k), Hmax)");
    } else if (noHorizon && prefixTree) {
      const k = recogniseB2f(prefixTree, pacingCtx);
      if (k !== undefined) official = { method: "TCOD_b2f", k };
      else whyPlugin.push("an expert-prefix rule other than TCOD-b2f's clamp(L − 1 − floor(step/k), 0, L − 1)");
    } else whyPlugin.push("a horizon cap together with an expert prefix");
  }
  for (const ref of [planner.horizon, planner.prefix]) {
    if (ref !== undefined && typeof ref !== "number" && usesExt(plan.exprs[ref.expr]?.tree)) {
      fail("TypeScript extension", `the pacing expression '${ref.expr}' calls a TypeScript extension, which a Python plugin cannot run`, "Write the schedule in tcod itself, or train with `tcod run`.", originOf(ref));
    }
  }
  const pacingReadsFeedback = [horizonTree, prefixTree].some((t) => t !== undefined && readsFeedback(t));
  if (pacingReadsFeedback) whyPlugin.push("feedback-paced schedules (they read the run's own metrics)");
  for (const t of advantage.terms) {
    if (typeof t.coef !== "number" && plan.exprs[t.coef.expr] && readsFeedback(plan.exprs[t.coef.expr]!.tree)) {
      fail("feedback coefficient", "an advantage coefficient reads the run's metrics; the plugin paces only the horizon and the prefix by feedback", "Pace `horizon` or `prefix` with std/feedback, or train with `tcod run`.", originOf(t.coef));
    }
  }
  const needsPluginWorkflow = official === undefined || options.target === "upstream";
  if (needsPluginWorkflow && !PLUGIN_ENVS.has(env.kind)) {
    const why = official === undefined ? whyPlugin.join("; ") : "the upstream target has no TCOD workflows";
    fail("plugin workflow env", `this plan needs the generated workflow (${why}), which drives ${[...PLUGIN_ENVS].join(", ")} only, not '${env.kind}'`,
      official ? "Export with `--target tcod-fork`, whose TCOD workflows cover this env." : "Use an exactly-official TCOD schedule with `--target tcod-fork`, or train with `tcod run`.");
  }

  // ---- advantage: multi_turn_opd / on_policy_distill, or the plugin's ----
  const opdTerms = advantage.terms.filter((t) => t.kind === "opd");
  const whyAdvantagePlugin: string[] = [];
  let klCoef: number | undefined;
  for (const t of advantage.terms) {
    if (t.kind === "gkd") fail("gkd loss", "the forward-KL part needs the teacher's full next-token distributions; Trinity's teacher scoring returns sampled-token logprobs only", "Use opd(estimator: \"k1\") for Trinity exports, or train with `tcod run` on the embedded backend.", originOf(t.coef));
    if (t.kind === "sft") fail("sft advantage term", "an SFT term on expert demonstrations cannot be combined with OPD in one Trinity algorithm", "Drop the sft term, or train with `tcod run`.", originOf(t.coef));
    if (t.kind === "opd" && t.clip !== undefined) fail("opd clip", "Trinity's multi_turn_opd does not clamp its advantages", "Drop clip for Trinity exports, or train with `tcod run`.", originOf(t.coef));
    if (t.kind === "opd" && t.estimator !== "k1") fail(`opd estimator ${t.estimator}`, `the '${t.estimator}' estimator needs teacher distributions; Trinity's teacher scoring returns sampled-token logprobs only`, "Use the k1 estimator for Trinity exports.", originOf(t.coef));
    if (usesExt(typeof t.coef === "number" ? undefined : plan.exprs[t.coef.expr]?.tree)) fail("TypeScript extension", "an advantage coefficient calls a TypeScript extension", "Write the coefficient in tcod itself.", originOf(t.coef));
  }
  if (advantage.terms.some((t) => t.kind === "grpo")) whyAdvantagePlugin.push("a GRPO term (ATOD blend)");
  if (opdTerms.length === 1 && advantage.terms.length === 1) {
    klCoef = constantOverRun(opdTerms[0]!.coef, plan.exprs, steps);
    if (klCoef === undefined) whyAdvantagePlugin.push("an OPD coefficient schedule");
  } else if (opdTerms.length > 1) whyAdvantagePlugin.push("several OPD terms");
  if (turnWeights) {
    whyAdvantagePlugin.push("per-turn weights (e.g. T-DUR)");
    if (usesExt(plan.exprs[turnWeights.weight.expr]?.tree)) fail("TypeScript extension", "the turn weights call a TypeScript extension", "Write the weights in tcod itself (e.g. `tdur()`).", plan.exprs[turnWeights.weight.expr]?.origin);
  }
  if (advantage.aggregate.kind === "progressive") whyAdvantagePlugin.push("progressive turn normalisation");
  if (advantage.rows === "trajectory" && advantage.aggregate.kind === "seq_mean_token_mean") {
    fail("trajectory rows", "seq_mean_token_mean over whole-trajectory rows cannot be exported: Trinity trains on one row per turn, where this mode averages turns instead of trajectories", "Use per-turn rows (the default), or aggregate with token_mean / turn_mean.");
  }
  const needsPluginAdvantage = whyAdvantagePlugin.length > 0;

  // ---- update ----
  const lr = constantOverRun(update.optimizer.lr, plan.exprs, steps);
  if (lr === undefined) fail("learning-rate schedule", "a learning-rate schedule written as an expression cannot be exported: Trinity schedules lr only with its own lr_scheduler_type/warmup keys, and Adam's scale invariance rules out folding it into the advantages", "Use a constant `lr:`, or train with `tcod run`.", originOf(update.optimizer.lr));
  // Trinity-RFT's importance_sampling and ppo losses clamp the log-ratio at a fixed ±20
  // (trinity/algorithm/policy_loss_fn/*_policy_loss.py); test/trinity/is-vectors.test.ts checks it.
  if (update.logRatioClamp !== TRINITY_LOG_RATIO_CLAMP) fail("log-ratio clamp", `the plan clamps log π − log π_old at ±${update.logRatioClamp}, but Trinity-RFT's policy losses clamp it at a fixed ±${TRINITY_LOG_RATIO_CLAMP}`, `Export a plan with Update.logRatioClamp ${TRINITY_LOG_RATIO_CLAMP} (what \`tcod compile\` writes), or train with \`tcod run\`.`);
  // Every optimizer value the config carries, in the range tcod checks (plan/ranges.ts): plan loading
  // checks constants (TC7001), but a plan built in code, or an lr expression that is constant over
  // the run, is not checked before the config is written, and Trinity checks none of them until it
  // loads the config on the cluster.
  const optimizerValue = (key: string, r: NumRange, v: number | undefined) => {
    if (v === undefined || inRange(v, r)) return;
    fail("optimizer range", `${outOfRangeMessage(r, v)} (it would be written to ${key})`, `Choose ${r.what} ${rangeFor(r, v)}: the range tcod checks (plan/ranges.ts) and Trinity's optimizer takes; recompile the plan from its source with \`tcod compile FILE.tcod\` rather than editing the .json by hand.`, r === PLAN_RANGES.lr ? originOf(update.optimizer.lr) : undefined);
  };
  optimizerValue("algorithm.optimizer.lr", PLAN_RANGES.lr, lr);
  update.optimizer.betas.forEach((b, j) => optimizerValue(`algorithm.optimizer.betas[${j}]`, PLAN_RANGES.adamBeta, b));
  optimizerValue("algorithm.optimizer.weight_decay", PLAN_RANGES.weightDecay, update.optimizer.weightDecay);
  optimizerValue("trainer.grad_clip", PLAN_RANGES.gradClip, update.optimizer.gradClip);
  if (update.lossFn === "ppo") optimizerValue("algorithm.policy_loss_fn_args.clip_range", PLAN_RANGES.clip, update.clip);
  if (update.optimizer.eps !== VERL_ADAM_EPS) fail("optimizer eps", `Adam eps ${update.optimizer.eps} cannot be set in Trinity (verl uses ${VERL_ADAM_EPS})`, `Use eps: ${VERL_ADAM_EPS}.`);
  if (update.trainBatchTurns === 0) fail("train_batch", "the plan trains on every turn of a step at once, which Trinity cannot express: its train_batch_size is a fixed number of turns (experiences) per update", "Set `train_batch:` to a number of turns, e.g. `train_batch: 64 turns` as in TCOD's configs.");
  const evalEvery = [...new Set(evals.map((e) => e.every))];
  if (evalEvery.length > 1) fail("eval every", `evaluations run at different intervals (${evalEvery.join(", ")} steps); Trinity has one explorer.eval_interval`, "Give every eval the same `every:`.");
  if (evals.some((e) => e.from !== undefined)) fail("eval from", "an evaluation starts at a later step (`from:`); Trinity's explorer evaluates every eval_interval steps from the start", "Remove `from:` from the evals, or train with `tcod run`.");
  const atStart = [...new Set(evals.map((e) => e.atStart))];
  if (atStart.length > 1) fail("eval at_start", "some evaluations run at the start and others do not; Trinity has one explorer.eval_on_startup", "Use the same setting for every eval.");

  if (issues.length > 0) throw new TrinityExportError(issues);

  // ---- names ----
  const envName = trinityEnv!.name;
  const slug = plan.name.replace(/[^A-Za-z0-9_]/g, "_");
  const pluginWorkflowName = `tcod_${slug}_workflow`;
  const pluginAdvantageName = `tcod_${slug}_advantage`;
  const pluginOperatorName = `tcod_${slug}_step_advantage`;
  const workflow = needsPluginWorkflow ? pluginWorkflowName : `${official!.method}_${envName}_workflow`;
  const advantageFn = needsPluginAdvantage ? pluginAdvantageName : options.target === "tcod-fork" ? "multi_turn_opd" : "on_policy_distill";
  if (prefixTree && !noPrefix && semanticsOf(env.kind).expertActions === "none") {
    notes.push(`warning: b2f on ${env.kind}: its tasksets carry no expert actions (TCOD's data script writes none), so every episode replays nothing and plays as plain OPD unless the rows add "actions"`);
  }
  if (env.kind === "webshop" && env.params.page_text === "text") {
    notes.push(`warning: webshop page_text "text": tcod run shows the AgentGym server's [SEP]-joined page line, but on Trinity the env is web_agent_site's WebAgentTextEnv with observation_mode "text_rich" (the official workflows' multi-line page), so the prompts differ; the default page_text "text_rich" shows the same page text on both`);
  }
  if (needsPluginWorkflow) notes.push(`workflow ${workflow} (plugin): ${official ? "upstream Trinity has no TCOD workflows" : whyPlugin.join("; ")}`);
  else notes.push(`workflow ${workflow}: exactly the official ${official!.method} ${official!.k !== undefined ? `pacing with k = ${official!.k}` : "episode"}`);
  notes.push(needsPluginAdvantage ? `advantage ${advantageFn} (plugin): ${whyAdvantagePlugin.join("; ")}` : `advantage ${advantageFn}: c·(log p_T − log p_S) with kl_coef = ${klCoef}`);

  // ---- config ----
  const k = official?.k;
  const workflowArgs: Record<string, unknown> = { max_env_steps: planner.maxTurns };
  // workflow_args.temperature: the temperature the TCOD workflows score the teacher at
  // (`logprobs_async(..., temperature)`; default 1.0); rollout_args.temperature is the student's
  // sampling temperature. Always written, so a config that states the default gets it back.
  workflowArgs.temperature = teacherScore.temperature;
  // workflow_args.total_steps: read by the TCOD workflows, used by neither pacing formula; the
  // generated workflow reads its run length from its spec. Written as the official TCOD configs do.
  if (official?.method === "TCOD_f2b" || official?.method === "TCOD_b2f" || needsPluginWorkflow) workflowArgs.total_steps = steps;
  if (k !== undefined) Object.assign(workflowArgs, { checkpoint_strategy: "linear", checkpoint_steps: k });
  const taskset = (name: string, envId: string, temperature: number, args: Record<string, unknown>, evalTasks?: number) => {
    const e = plan.resources.envs[envId]!;
    const t: Record<string, unknown> = {
      name,
      storage_type: "file",
      // path: a JSONL file, or a directory (the official WebShop/ScienceWorld layout). Trinity reads
      // it with datasets.load_dataset(path, split=split): a directory's files are chosen by the
      // split named in their file or directory names (train.jsonl / test.jsonl; plan/taskset.ts),
      // which tcod's runtime reads the same way.
      path: e.taskFile,
      // Trinity names file splits train/test; tcod's env splits (valid_seen, hard, dev…) evaluate.
      split: trinitySplit(e.split),
    };
    if (evalTasks !== undefined) {
      // An eval taskset's total_steps is the maximum number of tasks one evaluation runs (the
      // fork's Explorer.eval reads at most that many, from a reader made afresh at each evaluation),
      // not a number of batches. Upstream 0.6.0 does not read it at evaluation (its eval reader
      // takes the whole split, trinity/buffer/reader/file_reader.py): written for the fork, and
      // so that an import gives `tasks:` back; the upstream export adds a warning note.
      t.total_steps = evalTasks;
      // The selector: sequential reads the split in file order from its start, so every evaluation
      // runs the split's first `tasks` tasks, which is what tcod's Evaluate runs. (The official
      // configs' `random` — and `shuffle` — are reseeded by the fork's Explorer.eval with the
      // explore step + the eval taskset's index, so each evaluation draws other tasks, and the
      // config's seed is not used: tcod has no such draw.) Upstream names the key data_selector
      // (task_selector is its deprecated alias); the fork knows task_selector only.
      t[options.target === "upstream" ? "data_selector" : "task_selector"] = { selector_type: "sequential" };
    }
    t.format = { prompt_key: typeof e.params.prompt_key === "string" ? e.params.prompt_key : TRINITY_ENVS[e.kind]?.promptKey ?? "prompt" };
    t.rollout_args = { temperature, logprobs: 0 };
    t.workflow_args = args;
    return t;
  };
  const explorerInput: Record<string, unknown> = {
    taskset: taskset(env.kind === "sciworld" ? "scienceworld" : env.kind, sampler.env, rolloutTemp!, workflowArgs),
  };
  if (evals.length > 0 && options.target === "upstream") {
    notes.push(`warning: upstream Trinity-RFT ${TRINITY_UPSTREAM_VERSION} evaluates every task of an eval split (its eval reader does not read total_steps); tcod evaluates the first N (${evals.map((e) => `${e.name}: ${e.tasks}`).join(", ")}), so the two agree only when N covers the split; the tcod-fork target honours N`);
  }
  if (evals.length > 0) {
    explorerInput.eval_tasksets = evals.map((e) => {
      // An eval taskset's workflow_args: its turn limit, and the training taskset's other arguments
      // as the official WebShop/ScienceWorld configs repeat them (temperature scores the teacher at
      // evaluation too; total_steps and checkpoint_* are unused there: eval episodes are full).
      const args: Record<string, unknown> = { ...workflowArgs, max_env_steps: e.maxTurns };
      return taskset(e.name, e.env, e.temperature, args, e.tasks);
    });
  }
  explorerInput.default_workflow_type = workflow;

  const algorithm: Record<string, unknown> = {
    algorithm_type: "on_policy_distill",
    repeat_times: sampler.rolloutsPerTask,
    advantage_fn: advantageFn,
    advantage_fn_args: needsPluginAdvantage ? {} : { kl_coef: klCoef },
  };
  if (update.staleness > 0) {
    algorithm.sample_strategy = "staleness_control";
    algorithm.sample_strategy_args = { max_staleness: update.staleness };
  } else algorithm.sample_strategy = "default";
  algorithm.policy_loss_fn = update.lossFn;
  algorithm.policy_loss_fn_args = update.lossFn === "ppo" ? { clip_range: update.clip } : {};
  algorithm.loss_agg_mode = advantage.aggregate.kind === "progressive" ? "token-mean" : LOSS_AGG[advantage.aggregate.kind];
  algorithm.optimizer = { lr, betas: [...update.optimizer.betas], weight_decay: update.optimizer.weightDecay };

  const inference = (seed: number) => ({ enable_prefix_caching: false, enforce_eager: true, dtype: "bfloat16", seed });
  // data_processor.experience_pipeline.operators: operators the explorer's experience pipeline runs on
  // every experience of one explore step before they enter the buffer. The plugin's step advantage
  // lives here, where whole GRPO groups and whole episodes exist (plugin/tcod_advantage.py).
  const dataProcessor = needsPluginAdvantage
    ? { experience_pipeline: { operators: [{ name: pluginOperatorName, args: {} }] } }
    : undefined;
  const config: Record<string, unknown> = {
    project: infra.project,
    // A sweep point's name (`cur@k=4 steps`) becomes a path segment in Trinity: use the slug there.
    name: plan.sweep ? slug : plan.name,
    checkpoint_root_dir: infra.checkpointRootDir,
    continue_from_checkpoint: false,
    algorithm,
    ...(dataProcessor ? { data_processor: dataProcessor } : {}),
    model: {
      model_path: student.path,
      max_prompt_tokens: infra.maxPromptTokens,
      max_response_tokens: agent.maxResponseTokens,
    },
    cluster: { node_num: infra.nodeNum, gpu_per_node: infra.gpuPerNode },
    buffer: {
      total_steps: steps,
      batch_size: sampler.tasksPerStep,
      train_batch_size: update.trainBatchTurns,
      explorer_input: explorerInput,
      trainer_input: {
        experience_buffer: { name: `${slug}_buffer`, storage_type: "queue", path: `sqlite:///${slug}_buffer.db` },
      },
    },
    explorer: {
      eval_interval: evalEvery[0] ?? steps,
      eval_on_startup: atStart[0] ?? false,
      runner_per_model: infra.runnerPerModel,
      max_timeout: infra.maxTimeout,
      rollout_model: {
        engine_num: infra.rolloutEngines, tensor_parallel_size: infra.rolloutTensorParallel,
        ...inference(plan.clock.seed), gpu_memory_utilization: infra.gpuMemoryUtilization, enable_chunked_prefill: true,
      },
      auxiliary_models: [{
        model_path: teacher.path, engine_num: infra.teacherEngines, tensor_parallel_size: infra.teacherTensorParallel,
        ...inference(plan.clock.seed), max_model_len: infra.teacherMaxModelLen,
        max_prompt_tokens: infra.teacherMaxPromptTokens, max_response_tokens: agent.maxResponseTokens,
      }],
      ...(Object.keys(infra.envVars).length > 0 ? { env_vars: { ...infra.envVars } } : {}),
    },
    synchronizer: {
      sync_method: infra.syncMethod, sync_style: infra.syncStyle, sync_interval: sync?.every ?? 1, sync_timeout: infra.syncTimeout,
    },
    trainer: {
      total_steps: steps,
      save_interval: checkpoint?.every ?? steps,
      grad_clip: update.optimizer.gradClip,
      use_dynamic_bsz: true,
      max_token_len_per_gpu: infra.maxTokenLenPerGpu,
      ulysses_sequence_parallel_size: infra.ulyssesSequenceParallel,
    },
    monitor: { monitor_type: infra.monitor },
  };

  // ---- plugin ----
  let plugin: PluginFiles | undefined;
  if (needsPluginWorkflow || needsPluginAdvantage) {
    // TurnOPD probes play tasks of the probed env's split, drawn with the run seed (plan/seeds.ts).
    const probeNode = nodeOf(plan, "Probe")?.params;
    const probeEnv = probeNode ? plan.resources.envs[probeNode.env] : undefined;
    const probeSpec = probeEnv?.taskFile ? {
      seed: plan.clock.seed,
      taskset: { path: probeEnv.taskFile, split: trinitySplit(probeEnv.split), promptKey: typeof probeEnv.params.prompt_key === "string" ? probeEnv.params.prompt_key : TRINITY_ENVS[probeEnv.kind]?.promptKey ?? "prompt" },
    } : undefined;
    const spec: PluginSpec = {
      schema: "tcod.trinity-plugin/2",
      plan: plan.name,
      target: options.target,
      exprs: referencedExprs(plan, [planner.horizon, planner.prefix, ...advantage.terms.map((t) => t.coef),
        advantage.aggregate.kind === "progressive" ? advantage.aggregate.weight : undefined,
        turnWeights ? turnWeights.weight : undefined]),
      workflow: needsPluginWorkflow ? {
        name: pluginWorkflowName,
        env: env.kind,
        pacing: {
          maxTurns: planner.maxTurns, totalSteps: steps, truncatedReward: planner.truncatedReward,
          ...(planner.horizon !== undefined ? { horizon: planner.horizon } : {}),
          ...(planner.prefix !== undefined ? { prefix: planner.prefix } : {}),
          ...(adaptive ? { adaptive } : {}),
          // Feedback rules: the workflow's named actor observes each finished step (tcod_workflow.py).
          ...(pacingReadsFeedback ? { feedback: { staleness: update.staleness, episodesPerStep: sampler.tasksPerStep * sampler.rolloutsPerTask } } : {}),
        },
        ...(probeSpec ? { probe: probeSpec } : {}),
        agent,
        semantics: semanticsOf(env.kind),
        temperature: rolloutTemp!,
        teacherTemperature: teacherScore.temperature,
      } : undefined,
      advantage: needsPluginAdvantage ? {
        name: pluginAdvantageName,
        operator: pluginOperatorName,
        // The plugin's grpo term carries its normalisation (the plan's GroupAdvantage node).
        terms: advantage.terms.map((t) => (t.kind === "grpo" ? { ...t, normalize: grpo?.normalize ?? GRPO_DEFAULTS.normalize, eps: grpo?.eps ?? GRPO_DEFAULTS.eps } : t)),
        aggregate: advantage.aggregate,
        ...(turnWeights ? { turnWeights: turnWeights.weight } : {}),
        maxTurns: planner.maxTurns,
        totalSteps: steps,
        teacherKey: "teacher_logprobs",
      } : undefined,
    };
    plugin = generatePlugin(spec);
  }

  const pluginDir = options.pluginDir ?? "plugin";
  const header = [
    `Trinity-RFT config generated by \`tcod export trinity\` from plan '${plan.name}' (target: ${options.target}${options.target === "upstream" ? `, Trinity-RFT ${TRINITY_UPSTREAM_VERSION}` : ", the official TCOD fork"}).`,
    `Run: trinity run --config THIS_FILE${plugin ? ` --plugin-dir ${pluginDir}` : ""}`,
    ...notes,
  ].join("\n");
  // version 1.1: a string Trinity's loader (PyYAML, YAML 1.1) would read as something else (`off`, `010`,
  // `1:30`, `1_000`) is quoted; YAML 1.2 leaves it plain. pyyamlQuoting: so is what PyYAML reads
  // otherwise still (`=`, `1e5`, a tab), which the yaml package's YAML 1.1 writes plain. escapeTree: a
  // string holding `${` (a path `${HOME}/x`) is written `\${`, so OmegaConf reads it back literally
  // rather than resolve it; `config` keeps the strings as Trinity reads them.
  const yamlText = stringify(escapeTree(config), { lineWidth: 0, version: "1.1", customTags: pyyamlQuoting }).replace(/^/, header.split("\n").map((l) => `# ${l}`).join("\n") + "\n");
  return { config, yaml: yamlText, ...(plugin ? { plugin } : {}), workflow, advantageFn, notes };
}

/** TCOD's own agent format for the env (stdlib `tcod_format`; ALFWorld: `alfworld_format`; WebShop: `webshop_format`; ScienceWorld:
 *  `scienceworld_format`, the official prompt with the compact action list): `<action>` tags after `<think>`, two history turns. */
function isTcodAgent(a: AgentFormat, envKind: string): boolean {
  return /tcod/i.test(a.name) && a.parser.kind === "tags" && a.parser.tag === "action" && a.historyWindow === 2 && a.memory.kind === "accumulate"
    && usesCompactActions(a) === (semanticsOf(envKind).admissible === "templates_and_objects")
    && usesAdmissibleLines(a) === (semanticsOf(envKind).admissible === "lines")
    && usesAvailableActions(a) === (semanticsOf(envKind).admissible === "unquoted_lines");
}

/** The official TCOD workflows' `parse_action` (their utils.py): the first `<action>`, and the empty
 *  action "" when a reply has none (runtime/agent-format.ts parseAction, `action_pick: "first"`,
 *  `on_invalid: "empty"`). Any other parsing needs the generated workflow. */
function parsesAsOfficial(a: AgentFormat): boolean {
  return a.actionPick === "first" && a.onInvalid.kind === "empty";
}

function usesExt(tree: ExprTree | undefined): boolean {
  if (!tree || tree.op === "const" || tree.op === "var") return false;
  return tree.op === "ext" || tree.args.some(usesExt);
}

function isConstantAtLeast(tree: ExprTree, hMax: number, steps: number): boolean {
  try {
    for (let t = 1; t <= steps; t++) if (!(evalScalar(tree, { step: t, total_steps: steps }) >= hMax)) return false;
    return true;
  } catch { return false; }
}
function isConstantZero(tree: ExprTree, steps: number, hMax: number): boolean {
  try {
    for (let t = 1; t <= steps; t++) {
      for (let len = 0; len <= hMax; len++) {
        if (evalScalar(tree, { step: t, total_steps: steps, "episode.expert_length": len, "episode.max_turns": hMax }) > 0) return false;
      }
    }
    return true;
  } catch { return false; }
}

/** The expressions a plugin needs, with the expressions they are defined from (none today: trees are self-contained). */
function referencedExprs(plan: Plan, refs: (ValueRef | { expr: string } | undefined)[]): Record<string, ExprDef> {
  const out: Record<string, ExprDef> = {};
  for (const r of refs) {
    if (r === undefined || typeof r === "number") continue;
    const def = plan.exprs[r.expr];
    if (def) out[r.expr] = def;
  }
  return out;
}
