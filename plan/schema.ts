/**
 * The plan: schema `tcod.plan/2`, the one contract between compiler and runtime.
 * The compiler validates a plan before writing it; the runtime validates it on load. Validation is
 * the zod schema below, then the graph check (plan/graph.ts): edges against the typed ports of
 * plan/nodes.ts. A `tcod.plan/1` plan is converted on load (plan/convert.ts).
 */
import { z } from "zod";
import { ACTION_PICKS, DIALECTS, ESTIMATORS, LOSS_FNS, NOISE_SOURCES, ROW_SHAPES } from "./enums.js";
import type { AggregateKind, BackendKind, DepthRule, LossKind, MemoryKind, OnInvalidKind, ParserKind } from "./enums.js";
import { planExpects, planHint, UserError, type UserIssue } from "./errors.js";
import { ExprDefSchema, ValueRefSchema } from "./expr-schema.js";
import { PLAN_SCHEMA_ID, PLAN_SCHEMA_V1 } from "./version.js";
import { SIZE_LIMITS } from "./defaults.js";
import { checkGraph } from "./graph.js";
import { PLAN_RANGES, planRangeIssues, RANGED_FIELDS, type NumRange, type RangedField } from "./ranges.js";
import { planExprIssues } from "./expr-check.js";
import { convertPlanV1, PlanVersionError } from "./convert.js";

export { PLAN_SCHEMA_ID };

// One-shot validation (a plan is checked once on write, once on load): zod's JIT does not pay off.
z.config({ jitless: true });


const Int = z.number().int();
const PosInt = z.number().int().min(1);
/** A count of episodes or tasks past SIZE_LIMITS (plan/defaults.ts): refused before anything is allocated. */
const EPISODES_LIMIT = `must be at most ${SIZE_LIMITS.episodesPerStep} (tcod's limit of episodes a step)`;
const Json: z.ZodType<unknown> = z.lazy(() =>
  z.union([z.string(), z.number(), z.boolean(), z.null(), z.array(Json), z.record(z.string(), Json)]),
);

// ---- resources ---------------------------------------------------------------------------------

export const BackendSpecSchema = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("embedded"),
    /** Oracle teacher: probability mass spread uniformly over non-optimal admissible actions. */
    smoothing: z.number().min(0).max(1),
    /** Log-linear student: number of hashed context features. */
    features: PosInt,
    /** Fixed log-odds bonus for tokens that continue an action listed in the prompt (0 = none). */
    candidateLogOdds: z.number().min(0).optional(),
  }).strict(),
  z.object({
    kind: z.literal("openai"),
    url: z.string(),
    dialect: z.enum(DIALECTS),
    apiKeyEnv: z.string().optional(),
    concurrency: PosInt,
    timeoutMs: PosInt,
  }).strict(),
  z.object({
    kind: z.literal("worker"),
    url: z.string(),
    /** Start `python -m tcod_worker` for the run and stop it afterwards. */
    start: z.boolean(),
    tokenEnv: z.string().optional(),
    concurrency: PosInt,
    timeoutMs: PosInt,
  }).strict(),
]);
export type BackendSpec = z.infer<typeof BackendSpecSchema>;

export const ModelSpecSchema = z.object({
  path: z.string(),
  backend: BackendSpecSchema,
  tokenizer: z.string().optional(),
  lora: z.string().optional(),
}).strict();
export type ModelSpec = z.infer<typeof ModelSpecSchema>;

export const EnvSpecSchema = z.object({
  /** texthouse | scienceworld | textworld_express | alfworld | webshop | sciworld | textcraft */
  kind: z.string(),
  split: z.string(),
  /** Hmax: the env's turn limit for full episodes and evaluation. */
  maxTurns: PosInt,
  /** AgentGym-style HTTP server, where the env is served. */
  server: z.string().optional(),
  /** Trinity-style JSONL taskset (with `actions` for b2f), where the env reads tasks from a file. */
  taskFile: z.string().optional(),
  /** Parallel env instances. */
  pool: PosInt,
  /** Environment-specific settings (task names, game type…), passed through. */
  params: z.record(z.string(), Json),
}).strict();
export type EnvSpec = z.infer<typeof EnvSpecSchema>;

