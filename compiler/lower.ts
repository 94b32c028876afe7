/**
 * Lowering: an evaluated curriculum → the plan graph (plan/schema.ts). Constants become numbers;
 * schedules become entries of `plan.exprs` referenced by id. Ranges are checked here: exactly for
 * constants, over every step for step-level values, over steps × expert lengths for episode-level ones.
 */
import type { Span } from "../grammar/ast.js";
import { compileScalar, evalScalar, evalScalarGrid, readsFeedback, type ExprDef, type ScalarVars, type ValueRef } from "../plan/expr.js";
import { FeedbackTracker } from "../plan/feedback.js";
import { PLAN_SCHEMA_ID } from "../plan/version.js";
import { showNumber } from "../plan/print.js";
import { DEFAULT_LOG_RATIO_CLAMP, EMBEDDED_DEFAULTS, FIELD_DEFAULTS, GRPO_DEFAULTS, LOSS_DEFAULTS, OPTIMIZER_DEFAULTS, SIZE_LIMITS } from "../plan/defaults.js";
import type {
  AdaptiveDepth, AdvantageTerm, AgentFormat, BackendSpec, EnvSpec, ModelSpec, Plan, PlanNode,
} from "../plan/schema.js";
import type { AggregateKind, NoiseSource } from "../plan/enums.js";
import { needsTeacherDistributions } from "../plan/build.js";
import { inRange, PLAN_RANGES, prefixRange, rangeFor, type NumRange } from "../plan/ranges.js";
import { EXPERT_POLICY_KINDS, semanticsOf, usesCompactActions } from "../plan/env-semantics.js";
import { methodGraph, type LoweredParts } from "./graph.js";
import type { CurriculumValue, FieldValue } from "./curriculum.js";
import { chooseHint, d, dt, h } from "./diagnostics/index.js";
import type { Checker } from "./check.js";
import { byCodeUnits } from "./sink.js";
import { planUnit } from "./units.js";
import { constScalar, constValue, type Loss, type Obj, type Scalar, type Str, type Value } from "./values.js";

export interface LowerContext {
  sources: { path: string; sha256: string }[];
  sweep?: Record<string, string>;
  describe: (s: Span) => string;
  extensions?: Plan["extensions"];
  /**
   * Another sweep point's lowering (`keep`): when this curriculum's fields are the same values, but
   * for its horizon, only the horizon is lowered and the rest of that plan is taken as it is.
   */
  reuse?: LoweredPoint;
  /** Called with what a lowering that reported nothing keeps for `reuse`. */
  keep?: (p: LoweredPoint) => void;
}

/**
 * A lowering that reported nothing, but for its horizon: the fields it lowered, and what it made of
 * those but the horizon (the plan's parts, `exprs` without "horizon"). A sweep point whose fields are
 * the same values but for the horizon (a swept name that only the horizon reads) lowers to the same
 * plan but for the horizon's expression and the episode planner: every other check `lower` makes
 * passes there as it did here, since it reads the same values (so it reports nothing either).
 */
export interface LoweredPoint {
  fields: CurriculumValue["fields"];
  steps: number;
  clockSteps: number;
  maxTurns: number;
  prefix?: ValueRef;
  exprs: Record<string, ExprDef>;
  parts: Omit<LoweredParts, "planner" | "adaptive">;
  resources: Plan["resources"];
  seed: number;
}

class Lowering {
  readonly exprs: Record<string, ExprDef> = {};
  ok = true;
  constructor(readonly check: Checker, readonly ctx: LowerContext, readonly steps: number) {}

  /** Level check for values nested in loss and optimizer objects. */
  checkLevel(s: Scalar, max: "step" | "turn", span: Span): boolean {
    const ok = this.check.level(s, max, max === "turn" ? "turn weight" : "coefficient", span);
    if (!ok) this.ok = false;
    return ok;
  }

  /**
   * A scalar → a number (constant) or a reference to a named expression; never NaN or ±Infinity.
   * `maxTurns`: the run's episode.max_turns, for an episode-level value (which may read it).
   */
  ref(id: string, s: Scalar, what = id, span = s.span, maxTurns = 0): ValueRef {
    const c = constValue(s);
    if (c !== undefined) {
      if (!Number.isFinite(c)) this.range(s, what, () => true, "a finite number", span);
      return c;
    }
    if (!this.range(s, what, () => true, "a finite number", span, maxTurns)) return 0;
    this.exprs[id] = { level: s.level, unit: planUnit(s.dim), tree: s.tree, origin: this.ctx.describe(s.span) };
    return { expr: id };
  }

  /** Reports TC2021 when a schedule's tree is deeper than a plan holds (and the runtime evaluates). */
  tooDeep(s: Scalar, what: string, span: Span): boolean {
    const depth = treeDepth(s.tree);
    if (depth <= PLAN_EXPR_DEPTH) return false;
    this.check.report(d.expressionTooDeep({ what, depth, limit: PLAN_EXPR_DEPTH }), span);
    this.ok = false;
    return true;
  }

  /** The range check of a feedback value at step 1, before any step has finished. */
  rangeAtStart(s: Scalar, what: string, ok: (v: number) => boolean, range: Stated, span: Span, lengths: number[], maxTurns: number): boolean {
    const values = startValues(s, this.steps, lengths, maxTurns);
    for (const [i, len] of lengths.entries()) {
      const v = values[i]!;
      if (v === THREW) continue;
      if (!Number.isFinite(v) || !ok(v)) {
        const at = `step 1${s.level === "episode" ? ` with episode.expert_length = ${len} turns` : ""}, before any step has finished (feedback.* read 0, smoothers their init, stages 0)`;
        const r = Number.isFinite(v) ? stated(range, v) : "a finite number";
        this.check.report(d.outOfRange({ what, range: r, value: `${fmt(v)} at ${at}`, hint: h.boundFromStart({ range: r }) }), span);
        this.ok = false;
        return false;
      }
    }
    return true;
  }