export const AgentFormatSchema = z.object({
  name: z.string(),
  system: z.string(),
  /** Placeholders: {task} {step} {history} {observation} {admissible} {history_length}. */
  template: z.string(),
  /** Used while fewer than `historyWindow` earlier turns exist (TCOD's *_TEMPLATE_NO_HIS). */
  templateNoHistory: z.string(),
  /** How many earlier observation/action pairs the template shows (TCOD: 2). */
  historyWindow: Int.min(0),
  /** One history entry, with {n} {observation} {action}. */
  historyEntry: z.string(),
  /** Chat memory across turns: every turn accumulates (TCOD), or the last `turns` turns only. */
  memory: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("accumulate") }).strict(),
    z.object({ kind: z.literal("window"), turns: Int.min(0) }).strict(),
  ]),
  parser: z.discriminatedUnion("kind", [
    /** `<think>…</think><action>…</action>`: the text between the action tags. */
    z.object({ kind: z.literal("tags"), tag: z.string(), think: z.boolean() }).strict(),
    /** AgentGym ReAct: the text after the last `Action:`. */
    z.object({ kind: z.literal("react"), prefix: z.string() }).strict(),
    /** The whole response, trimmed. */
    z.object({ kind: z.literal("raw") }).strict(),
  ]),
  /** Which action of a reply naming several the parser takes (`agent_format(action_pick: …)`):
   *  "first" is the official TCOD workflows' `parse_action` (the text after the first `<action>`, up
   *  to the next `</action>` or `<action>` or the end of the reply); absent = "last", tcod's default
   *  (the last complete pair; a react parser: the last prefix). runtime/agent-format.ts parseAction. */
  actionPick: z.enum(ACTION_PICKS).optional(),
  maxResponseTokens: PosInt,
  thinking: z.boolean(),
  /** feedback: reply `text` as the observation without stepping the env (AgentGym);
   *  pass: send the raw response to the env; end: end the episode with reward 0;
   *  empty: send the empty action "" (the official TCOD workflows: `parse_action` returns ""). */
  onInvalid: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("feedback"), text: z.string() }).strict(),
    z.object({ kind: z.literal("pass") }).strict(),
    z.object({ kind: z.literal("end") }).strict(),
    z.object({ kind: z.literal("empty") }).strict(),
  ]),
}).strict();
export type AgentFormat = z.infer<typeof AgentFormatSchema>;

// ---- graph nodes -------------------------------------------------------------------------------

const Ref = ValueRefSchema;

export const AggregateSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("token_mean") }).strict(),
  z.object({ kind: z.literal("seq_mean_token_mean") }).strict(),
  z.object({ kind: z.literal("turn_mean") }).strict(),
  /** w·turn_mean + (1 − w)·token_mean, w a step-level value. */
  z.object({ kind: z.literal("progressive"), weight: Ref }).strict(),
]);
export type Aggregate = z.infer<typeof AggregateSchema>;

export const AdvantageTermSchema = z.discriminatedUnion("kind", [
  /** c·(log p_T − log p_S) on sampled tokens (k1); `topk`/`full` use richer teacher output. */
  /** `clip`: each k1 advantage clamped to [−clip, clip] (rllm's distill estimator); absent: none (Trinity). */
  z.object({ kind: z.literal("opd"), coef: Ref, estimator: z.enum(ESTIMATORS), clip: z.number().positive().optional() }).strict(),
  /** Group-normalised episode reward broadcast to the episode's tokens. */
  /** Its advantages come from the GroupAdvantage node wired to the Advantage node's `grpo` input. */
  z.object({ kind: z.literal("grpo"), coef: Ref }).strict(),
  /** Cross-entropy on expert demonstrations (a Demonstrations node wired to TurnStats `demos`). */
  z.object({ kind: z.literal("sft"), coef: Ref }).strict(),
  /**
   * Generalized knowledge distillation in its forward/reverse mixture form: at every student token,
   * c·((1 − β)·KL(p_S ‖ p_T) + β·KL(p_T ‖ p_S)) over full next-token distributions (β step-level).
   */
  z.object({ kind: z.literal("gkd"), coef: Ref, beta: Ref }).strict(),
]);
export type AdvantageTerm = z.infer<typeof AdvantageTermSchema>;

export const DepthRuleSchema = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("coverage"), keep: z.number().min(0).max(1) }).strict(),
  z.object({ kind: z.literal("divergence"), ratio: z.number().positive() }).strict(),
]);

/** TurnOPD adaptive depth as a whole (the Probe and DepthRule nodes together): `adaptiveDepthOf(plan)`. */
export interface AdaptiveDepth {
  probeEvery: number;
  probeEpisodes: number;
  rule: z.infer<typeof DepthRuleSchema>;
  initial: number;
  min: number;
}

export const NodeSchema = z.discriminatedUnion("kind", [
  z.object({ id: z.string(), kind: z.literal("TaskSampler"), params: z.object({
    env: z.string(), tasksPerStep: PosInt.max(SIZE_LIMITS.episodesPerStep, EPISODES_LIMIT),
    /** 0: no student episodes (a loss of sft terms alone: the step's tasks feed the Demonstrations node only). */
    rolloutsPerTask: z.number().int().min(0).max(SIZE_LIMITS.episodesPerStep, EPISODES_LIMIT), seed: Int,
  }).strict().refine((p) => !(p.tasksPerStep * p.rolloutsPerTask > SIZE_LIMITS.episodesPerStep && p.tasksPerStep <= SIZE_LIMITS.episodesPerStep && p.rolloutsPerTask <= SIZE_LIMITS.episodesPerStep), {
    // Checked on load, before anything is allocated: a step of 10^9 episodes would hang or abort.
    message: `tasksPerStep × rolloutsPerTask must be at most ${SIZE_LIMITS.episodesPerStep} episodes a step`, path: ["rolloutsPerTask"],
  }) }).strict(),
  z.object({ id: z.string(), kind: z.literal("EpisodePlanner"), params: z.object({
    maxTurns: PosInt,
    /** Turn cap (TCOD-f2b); absent = maxTurns. Evaluation is never capped. */
    horizon: Ref.optional(),
    /** Expert-prefix length to replay (TCOD-b2f); the student gets maxTurns − prefix turns. */
    prefix: Ref.optional(),
    /** Reward of a training episode cut by the horizon before the env is done (TCOD: 0). */
    truncatedReward: z.number(),
  }).strict() }).strict(),
  z.object({ id: z.string(), kind: z.literal("Probe"), params: z.object({
    /** Env whose split the probe tasks come from (a seeded permutation per probe step). */
    env: z.string(),
    every: PosInt,
    episodes: PosInt.max(SIZE_LIMITS.episodesPerStep, EPISODES_LIMIT),
    /** Probe episodes run the full horizon. */
    maxTurns: PosInt,
    truncatedReward: z.number(),
  }).strict() }).strict(),
  z.object({ id: z.string(), kind: z.literal("DepthRule"), params: z.object({
    rule: DepthRuleSchema,
    /** Cap before the first probe. */
    initial: PosInt,
    min: PosInt,
    maxTurns: PosInt,
  }).strict() }).strict(),
  z.object({ id: z.string(), kind: z.literal("Demonstrations"), params: z.object({
    env: z.string(), agent: z.string(), maxTurns: PosInt,
    /**
     * DART noise (std/loss `sft(noise:)`): each demonstration turn executes a uniformly drawn
     * admissible command with this probability instead of the expert's, and is then no training
     * target; the expert acts from the state that leaves. Absent = 0 (the expert's clean path).
     */
    noise: z.number().min(0).lt(1).optional(),
    /**
     * Where a noise command comes from (std/loss `sft(noise_from:)`): "stale" runs a command the env
     * offered at an earlier turn and does not offer now (inadmissible; no model call); "guess" runs a
     * command naming what the observation does not show (the env's guessedActions: texthouse's `take`
     * of a goal-type object the receptacle at hand does not hold; no model call); "student" runs
     * the student's own sampled reply (temperature 1), inadmissible ones included, so the
     * demonstrations visit the states the student's mistakes lead to. Absent = "admissible" (DART's
     * uniform draw).
     */
    noiseFrom: z.enum(NOISE_SOURCES).optional(),
  }).strict() }).strict(),
  z.object({ id: z.string(), kind: z.literal("Rollout"), params: z.object({
    student: z.string(), env: z.string(), agent: z.string(), temperature: Ref,
  }).strict() }).strict(),
  z.object({ id: z.string(), kind: z.literal("TeacherScore"), params: z.object({
    teacher: z.string(), temperature: z.number(),
    /** Top-k alternatives the teacher (and the student) report per token; 0 = none (the topk estimator needs ≥ 1). */
    topk: Int.min(0),
    /** Keep the teacher's full next-token distributions (the opd "full" estimator). */
    distributions: z.boolean(),
  }).strict() }).strict(),
  z.object({ id: z.string(), kind: z.literal("TurnStats"), params: z.object({}).strict() }).strict(),
  z.object({ id: z.string(), kind: z.literal("TurnWeights"), params: z.object({
    /** A turn-level expression; its values multiply each turn's advantages. */
    weight: z.object({ expr: z.string() }).strict(),
  }).strict() }).strict(),
  z.object({ id: z.string(), kind: z.literal("GroupAdvantage"), params: z.object({
    /** Divide by the group's reward std (+ eps), or only centre on the group mean. */
    normalize: z.boolean(), eps: z.number(),
  }).strict() }).strict(),
  z.object({ id: z.string(), kind: z.literal("Advantage"), params: z.object({
    terms: z.array(AdvantageTermSchema).min(1), aggregate: AggregateSchema,
    /** Experience rows: one per turn (Trinity, default) or one per trajectory with env tokens masked (tinker). */
    rows: z.enum(ROW_SHAPES).optional(),
  }).strict() }).strict(),
  z.object({ id: z.string(), kind: z.literal("Update"), params: z.object({
    optimizer: z.object({
      kind: z.literal("adamw"), lr: Ref, betas: z.tuple([z.number(), z.number()]), eps: z.number(),
      weightDecay: z.number(), gradClip: z.number(),
    }).strict(),
    lossFn: z.enum(LOSS_FNS),
    clip: z.number(),
    /** importance_sampling: the log-ratio log π − log π_old is clamped to [−c, c] before exp (runtime/signals/losses.ts). */
    logRatioClamp: z.number().positive(),
    /** Turns per optimiser update (Trinity train_batch_size); 0 = every turn of the step at once. */
    trainBatchTurns: Int.min(0),
    /** Drop samples whose policy version is older than step − staleness (0 = synchronous). */
    staleness: Int.min(0),
    /**
     * Where log p_S of the sampled tokens comes from for the advantage and the PPO/IS ratio: the
     * sampler's log-probs from the rollout, or the trainer's weights recomputing them before the
     * update (Trinity's default). Absent: "trainer" for served students, "sampler" for embedded.
     */
    oldLogprobs: z.enum(["trainer", "sampler"]).optional(),
  }).strict() }).strict(),
  z.object({ id: z.string(), kind: z.literal("WeightSync"), params: z.object({ every: PosInt }).strict() }).strict(),
  z.object({ id: z.string(), kind: z.literal("Evaluate"), params: z.object({
    name: z.string(), env: z.string(), every: PosInt, tasks: PosInt.max(SIZE_LIMITS.episodesPerStep, EPISODES_LIMIT), temperature: z.number(), maxTurns: PosInt,
    atStart: z.boolean(),
    /** It runs only at the multiples of `every` that are ≥ from (and still at the last step, and at 0 with atStart); absent: 0. */
    from: PosInt.optional(),
    /** The model and agent format it plays with (the Rollout node's). */
    student: z.string(), agent: z.string(),
  }).strict() }).strict(),
  z.object({ id: z.string(), kind: z.literal("Checkpoint"), params: z.object({ every: PosInt }).strict() }).strict(),
]);
export type PlanNode = z.infer<typeof NodeSchema>;
export type NodeKind = PlanNode["kind"];
export type NodeOf<K extends NodeKind> = Extract<PlanNode, { kind: K }>;