  /**
   * Checks a value's range at every point it can take: a constant once; a step-level value at steps
   * 1..steps; an episode-level value also over expert lengths 0..maxTurns.
   */
  range(s: Scalar, what: string, ok: (v: number) => boolean, range: Stated, span: Span, maxTurns = 0): boolean {
    const c = constValue(s);
    if (c !== undefined) {
      if (Number.isFinite(c) && ok(c)) return true;
      const r = Number.isFinite(c) ? beyondSafe(stated(range, c), c) : "a finite number";
      this.check.report(d.outOfRange({ what, range: r, value: fmt(c), hint: chooseHint(r) }), span);
      this.ok = false;
      return false;
    }
    if (this.tooDeep(s, what, span)) return false;
    if (s.level === "turn" || s.level === "token") return true;
    const lengths = s.level === "episode" ? Array.from({ length: maxTurns + 1 }, (_, i) => i) : [0];
    // A value that reads the run's metrics is known only on a trace; at step 1 no step has finished
    // (feedback.* read 0, smoothers their init, stages 0), a state every run passes through: check it.
    if (readsFeedback(s.tree)) return this.rangeAtStart(s, what, ok, range, span, lengths, maxTurns);
    const sample = rangeSample(this.steps, lengths.length);
    const ls = sample.lengths ? sample.lengths.map((i) => lengths[i]!) : lengths;
    const rows = sample.steps ?? Array.from({ length: this.steps }, (_, i) => i + 1);
    const { values, threw } = gridValues(s.tree, this.steps, sample.steps, ls, maxTurns);
    let i = 0;
    for (const step of rows) {
      for (const L of ls) {
        const k = i++;
        if (threw?.[k]) continue;
        const v = values[k]!;
        if (!Number.isFinite(v) || !ok(v)) {
          const where = s.level === "episode" ? `step ${step} with episode.expert_length = ${L} turns` : `step ${step}`;
          const r = Number.isFinite(v) ? stated(range, v) : "a finite number";
          this.check.report(d.outOfRange({ what, range: r, value: `${fmt(v)} at ${where}`, hint: h.stayInRange({ range: r }) }), span);
          this.ok = false;
          return false;
        }
      }
    }
    // A check that skipped points says so, once per value (`ref` checks a value `range` checked).
    // (Not after a range error of this lowering: the error is what to fix first.)
    if ((sample.steps || sample.lengths) && this.ok && !this.sampled.has(s)) {
      this.sampled.add(s);
      this.check.report(d.rangeSampled({ what, checked: describeSample(sample, this.steps, lengths.length, s.level === "episode"), dense: RANGE_POINTS.toLocaleString("en-US") }), span);
    }
    return true;
  }

  /** `range` against a field's range in the table the plan loader and the runtime share (plan/ranges.ts). */
  rangeOf(s: Scalar, r: NumRange, span: Span, maxTurns = 0): boolean {
    return this.range(s, r.what, (v) => inRange(v, r), (v) => rangeFor(r, v), span, maxTurns);
  }

  /** Values whose range check was a sample (reported once each). */
  private readonly sampled = new Set<Scalar>();
}

/**
 * How many points (steps × expert lengths) a schedule's range check evaluates: every point up to
 * this many (~0.1 s), a sample beyond (`rangeSample`). The sample always holds the first and last
 * steps of the run and those around them, where schedules built on `step / total_steps` or
 * `1 / (N − step)` leave their range, and a stride over the rest; `check` then warns (TC4003) that
 * the check was not exhaustive rather than calling it complete.
 */
export const RANGE_POINTS = 200_000;
/** Steps checked one by one at each end of a sampled run; expert lengths likewise. */
const RANGE_EDGE = 1_000;
const LENGTHS_DENSE = 1_001;
const LENGTHS_EDGE = 100;

/** The sample of a range check: 1-based steps and 0-based expert-length indices; undefined = every one. */
export interface RangeSample { steps?: number[]; lengths?: number[]; stride: number; lengthStride: number; edge: number }

/** Indices `first` … `first + n − 1`: all (`at` undefined) up to `count`, else `edge` at each end and a stride between. */
function sampleIndices(n: number, count: number, edge: number, first: number): { at?: number[]; stride: number; edge: number } {
  if (n <= count) return { stride: 1, edge: 0 };
  const e = Math.max(1, Math.min(edge, Math.floor(count / 4)));
  const stride = Math.ceil((n - 2 * e) / Math.max(1, count - 2 * e));
  const at: number[] = [];
  for (let i = 0; i < e; i++) at.push(first + i);
  for (let i = e; i < n - e; i += stride) at.push(first + i);
  for (let i = n - e; i < n; i++) at.push(first + i);
  return { at, stride, edge: e };
}

/** Which points a range check over `steps` steps × `lengths` expert lengths evaluates (pure). */
export function rangeSample(steps: number, lengths: number): RangeSample {
  const l = sampleIndices(lengths, LENGTHS_DENSE, LENGTHS_EDGE, 0);
  const s = sampleIndices(steps, Math.max(8, Math.floor(RANGE_POINTS / (l.at?.length ?? lengths))), RANGE_EDGE, 1);
  return { ...(s.at ? { steps: s.at } : {}), ...(l.at ? { lengths: l.at } : {}), stride: s.stride, lengthStride: l.stride, edge: s.edge };
}

/** A sampled range check in words, for TC4003. */
function describeSample(r: RangeSample, steps: number, lengths: number, episode: boolean): string {
  const n = (x: number) => x.toLocaleString("en-US");
  const th = (x: number) => `${n(x)}${x % 100 >= 11 && x % 100 <= 13 ? "th" : ["th", "st", "nd", "rd"][x % 10] ?? "th"}`;
  const st = r.steps
    ? `${n(r.steps.length)} of the run's ${n(steps)} steps (the first and last ${n(r.edge)}, and every ${th(r.stride)} between)`
    : `every one of the run's ${n(steps)} steps`;
  const ls = !episode ? "" : r.lengths
    ? `, at ${n(r.lengths.length)} of ${n(lengths)} expert lengths (every ${th(r.lengthStride)} between the first and last ${LENGTHS_EDGE})`
    : `, at every expert length`;
  return st + ls;
}