/**
 * Characters a plan name may not hold: C0 controls (tab and line breaks too), DEL, C1 controls, and the
 * bidirectional-text controls a source file may not hold either (grammar/source-chars.ts). A name is
 * printed on every line about its run and becomes its folder's name.
 */
const NAME_REFUSED_CHARS = "\\u0000-\\u001F\\u007F-\\u009F\\u202A-\\u202E\\u2066-\\u2069";
const NAME_REFUSED = new RegExp(`[${NAME_REFUSED_CHARS}]`);
/**
 * planNameIssue's rule as one pattern, for the schema and so for docs/plan.schema.json: spaces that
 * are not controls, then a character that is neither a space nor a control, then no control. The two
 * classes are disjoint, so a match is found in one pass (no backtracking over a long name).
 */
export const PLAN_NAME_PATTERN = new RegExp(`^[^\\S${NAME_REFUSED_CHARS}]*[^\\s${NAME_REFUSED_CHARS}][^${NAME_REFUSED_CHARS}]*$`);

/** `node.port` → `node.port`. `clock`: the value crosses to the next step (the only way a cycle may close). */
export const EdgeSchema = z.object({
  from: z.string().regex(/^[\w-]+\.[\w]+$/), to: z.string().regex(/^[\w-]+\.[\w]+$/),
  clock: z.boolean().optional(),
}).strict();
export type PlanEdge = z.infer<typeof EdgeSchema>;

export const PlanSchema = z.object({
  schema: z.literal(PLAN_SCHEMA_ID),
  /** Not empty nor only spaces, without control characters (planNameIssue says which). */
  name: z.string().regex(PLAN_NAME_PATTERN),
  /** The sweep point this plan was expanded from, if any. */
  sweep: z.record(z.string(), z.string()).optional(),
  sources: z.array(z.object({ path: z.string(), sha256: z.string().regex(/^[0-9a-f]{64}$/) }).strict()),
  /** One step = one explore batch; `step` runs 1..steps (TCOD's batch_id). */
  clock: z.object({ steps: PosInt, seed: Int }).strict(),
  resources: z.object({
    models: z.record(z.string(), ModelSpecSchema),
    envs: z.record(z.string(), EnvSpecSchema),
    agents: z.record(z.string(), AgentFormatSchema),
  }).strict(),
  exprs: z.record(z.string(), ExprDefSchema),
  graph: z.object({ nodes: z.array(NodeSchema), edges: z.array(EdgeSchema) }).strict(),
  /** TypeScript extensions bundled beside the plan: `bundle` is a file name in the plan's folder (no
   *  folders, no `..`), so a plan cannot make `tcod run` write or import a file anywhere else; it is
   *  FILE.plan.bundle.mjs for the plan file FILE.plan.json (bin/plan-file-names.ts: every such FILE fits). */
  extensions: z.object({
    bundle: z.string().regex(/^[A-Za-z0-9_@=,+-][A-Za-z0-9_.@=,+-]*\.plan\.bundle\.mjs$/, "must be a file name beside the plan (NAME.plan.bundle.mjs, no folders)"),
    functions: z.record(z.string(), z.object({ params: z.array(z.string()), returns: z.string(), level: z.string() }).strict()),
  }).strict().optional(),
}).strict();
export type Plan = z.infer<typeof PlanSchema>;

/** A plan that does not validate (TC7001); `issues` name the JSON path of each problem. */
export class PlanError extends UserError {
  readonly code = "TC7001";
  constructor(message: string, readonly issues: { path: string; message: string; hint?: string }[], readonly file?: string) { super(message); }
  override problems(): UserIssue[] {
    if (!this.issues.length) return super.problems();
    return this.issues.map((i) => ({ message: i.message, ...(i.hint ? { hint: i.hint } : {}), where: { file: this.file ?? "plan", path: i.path } }));
  }
}

/**
 * Validates unknown data as a plan: the schema, then the graph (plan/graph.ts), then its expression
 * references and operator arities (plan/expr-check.ts), then the ranges of
 * its constants (plan/ranges.ts). A tcod.plan/1 plan
 * is converted first (plan/convert.ts). Errors name the JSON path of each problem, and graph errors
 * the edge or node.
 */