/** In `startValues`: the evaluation threw (a value the runtime reports, not a range error). */
const THREW = Symbol("threw");

/**
 * A value over the grid `range` checks (every step 1..steps, or the sampled ones, then each expert length), in
 * that order; `threw` marks the points where the evaluation threw (a value the runtime reports, not
 * a range error), absent where none can. Memoized by the tree's text for small grids: an editor
 * compiles the same schedules after every keystroke, and a sweep's points share most of theirs.
 */
interface Grid { values: Float64Array; threw: Uint8Array | undefined }
const grids = new Map<string, Grid>();
/** JSON.stringify's replacer that keeps NaN, ±Infinity and −0 apart (JSON writes null, null and 0). */
const exactNumbers = (_k: string, v: unknown): unknown => (typeof v === "number" && (!Number.isFinite(v) || Object.is(v, -0)) ? `#${Object.is(v, -0) ? "-0" : v}` : v);
/** A tree as text, its numbers kept exactly (once per tree: a sweep's points and an editor's compilations share trees). */
const treeTexts = new WeakMap<object, string>();
function treeText(tree: Scalar["tree"]): string {
  let t = treeTexts.get(tree);
  if (t === undefined) treeTexts.set(tree, (t = JSON.stringify(tree, exactNumbers)));
  return t;
}

/**
 * A value that reads the run's metrics at step 1, before any step has finished, for each expert
 * length (THREW where the evaluation threw). Memoized by the tree's text, as `gridValues`.
 */
const starts = new Map<string, (number | typeof THREW)[]>();
function startValues(s: Scalar, steps: number, lengths: number[], maxTurns: number): (number | typeof THREW)[] {
  // The run's length matters only to a tree that reads it (an edit of `steps` keeps the others).
  const text = treeText(s.tree);
  const key = `${s.level}|${text.includes('"total_steps"') ? steps : ""}|${lengths.join(",")}|${maxTurns}|${text}`;
  const hit = starts.get(key);
  if (hit) return hit;
  const tracker = new FeedbackTracker({ v: { level: s.level, unit: "", tree: s.tree } });
  const out: (number | typeof THREW)[] = [];
  for (const len of lengths) {
    const vars: ScalarVars = { step: 1, total_steps: steps, "episode.expert_length": len, "episode.max_turns": maxTurns, ...tracker.vars() };
    try { out.push(evalScalar(s.tree, vars, {}, tracker.view())); } catch { out.push(THREW); }
  }
  if (starts.size >= 64) starts.delete(starts.keys().next().value!);
  starts.set(key, out);
  return out;
}
function gridValues(tree: Scalar["tree"], steps: number, sampled: number[] | undefined, lengths: number[], maxTurns: number): Grid {
  // A sample is only taken of grids far larger than the memoized ones.
  const small = !sampled && steps * lengths.length <= 20_000;
  const text = small ? treeText(tree) : "";
  // A tree that does not read total_steps has the same value at a step whatever the run's length: its
  // grid for more steps extends the one for fewer (an edit of `steps` computes only the new rows).
  const rows = small && !text.includes('"total_steps"');
  const key = !small ? "" : rows ? `rows|${lengths.length}|${maxTurns}|${text}` : `${steps}|${lengths.length}|${maxTurns}|${text}`;
  const hit = small ? grids.get(key) : undefined;
  if (hit && (!rows || hit.values.length >= steps * lengths.length)) return hit;
  // The steps of the rows to compute (the sample's, or every step not yet memoized), each row every expert length.
  const rowSteps: number[] = sampled ?? [];
  if (!sampled) for (let step = rows && hit ? hit.values.length / lengths.length + 1 : 1; step <= steps; step++) rowSteps.push(step);
  const done = hit?.values.length ?? 0;
  const values = new Float64Array(done + rowSteps.length * lengths.length);
  if (hit) values.set(hit.values);
  let threw = hit?.threw;
  const grid = evalScalarGrid(tree, Float64Array.from(rowSteps), Float64Array.from(lengths), { total_steps: steps, "episode.max_turns": maxTurns });
  if (grid) {
    values.set(grid, done);
  } else {
    const at = compileScalar(tree);
    const mask = new Uint8Array(values.length);
    if (threw) mask.set(threw);
    let i = done;
    // One variables object, set for each point (an evaluation reads it and keeps nothing of it).
    const vars: ScalarVars = { step: 0, total_steps: steps, "episode.expert_length": 0, "episode.max_turns": maxTurns };
    for (const step of rowSteps) {
      vars["step"] = step;
      for (const L of lengths) {
        vars["episode.expert_length"] = L;
        try { values[i] = at(vars); } catch { mask[i] = 1; }
        i++;
      }
    }
    threw = mask;
  }
  const out: Grid = { values, threw };
  if (small) {
    if (grids.size >= 64) grids.delete(grids.keys().next().value!);
    grids.set(key, out);
  }
  return out;
}
/**
 * A plan holds integers exactly up to 2^53 − 1 (JSON numbers are doubles): an integer range that a
 * larger whole number fails says so, rather than "an integer ≥ 1" of a value that looks like one.
 */
/** A range in words, or the words for a value (a table range names its guard bound to a value beyond it). */
type Stated = string | ((v: number) => string);
const stated = (range: Stated, v: number): string => (typeof range === "string" ? range : range(v));

function beyondSafe(range: string, v: number): string {
  return range.startsWith("an integer") && Number.isInteger(v) && !Number.isSafeInteger(v) ? `${range}, at most 2^53 − 1 (${Number.MAX_SAFE_INTEGER})` : range;
}

/** How deep a plan's expression trees may be (the runtime's evaluators recurse over them). */
export const PLAN_EXPR_DEPTH = 200;

/** Depths of trees `treeDepth` measured (trees are never changed once made; sweep points and keystrokes share them). */
const treeDepths = new WeakMap<object, number>();