export function parsePlan(data: unknown): Plan {
  let input = data;
  if (input && typeof input === "object" && (input as { schema?: unknown }).schema === PLAN_SCHEMA_V1) {
    try {
      input = convertPlanV1(input as Record<string, unknown>);
    } catch (e) {
      if (e instanceof PlanVersionError) throw new PlanError(e.message, [{ path: "$.schema", message: e.message, hint: planHint("version") }]);
      throw e;
    }
  }
  let r: ReturnType<typeof PlanSchema.safeParse>;
  try {
    r = PlanSchema.safeParse(input);
  } catch (e) {
    // zod recurses per level of nesting; a hand-edited plan nested thousands deep (an expression
    // tree) runs the stack out. Name where, instead of an internal error.
    if (!(e instanceof RangeError)) throw e;
    const deep = deepestPath(input);
    const issue = { path: deep.path, message: `the plan is nested ${deep.depth.toLocaleString("en-US")} levels deep here, deeper than tcod can read`, hint: planHint("tooDeep") };
    throw new PlanError(`invalid plan (${PLAN_SCHEMA_ID}): ${issue.message} (at ${issue.path})`, [issue]);
  }
  if (!r.success) {
    // A name the pattern refuses is said as planNameIssue says it (empty, only spaces, which control character).
    const name = (input as { name?: unknown }).name;
    const issues = r.error.issues.map((i) => (i.code === "invalid_format" && i.path.length === 1 && i.path[0] === "name" && typeof name === "string" && planNameIssue(name)) || schemaIssue(i));
    const v = input && typeof input === "object" ? (input as { schema?: unknown }).schema : undefined;
    const hint = typeof v === "string" && v !== PLAN_SCHEMA_ID ? ` (this plan says "${v}"; recompile it from its source with \`tcod compile FILE.tcod\`)` : "";
    throw new PlanError(`invalid plan (${PLAN_SCHEMA_ID})${hint}:\n` + issues.map((i) => `  at ${i.path}: ${i.message}`).join("\n"), issues);
  }
  const graphIssues = checkGraph(r.data).map((i) => ({ ...i, hint: planHint("graph") }));
  if (graphIssues.length > 0) {
    throw new PlanError(`invalid plan graph:\n` + graphIssues.map((i) => `  at ${i.path}: ${i.message}`).join("\n"), graphIssues);
  }
  // Expression references and operator arities (plan/expr-check.ts): what the compiler always writes right.
  const exprIssues = planExprIssues(r.data).map((i) => ({ ...i, hint: planHint("exprs") }));
  if (exprIssues.length > 0) {
    throw new PlanError(`invalid plan expressions:\n` + exprIssues.map((i) => `  at ${i.path}: ${i.message}`).join("\n"), exprIssues);
  }
  // The ranges the compiler enforces (plan/ranges.ts): a plan .json may skip the compiler.
  const rangeIssues = planRangeIssues(r.data);
  if (rangeIssues.length > 0) {
    throw new PlanError(`invalid plan (${PLAN_SCHEMA_ID}): values out of range:\n` + rangeIssues.map((i) => `  at ${i.path}: ${i.message}`).join("\n"), rangeIssues);
  }
  return r.data;
}


/**
 * The plan's name, as a plan .json may hold it (`--set name=…` included): not empty (nor only spaces)
 * and without control characters. The compiler writes a curriculum's identifier, and for a sweep
 * point `@` and its settings as written in the source (which holds no control character); a plan
 * .json may be named more freely (`texthouse-f2b-small`), as its folder name is made safe apart
 * (compiler/index.ts safeFileName: path separators and a first `-` or `.` become `_`).
 */
export function planNameIssue(name: string): { path: string; message: string; hint: string } | undefined {
  const at = { path: "$.name", hint: planHint("name") };
  if (name.trim() === "") return { ...at, message: name === "" ? "the plan's name is empty" : "the plan's name is only spaces" };
  const bad = NAME_REFUSED.exec(name);
  if (bad) {
    const u = `U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")}`;
    return { ...at, message: `the plan's name ${JSON.stringify(name)} holds a control character (${u} at character ${bad.index + 1})` };
  }
  return undefined;
}

/** A zod issue as a TC7001 problem: its JSON path, zod's message, and a hint of what the field takes. */
function schemaIssue(i: z.core.$ZodIssue): { path: string; message: string; hint: string } {
  const path = formatPath(i.path);
  if (i.code === "unrecognized_keys") return { path, message: i.message, hint: planHint("noSuchField", { keys: i.keys.map((k) => JSON.stringify(k)).join(", ") }) };
  const expected = expectedOf(i);
  return { path, message: i.message, hint: expected ? planHint("takes", { expected }) : planHint("schemaOther") };
}

/** What the field of a zod issue takes, in PLAN_EXPECTS's words; undefined where the issue does not say. */
function expectedOf(i: z.core.$ZodIssue): string | undefined {
  switch (i.code) {
    case "invalid_type": return typeName(i.expected);
    case "invalid_value": return planExpects("oneOf", { values: i.values.map((v) => JSON.stringify(v)).join(", ") });
    case "too_small": case "too_big": {
      const small = i.code === "too_small";
      const bound = Number(small ? i.minimum : i.maximum);
      if (i.origin === "array" || i.origin === "set" || i.origin === "string") {
        const count = `${small ? "at least" : "at most"} ${bound}`;
        return i.origin === "string" ? planExpects("characters", { count }) : planExpects("items", { count });
      }
      const args = { what: typeName("number"), bound };
      return small ? (i.inclusive ? planExpects("atLeast", args) : planExpects("above", args)) : (i.inclusive ? planExpects("atMost", args) : planExpects("below", args));
    }
    case "invalid_format": return i.format === "regex" && i.pattern ? planExpects("pattern", { pattern: i.pattern }) : undefined;
    case "not_multiple_of": return planExpects("multipleOf", { divisor: Number(i.divisor) });
    case "invalid_union": {
      // A discriminated union names its options; a plain one (a number or {"expr": NAME}) is what
      // its branches expected of the value itself.
      if ("options" in i && i.options !== undefined) return planExpects("oneOf", { values: i.options.map((v) => JSON.stringify(v)).join(", ") });
      const branches = [...new Set(i.errors.map(branchExpects).filter((x): x is string => x !== undefined))];
      return branches.length ? branches.reduce((first, second) => planExpects("either", { first, second })) : undefined;
    }
    default: return undefined;
  }
}

/**
 * One branch of a plain union in words: the type it expected of the value, or, where the value had
 * its type (an object) but not its fields, the fields it expected ("an object with "expr" (a string)").
 */
function branchExpects(issues: z.core.$ZodIssue[]): string | undefined {
  const own = issues.find((x) => x.path.length === 0 && x.code === "invalid_type");
  if (own) return expectedOf(own);
  const fields = issues.filter((x) => x.path.length === 1).map((x) => {
    const e = expectedOf(x);
    return e === undefined ? undefined : planExpects("field", { key: JSON.stringify(String(x.path[0])), expected: e });
  }).filter((x): x is string => x !== undefined);
  return fields.length ? planExpects("objectWith", { fields: fields.join(", ") }) : undefined;
}

function typeName(t: string): string {
  switch (t) {
    case "number": case "int": case "string": case "boolean": case "object": case "array": case "record": case "null": return planExpects(t);
    default: return planExpects("other", { type: t });
  }
}

/**
 * The deepest nesting of a plan's JSON a reader that recurses over the whole plan (tcod compare's
 * configuration of a run) takes. A compiled plan nests about 410 levels at most (expressions hold
 * at most compiler/lower.ts PLAN_EXPR_DEPTH = 200 operators, two levels each); one deeper was
 * written or edited by hand.
 */
export const MAX_PLAN_JSON_DEPTH = 1_000;

/** The deepest point of JSON data (without recursion): its depth, and its path cut after 12 steps ("…"). */
export function deepestPath(data: unknown): { depth: number; path: string } {
  let best: { depth: number; path: PropertyKey[] } = { depth: 0, path: [] };
  // Paths are kept up to 12 steps (a deep chain's path would be as long as the chain).
  const stack: [unknown, number, PropertyKey[]][] = [[data, 0, []]];
  while (stack.length > 0) {
    const [v, depth, path] = stack.pop()!;
    if (depth > best.depth) best = { depth, path };
    if (v === null || typeof v !== "object") continue;
    const child = (k: PropertyKey): PropertyKey[] => (path.length < 12 ? [...path, k] : path);
    if (Array.isArray(v)) v.forEach((x, i) => stack.push([x, depth + 1, child(i)]));
    else for (const [k, x] of Object.entries(v)) stack.push([x, depth + 1, child(k)]);
  }
  return { depth: best.depth, path: formatPath(best.path) + (best.depth > 12 ? "…" : "") };
}