/** Depth of an expression tree, without recursion (a tree may be thousands of levels deep). */
function treeDepth(tree: Scalar["tree"]): number {
  let max = treeDepths.get(tree);
  if (max !== undefined) return max;
  max = 0;
  const todo: [unknown, number][] = [[tree, 1]];
  while (todo.length) {
    const [t, dpt] = todo.pop()!;
    max = Math.max(max, dpt);
    const args = (t as { args?: unknown[] }).args;
    if (args) for (const a of args) todo.push([a, dpt + 1]);
  }
  treeDepths.set(tree, max);
  return max;
}

/**
 * Parts of plans `nonFinitePath` found finite: expression trees, and the resources and expressions
 * of a plan (never changed once made: the plans of sweep points lowered from another's share them).
 */
const finiteTrees = new WeakSet<object>();

/** The JSON path of the first number of the plan that is NaN or ±Infinity, if any. */
function nonFinitePath(root: Plan): string | undefined {
  // A first walk without paths (most plans have no such number); the path is built only for one that does.
  const stack: unknown[] = [root];
  let found = false;
  while (stack.length && !found) {
    const v = stack.pop();
    if (typeof v === "number") found = !Number.isFinite(v);
    // (Not the sources: paths and hashes, no number; a hash is computed when first read.)
    else if (v && typeof v === "object" && !finiteTrees.has(v) && v !== root.sources) for (const k in v) stack.push((v as Record<string, unknown>)[k]);
  }
  if (!found) {
    // Expression trees are never changed once made, and the plans of sweep points and of an editor's
    // keystrokes share them: each is walked once.
    for (const e of Object.values(root.exprs)) {
      finiteTrees.add(e);
      if (e.tree && typeof e.tree === "object") finiteTrees.add(e.tree);
    }
    finiteTrees.add(root.resources);
    return undefined;
  }
  const todo: [unknown, string][] = [[root, ""]];
  while (todo.length) {
    const [v, path] = todo.pop()!;
    if (typeof v === "number" && !Number.isFinite(v)) return path.slice(1);
    if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) todo.push([x, `${path}.${k}`]);
  }
  return undefined;
}

const fmt = showNumber;
const str = (o: Obj, k: string): string => (o.fields.get(k) as Str | undefined)?.value ?? "";
const num = (o: Obj, k: string): number => constValue(o.fields.get(k) as Scalar) ?? NaN;
const bool = (o: Obj, k: string): boolean => num(o, k) !== 0;
const scalarField = (o: Obj, k: string): Scalar => o.fields.get(k) as Scalar;

export function lowerBackend(b: Obj): BackendSpec {
  switch (str(b, "kind")) {
    case "openai":
      return { kind: "openai", url: str(b, "url"), dialect: str(b, "dialect") as "vllm", concurrency: num(b, "concurrency"), timeoutMs: Math.round(num(b, "timeout_s") * 1000), ...(str(b, "api_key_env") ? { apiKeyEnv: str(b, "api_key_env") } : {}) };
    case "worker":
      return { kind: "worker", url: str(b, "url"), start: bool(b, "start"), concurrency: num(b, "concurrency"), timeoutMs: Math.round(num(b, "timeout_s") * 1000), ...(str(b, "token_env") ? { tokenEnv: str(b, "token_env") } : {}) };
    default: {
      const candidateLogOdds = num(b, "candidate_log_odds");
      return {
        kind: "embedded", smoothing: num(b, "smoothing"), features: num(b, "features"),
        ...(candidateLogOdds ? { candidateLogOdds } : {}),
      };
    }
  }
}

function lowerModel(m: Obj): ModelSpec {
  const serve = m.fields.get("serve") as Obj | undefined;
  const backend: BackendSpec = serve ? lowerBackend(serve) : { kind: "embedded", smoothing: EMBEDDED_DEFAULTS.smoothing, features: EMBEDDED_DEFAULTS.features };
  return {
    path: str(m, "path"), backend,
    ...(m.fields.has("tokenizer") ? { tokenizer: str(m, "tokenizer") } : {}),
    ...(m.fields.has("lora") ? { lora: str(m, "lora") } : {}),
  };
}

export function lowerAgent(a: Obj): AgentFormat {
  const parserKind = str(a, "parser");
  const parser: AgentFormat["parser"] = parserKind === "tags" ? { kind: "tags", tag: str(a, "tag"), think: bool(a, "think") }
    : parserKind === "react" ? { kind: "react", prefix: str(a, "react_prefix") } : { kind: "raw" };
  const invalidKind = str(a, "on_invalid");
  const onInvalid: AgentFormat["onInvalid"] = invalidKind === "feedback" ? { kind: "feedback", text: str(a, "invalid_text") }
    : invalidKind === "pass" ? { kind: "pass" } : invalidKind === "empty" ? { kind: "empty" } : { kind: "end" };
  // "last" (the default) is written as no key, so plans compiled before the key existed mean the same.
  const actionPick = str(a, "action_pick") === "first" ? { actionPick: "first" as const } : {};
  return {
    name: str(a, "name"), system: str(a, "system"), template: str(a, "template"), templateNoHistory: str(a, "template_no_history"),
    historyWindow: num(a, "history_window"), historyEntry: str(a, "history_entry"),
    memory: str(a, "memory") === "window" ? { kind: "window", turns: num(a, "memory_window") } : { kind: "accumulate" },
    parser, ...actionPick, maxResponseTokens: num(a, "max_tokens"), thinking: bool(a, "thinking"), onInvalid,
  };
}

function lowerEnv(e: Obj, maxTurns: number): EnvSpec {
  const params: Record<string, unknown> = {};
  const rec = e.fields.get("params");
  if (rec && rec.kind === "record") for (const [k, v] of [...rec.fields].sort(([a], [b]) => byCodeUnits(a, b))) params[k] = toJson(v);
  return {
    kind: str(e, "kind"), split: str(e, "split"), maxTurns, pool: num(e, "pool"), params,
    ...(str(e, "server") ? { server: str(e, "server") } : {}),
    ...(str(e, "task_file") ? { taskFile: str(e, "task_file") } : {}),
  };
}

function toJson(v: Value): unknown {
  switch (v.kind) {
    case "string": return v.value;
    case "scalar": return v.type === "bool" ? constValue(v) !== 0 : (constValue(v) ?? null);
    case "list": return v.items.map(toJson);
    case "record": return Object.fromEntries([...v.fields].map(([k, x]) => [k, toJson(x)]));
    default: return null;
  }
}

/** The episode planner's horizon: a schedule or constant in `planner`, or the adaptive depth it returns. */
function lowerHorizon(L: Lowering, horizon: Value | undefined, span: Span, maxTurns: number, planner: Extract<PlanNode, { kind: "EpisodePlanner" }>["params"]): AdaptiveDepth | undefined {
  if (horizon?.kind === "scalar") {
    L.rangeOf(horizon, PLAN_RANGES.horizon, span, maxTurns);
    planner.horizon = L.ref("horizon", horizon, "horizon", span, maxTurns);
  } else if (horizon?.kind === "object") {
    const rule = horizon.fields.get("rule") as Obj;
    return {
      probeEvery: num(horizon, "probe_every"), probeEpisodes: num(horizon, "probe_episodes"),
      rule: str(rule, "kind") === "coverage" ? { kind: "coverage", keep: num(rule, "keep") } : { kind: "divergence", ratio: num(rule, "ratio") },
      initial: Math.min(num(horizon, "initial"), maxTurns), min: num(horizon, "min"),
    };
  }
  return undefined;
}

/** Whether `cv`'s fields are those of `r` (the same values, in the same order), but for the horizon. */
function sameButHorizon(r: LoweredPoint, cv: CurriculumValue): boolean {
  if (r.fields.size !== cv.fields.size) return false;
  const mine = cv.fields.entries();
  for (const [k, a] of r.fields) {
    const [k2, b] = mine.next().value as [string, FieldValue];
    if (k !== k2 || a.expr !== b.expr) return false;
    if (k !== "horizon" && a.value !== b.value) return false;
  }
  return true;
}

/** The method graph of a lowering's parts, with its planner (the same order of keys as always). */
function graphOf(p: LoweredPoint["parts"], planner: Extract<PlanNode, { kind: "EpisodePlanner" }>["params"], adaptive: AdaptiveDepth | undefined): Plan["graph"] {
  const { tasks, ...rest } = p;
  return methodGraph({ tasks, planner, ...(adaptive ? { adaptive } : {}), ...rest });
}

/** The plan of a curriculum from its lowered parts; undefined (reported) when a number of it is not finite. */
function planOf(cv: CurriculumValue, check: Checker, ctx: LowerContext, clockSteps: number, seed: number, resources: Plan["resources"], exprs: Record<string, ExprDef>, graph: Plan["graph"]): Plan | undefined {
  const plan: Plan = {
    schema: PLAN_SCHEMA_ID,
    name: cv.name + (ctx.sweep ? "@" + Object.entries(ctx.sweep).map(([k, v]) => `${k}=${v}`).join(",") : ""),
    ...(ctx.sweep ? { sweep: ctx.sweep } : {}),
    sources: ctx.sources,
    clock: { steps: clockSteps, seed },
    resources,
    exprs,
    graph,
    ...(ctx.extensions ? { extensions: ctx.extensions } : {}),
  };
  // Every number of the plan is finite (NaN and ±Infinity do not survive JSON): the fields checked
  // above say which value; this catches the rest (optimizer and eval options, env settings).
  const bad = nonFinitePath(plan);
  if (bad !== undefined) {
    check.report(d.outOfRange({ what: `plan field ${bad}`, range: "a finite number", value: "NaN or ±Infinity", hint: h.checkArithmetic() }), cv.decl.nameSpan);
    return undefined;
  }
  return plan;
}

/**
 * `lower` of a sweep point through another point's lowering (`LoweredPoint`): the horizon lowered
 * and checked here, the rest as that point lowered it.
 */
function lowerFrom(r: LoweredPoint, cv: CurriculumValue, check: Checker, ctx: LowerContext): Plan | undefined {
  const errorsBefore = check.sink.errorCount;
  const fv = cv.fields.get("horizon");
  // (As `lower`: an invalid field, already reported, leaves no plan.)
  if (fv?.value.kind === "invalid") return undefined;
  const L = new Lowering(check, ctx, r.steps);
  const planner: Extract<PlanNode, { kind: "EpisodePlanner" }>["params"] = { maxTurns: r.maxTurns, truncatedReward: 0 };
  const adaptive = lowerHorizon(L, fv?.value, fv?.expr.span ?? cv.decl.nameSpan, r.maxTurns, planner);
  if (r.prefix !== undefined) planner.prefix = r.prefix;
  if (!L.ok || check.sink.errorCount > errorsBefore) return undefined;
  // The horizon's expression first, as `lower` adds it.
  return planOf(cv, check, ctx, r.clockSteps, r.seed, r.resources, { ...L.exprs, ...r.exprs }, graphOf(r.parts, planner, adaptive));
}