function formatPath(path: readonly PropertyKey[]): string {
  let s = "$";
  for (const p of path) s += typeof p === "number" ? `[${p}]` : `.${String(p)}`;
  return s;
}

// The discriminated unions above spell their kinds as literals (zod needs them); these lines fail to
// compile when a union and its list in enums.ts disagree.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const unionsMatchEnums: [
  Same<BackendSpec["kind"], BackendKind>, Same<AdvantageTerm["kind"], LossKind>, Same<Aggregate["kind"], AggregateKind>,
  Same<AdaptiveDepth["rule"]["kind"], DepthRule>, Same<AgentFormat["memory"]["kind"], MemoryKind>,
  Same<AgentFormat["parser"]["kind"], ParserKind>, Same<AgentFormat["onInvalid"]["kind"], OnInvalidKind>,
] = [true, true, true, true, true, true, true];
void unionsMatchEnums;

/**
 * The published JSON Schema of plans (docs/plan.schema.json, `npm run docs`): the zod schema's, with
 * the ranges of plan/ranges.ts RANGED_FIELDS — which parsePlan checks after the schema, to word them
 * as the compiler does — written in as bounds on their fields' numbers.
 */
export function planJsonSchema(): unknown {
  const schema = z.toJSONSchema(PlanSchema, { unrepresentable: "any" }) as JsonSchemaNode;
  const items = schema.properties?.["graph"]?.properties?.["nodes"]?.items;
  const nodes = (items && items.oneOf) || [];
  for (const f of RANGED_FIELDS) {
    const node = nodes.find((n) => n.properties?.["kind"]?.const === f.node)?.properties?.["params"];
    const leaves = node ? schemaAt(node, f.path) : [];
    // A path the schema does not have is a table that has drifted from the schema: `npm run docs` fails.
    if (leaves.length === 0) throw new Error(`plan/ranges.ts RANGED_FIELDS: ${f.node}.${f.path.join(".")} names no number of the plan schema`);
    for (const leaf of leaves) bound(leaf, PLAN_RANGES[f.range]);
  }
  return schema;
}

/** The part of a JSON Schema planJsonSchema walks. */
interface JsonSchemaNode {
  type?: string; const?: unknown; properties?: Record<string, JsonSchemaNode>; items?: JsonSchemaNode | false;
  prefixItems?: JsonSchemaNode[]; oneOf?: JsonSchemaNode[]; anyOf?: JsonSchemaNode[];
  minimum?: number; exclusiveMinimum?: number; maximum?: number; exclusiveMaximum?: number;
}

/** The number schemas at a RangedField's path (a value ref's number branch included). */
function schemaAt(s: JsonSchemaNode, path: RangedField["path"]): JsonSchemaNode[] {
  if (path.length === 0) return [...(s.anyOf ?? s.oneOf ?? [s])].filter((x) => x.type === "number" || x.type === "integer");
  const [step, ...rest] = path as [string, ...string[]];
  const branches = s.oneOf ?? s.anyOf ?? [s];
  if (step === "[]") return branches.flatMap((b) => [...(b.items ? [b.items] : []), ...(b.prefixItems ?? [])]).flatMap((x) => schemaAt(x, rest));
  if (step.startsWith("kind=")) return branches.filter((b) => b.properties?.["kind"]?.const === step.slice(5)).flatMap((b) => schemaAt(b, rest));
  return branches.flatMap((b) => (b.properties?.[step] ? schemaAt(b.properties[step]!, rest) : []));
}

/** A range as JSON Schema bounds (an infinite bound is none). */
function bound(s: JsonSchemaNode, r: NumRange): void {
  if (r.loOpen) s.exclusiveMinimum = Math.max(r.lo, s.exclusiveMinimum ?? -Infinity); else s.minimum = Math.max(r.lo, s.minimum ?? -Infinity);
  if (Number.isFinite(r.hi)) {
    if (r.hiOpen) s.exclusiveMaximum = Math.min(r.hi, s.exclusiveMaximum ?? Infinity); else s.maximum = Math.min(r.hi, s.maximum ?? Infinity);
  }
}

export { adaptiveDepthOf, nodeOf, nodesOf, stringifyPlan } from "./access.js";