/** Lowers one evaluated curriculum; undefined when a field is invalid (already reported). */
export function lower(cv: CurriculumValue, check: Checker, ctx: LowerContext): Plan | undefined {
  if (ctx.reuse && !ctx.extensions && sameButHorizon(ctx.reuse, cv)) return lowerFrom(ctx.reuse, cv, check, ctx);
  const reports = check.sink.attempts;
  const f = (k: string): FieldValue | undefined => cv.fields.get(k);
  const val = (k: string): Value | undefined => {
    const v = f(k)?.value;
    return v && v.kind !== "invalid" ? v : undefined;
  };
  const errorsBefore = check.sink.errorCount;
  const invalidFields = [...cv.fields.values()].some((fv) => fv.value.kind === "invalid");
  const teacher = val("teacher") as Obj | undefined;
  const student = val("student") as Obj | undefined;
  const env = val("env") as Obj | undefined;
  const stepsS = val("steps") as Scalar | undefined;
  // Keep checking what can be checked when some fields are broken: one run reports every error.
  const steps = stepsS ? constValue(stepsS)! : 1;
  // Ranges are checked over the run's real length (a sample past RANGE_POINTS); a `steps` out of
  // range (reported below) is clamped to one the checks can step through.
  const L = new Lowering(check, ctx, Number.isSafeInteger(steps) && steps >= 1 ? steps : Math.max(1, Math.min(Math.floor(steps) || 1, Number.MAX_SAFE_INTEGER)));
  const span = (k: string) => f(k)?.expr.span ?? cv.decl.nameSpan;

  if (stepsS) L.range(stepsS, "steps", (v) => Number.isSafeInteger(v) && v >= 1, "an integer ≥ 1", span("steps"));

  // batch: `16 tasks` or `16 tasks × 8 rollouts` — the product keeps its factors (values.ts).
  let tasksPerStep = 16;
  let rolloutsPerTask = 1;
  const batch = f("batch");
  if (batch && batch.value.kind === "scalar") {
    const b = batch.value as Scalar;
    const total = constValue(b)!;
    if ("rollouts" in b.dim) {
      const factor = (unit: string) => (b.factors ?? []).map((x) => (unit in x.dim ? constValue(x) : undefined)).find((x) => x !== undefined);
      rolloutsPerTask = factor("rollouts") ?? 1;
      // `N tasks × 0 rollouts` (an sft-only loss, checked with the loss below) keeps N in its factor.
      tasksPerStep = factor("tasks") ?? total / rolloutsPerTask;
    } else {
      tasksPerStep = total;
    }
    if (!Number.isSafeInteger(tasksPerStep) || tasksPerStep < 1 || !Number.isSafeInteger(rolloutsPerTask) || rolloutsPerTask < 0) {
      check.report(d.outOfRange({ what: "batch", range: `a whole number ≥ 1 of tasks and of rollouts${Number.isSafeInteger(tasksPerStep * rolloutsPerTask) || !Number.isInteger(tasksPerStep * rolloutsPerTask) ? "" : `, at most 2^53 − 1 (${Number.MAX_SAFE_INTEGER})`}`, value: `${tasksPerStep} tasks × ${rolloutsPerTask} rollouts`, hint: h.batchExample() }), batch.expr.span);
      return undefined;
    }
    // A step's episodes are held in memory at once: beyond the limit a run would abort out of memory.
    const limit = SIZE_LIMITS.episodesPerStep;
    if (tasksPerStep * Math.max(1, rolloutsPerTask) > limit) {
      check.report(d.outOfRange({ what: "batch", range: `at most ${limit.toLocaleString("en-US")} episodes a step (tasks × rollouts)`, value: `${tasksPerStep} tasks × ${rolloutsPerTask} rollouts = ${(tasksPerStep * Math.max(1, rolloutsPerTask)).toLocaleString("en-US")}`, hint: h.batchLimit({ limit: limit.toLocaleString("en-US") }) }), batch.expr.span);
      return undefined;
    }
  }

  const envMax = env ? num(env, "max_turns") : 30;
  const maxTurnsF = val("max_turns") as Scalar | undefined;
  const maxTurns = maxTurnsF ? constValue(maxTurnsF)! : envMax;
  if (maxTurnsF) L.range(maxTurnsF, "max_turns", (v) => Number.isSafeInteger(v) && v >= 1, "an integer ≥ 1 turn", span("max_turns"));

  // ---- episode planner ----
  const planner: Extract<PlanNode, { kind: "EpisodePlanner" }>["params"] = { maxTurns, truncatedReward: 0 };
  const adaptive = lowerHorizon(L, val("horizon"), span("horizon"), maxTurns, planner);
  const prefix = val("prefix") as Scalar | undefined;
  if (prefix) {
    L.rangeOf(prefix, prefixRange(maxTurns), span("prefix"), maxTurns);
    planner.prefix = L.ref("prefix", prefix, "prefix", span("prefix"), maxTurns);
    // b2f replays expert actions from the taskset rows; some envs' official data has none.
    const kind = env ? str(env, "kind") : "";
    const sem = semanticsOf(kind);
    if (sem.expertActions === "none" && constValue(prefix) !== 0) {
      check.report(d.noExpertActions({ env: kind, source: sem.expertActionsNote ?? "their data has no \"actions\"" }), span("prefix"));
    }
  }

  // ---- loss ----
  const loss: Loss = (val("loss") as Loss | undefined) ?? { kind: "loss", terms: [{ kind: LOSS_DEFAULTS.kind, coef: constScalar(LOSS_DEFAULTS.coef, {}, cv.decl.nameSpan), params: new Map(), span: cv.decl.nameSpan }], span: cv.decl.nameSpan };
  const terms: AdvantageTerm[] = [];
  let grpo: { normalize: boolean; eps: number } | undefined;
  let demosNoise = 0;
  let demosNoiseFrom: NoiseSource = "admissible";
  loss.terms.forEach((t, i) => {
    const id = `loss.${i}.${t.kind}.coef`;
    if (!L.checkLevel(t.coef, "step", span("loss"))) return;
    const coef = L.ref(id, t.coef, `the ${t.kind} coefficient`, span("loss"));
    const param = (k: string) => t.params.get(k);
    if (t.kind === "opd") {
      const clipArg = param("clip") as Scalar | undefined;
      const clip = (clipArg && constValue(clipArg)) ?? 0;
      terms.push({ kind: "opd", coef, estimator: ((param("estimator") as Str | undefined)?.value ?? LOSS_DEFAULTS.estimator) as "k1", ...(clip > 0 ? { clip } : {}) });
    }
    else if (t.kind === "grpo") {
      const group = constValue(param("group") as Scalar) ?? 0;
      if (group !== 0 && group !== rolloutsPerTask) {
        check.report(d.invalidValue({ what: "grpo group", detail: dt.grpoGroupMismatch({ group, rollouts: rolloutsPerTask }), hint: h.grpoBatch({ tasks: tasksPerStep, rollouts: group }) }), t.span);
        L.ok = false;
      } else if (rolloutsPerTask < 2) {
        check.report(d.invalidValue({ what: "grpo term", detail: dt.grpoNeedsGroup(), hint: h.grpoBatch({ tasks: tasksPerStep, rollouts: 8 }) }), t.span);
        L.ok = false;
      }
      terms.push({ kind: "grpo", coef });
      grpo = { normalize: constValue(param("normalize") as Scalar) !== 0, eps: constValue(param("eps") as Scalar) ?? GRPO_DEFAULTS.eps };
    } else if (t.kind === "gkd") {
      const beta = param("beta") as Scalar;
      if (!L.checkLevel(beta, "step", span("loss"))) return;
      if (!L.rangeOf(beta, PLAN_RANGES.gkdBeta, span("loss"))) return;
      terms.push({ kind: "gkd", coef, beta: L.ref(`loss.${i}.gkd.beta`, beta) });
    } else {
      terms.push({ kind: "sft", coef });
      demosNoise = constValue(param("noise") as Scalar) ?? 0;
      demosNoiseFrom = ((param("noise_from") as Str | undefined)?.value ?? "admissible") as NoiseSource;
      const kind = env ? str(env, "kind") : "";
      if (demosNoise > 0 && kind !== "" && !EXPERT_POLICY_KINDS.has(kind)) {
        check.report(d.noExpertPolicy({ noise: String(demosNoise), env: kind, kinds: [...EXPERT_POLICY_KINDS].join(", ") }), span("loss"));
        L.ok = false;
      }
      if (demosNoise === 0 && demosNoiseFrom !== "admissible") check.report(d.noiseSourceWithoutNoise({ source: demosNoiseFrom }), span("loss"));
    }
  });
  // No student episodes (`× 0 rollouts`): only demonstrations train, so every term must be sft.
  const onPolicy = new Set(terms.filter((t) => t.kind !== "sft").map((t) => t.kind));
  if (rolloutsPerTask === 0 && onPolicy.size > 0) {
    check.report(d.invalidValue({ what: "batch", detail: dt.noRollouts({ terms: [...onPolicy].join(", ") }), hint: h.batchExample() }), batch!.expr.span);
    L.ok = false;
  }
  const mode = (loss.aggregate?.mode ?? LOSS_DEFAULTS.aggregate) as AggregateKind;
  let aggregate: Extract<PlanNode, { kind: "Advantage" }>["params"]["aggregate"];
  if (mode === "progressive") {
    const w = loss.aggregate!.weight!;
    if (L.checkLevel(w, "step", span("loss"))) L.rangeOf(w, PLAN_RANGES.blendWeight, span("loss"));
    aggregate = { kind: "progressive", weight: L.ref("loss.blend", w, "progressive blend weight", span("loss")) };
  } else aggregate = { kind: mode };

  // ---- optimiser ----
  const opt = val("optimizer") as Obj | undefined;
  const lrS = opt ? scalarField(opt, "lr") : undefined;
  if (lrS && L.checkLevel(lrS, "step", span("optimizer"))) L.rangeOf(lrS, PLAN_RANGES.lr, span("optimizer"));
  const betas = opt ? (opt.fields.get("betas") as { items: Scalar[] }).items.map((b) => constValue(b)!) : [...OPTIMIZER_DEFAULTS.betas];
  const temperature = val("temperature") as Scalar | undefined;
  if (temperature) L.rangeOf(temperature, PLAN_RANGES.temperature, span("temperature"));
  const constField = (k: string, dflt: number, check?: [(v: number) => boolean, string]) => {
    const s = val(k) as Scalar | undefined;
    if (!s) return dflt;
    if (check && !L.range(s, k, check[0], check[1], span(k))) return dflt;
    return constValue(s)!;
  };
  const staleness = constField("staleness", FIELD_DEFAULTS.staleness, [(v) => Number.isSafeInteger(v) && v >= 0, "an integer ≥ 0 steps"]);
  const trainBatch = constField("train_batch", 0, [(v) => Number.isSafeInteger(v) && v >= 1, "an integer ≥ 1 turn"]);
  const checkpointEvery = constField("checkpoint_every", Math.min(FIELD_DEFAULTS.checkpointEveryAtMost, steps), [(v) => Number.isSafeInteger(v) && v >= 1, "an integer ≥ 1 step"]);
  const seed = constField("seed", FIELD_DEFAULTS.seed, [(v) => Number.isSafeInteger(v), "an integer"]);
  const teacherTemp = constField("teacher_temperature", FIELD_DEFAULTS.teacherTemperature, [(v) => inRange(v, PLAN_RANGES.teacherTemperature), PLAN_RANGES.teacherTemperature.stated]);
  const rowsF = val("rows") as Str | undefined;
  const rows = rowsF?.value;
  if (rows !== undefined && rows !== "turn" && rows !== "trajectory") {
    check.report(d.invalidValue({ what: "rows", detail: dt.quoted({ value: rows }), hint: h.rowsValues() }), span("rows"));
    L.ok = false;
  }
  const oldLpF = val("old_logprobs") as Str | undefined;
  const oldLogprobs = oldLpF?.value;
  if (oldLogprobs !== undefined && oldLogprobs !== "trainer" && oldLogprobs !== "sampler") {
    check.report(d.invalidValue({ what: "old_logprobs", detail: dt.quoted({ value: oldLogprobs }), hint: h.oldLogprobsValues() }), span("old_logprobs"));
    L.ok = false;
  }

  if (!teacher || !student || !env || !stepsS || invalidFields) return undefined;
  const agent = lowerAgent((val("agent") as Obj | undefined) ?? (env.fields.get("agent") as Obj));
  // Whole-trajectory rows train one sequence per episode: every turn's prompt must extend the previous
  // turn's prompt + response, which only an accumulating chat memory guarantees (the runtime refuses
  // the first episode otherwise, TC7007): caught here, at check.
  // (A window that holds every earlier turn of the longest episode is as good as accumulating.)
  if (rows === "trajectory" && agent.memory.kind === "window" && agent.memory.turns < maxTurns - 1) {
    check.report(d.invalidValue({
      what: "rows", detail: dt.trajectoryWindow({ window: agent.memory.turns, maxTurns }),
      hint: h.trajectoryNeedsMemory(),
    }), span("rows"));
    return undefined;
  }

  // The compact action list ({action_templates}, {objects}) comes from the env: ScienceWorld through
  // tcod's bridge (and the Trinity plugin) supplies it; other envs and AgentGym servers do not.
  if (usesCompactActions(agent)) {
    const evalsV = val("eval");
    const evalEnvs = !evalsV ? [] : (evalsV.kind === "list" ? (evalsV.items as Obj[]) : [evalsV as Obj]).map((e) => e.fields.get("env") as Obj);
    for (const e of [env, ...evalEnvs]) {
      const kind = str(e, "kind");
      const why = !semanticsOf(kind).compactActions ? `${kind} lists its available actions only`
        : str(e, "server") ? `through the AgentGym server ${str(e, "server")}, whose protocol has no action templates or objects` : undefined;
      if (why === undefined) continue;
      check.report(d.noCompactActions({ agent: agent.name, placeholders: "{action_templates}, {objects}", env: `env '${kind}'`, why }), f("agent") ? span("agent") : span(e === env ? "env" : "eval"));
      return undefined;
    }
  }

  // ---- resources ----
  const teacherName = str(teacher, "name");
  const studentName = str(student, "name");
  const models: Record<string, ModelSpec> = { [teacherName]: lowerModel(teacher), [studentName]: lowerModel(student) };
  const envs: Record<string, EnvSpec> = { train: lowerEnv(env, maxTurns) };

  let turnWeights: Extract<PlanNode, { kind: "TurnWeights" }>["params"] | undefined;
  if (loss.weights) {
    L.checkLevel(loss.weights, "turn", span("loss"));
    L.tooDeep(loss.weights, "the turn weights", span("loss"));
    // Always an expression, even when constant: the runtime evaluates it over the turns of a batch.
    L.exprs["turn_weights"] = { level: "turn", unit: "", tree: loss.weights.tree, origin: ctx.describe(loss.weights.span) };
    turnWeights = { weight: { expr: "turn_weights" } };
  }
  const rollout = { student: studentName, env: "train", agent: "default", temperature: temperature ? L.ref("temperature", temperature, "temperature", span("temperature")) : FIELD_DEFAULTS.temperature };
  const update: Extract<PlanNode, { kind: "Update" }>["params"] = {
    optimizer: {
      kind: "adamw", lr: lrS ? L.ref("lr", lrS, "lr", span("optimizer")) : OPTIMIZER_DEFAULTS.lr, betas: [betas[0]!, betas[1]!],
      eps: opt ? num(opt, "eps") : OPTIMIZER_DEFAULTS.eps, weightDecay: opt ? num(opt, "weight_decay") : OPTIMIZER_DEFAULTS.weightDecay,
      gradClip: opt ? num(opt, "grad_clip") : OPTIMIZER_DEFAULTS.gradClip,
    },
    lossFn: (opt ? str(opt, "loss_fn") : OPTIMIZER_DEFAULTS.lossFn) as "ppo", clip: opt ? num(opt, "clip") : OPTIMIZER_DEFAULTS.clip, logRatioClamp: DEFAULT_LOG_RATIO_CLAMP,
    trainBatchTurns: trainBatch, staleness,
    ...(oldLogprobs ? { oldLogprobs: oldLogprobs as "trainer" } : {}),
  };

  const evals = val("eval");
  const evalList = !evals ? [] : evals.kind === "list" ? (evals.items as Obj[]) : [evals as Obj];
  const usedNames = new Set<string>();
  const evalNodes: Extract<PlanNode, { kind: "Evaluate" }>["params"][] = [];
  for (const e of evalList) {
    const eenv = e.fields.get("env") as Obj;
    let name = str(e, "name") || str(eenv, "split");
    for (let i = 2; usedNames.has(name); i++) name = `${str(e, "name") || str(eenv, "split")}-${i}`;
    usedNames.add(name);
    const evMax = num(e, "max_turns") || maxTurnsFor(eenv, env, maxTurns);
    envs[`eval-${name}`] = lowerEnv(eenv, evMax);
    evalNodes.push({
      name, env: `eval-${name}`, every: num(e, "every"), tasks: num(e, "tasks"), temperature: num(e, "temperature"), maxTurns: evMax, atStart: bool(e, "at_start"),
      ...(num(e, "from") > 0 ? { from: num(e, "from") } : {}),
      student: studentName, agent: "default",
    });
  }
  const parts: LoweredPoint["parts"] = {
    tasks: { env: "train", tasksPerStep, rolloutsPerTask, seed },
    rollout,
    teacher: { teacher: teacherName, temperature: teacherTemp, topk: terms.some((t) => t.kind === "opd" && t.estimator === "topk") ? 20 : 0,
      distributions: needsTeacherDistributions(terms) },
    ...(turnWeights ? { turnWeights } : {}), ...(grpo ? { grpo } : {}), demosNoise, demosNoiseFrom,
    advantage: { terms, aggregate, ...(rows ? { rows: rows as "turn" } : {}) }, update, sync: { every: 1 },
    evals: evalNodes, checkpoint: { every: checkpointEvery },
  };
  const graph = graphOf(parts, planner, adaptive);

  if (!L.ok || check.sink.errorCount > errorsBefore) return undefined;
  const resources: Plan["resources"] = { models, envs, agents: { default: agent } };
  const plan = planOf(cv, check, ctx, steps, seed, resources, L.exprs, graph);
  if (plan && ctx.keep && !ctx.extensions && check.sink.attempts === reports) {
    const { horizon: _h, ...exprs } = L.exprs;
    ctx.keep({ fields: cv.fields, steps: L.steps, clockSteps: steps, maxTurns, ...(planner.prefix !== undefined ? { prefix: planner.prefix } : {}), exprs, parts, resources, seed });
  }
  return plan;
}

/** Evaluation uses the env's own max turns, or the curriculum's Hmax when it is the same env kind. */
function maxTurnsFor(evalEnv: Obj, trainEnv: Obj, trainMax: number): number {
  return str(evalEnv, "kind") === str(trainEnv, "kind") ? trainMax : num(evalEnv, "max_turns");
}
