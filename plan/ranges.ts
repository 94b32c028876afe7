/**
 * The ranges of the plan's numeric fields the runtime uses, written once. Three checks read them:
 * - the compiler, on a curriculum's constants and schedules (TC4001: compiler/builtins.ts, lower.ts);
 * - plan validation, on the constants of a plan .json (TC7001: `planRangeIssues`, from parsePlan);
 * - the runtime, on each schedule value it evaluates (TC7005: runtime/curriculum-state.ts): the
 *   compiler checks a feedback-level schedule at step 1 only, and a plan .json's not at all.
 * The Trinity plugin gets the table as tcod_runtime/range_table.py (targets/trinity/plugin/range-table.ts
 * renders it into every export) and applies the last two checks to its spec.json and schedules.
 * Several have an upper bound that only guards against absurd values (lr ≤ 10): messages state the
 * range by its lower bound alone and name that bound only for a value beyond it (`statedRange`).
 */
import type { Plan } from "./schema.js";
import { planHint } from "./errors.js";

export interface NumRange {
  /** The field as messages name it. */
  what: string;
  lo: number;
  hi: number;
  loOpen?: boolean;
  hiOpen?: boolean;
  integer?: boolean;
  /** The range in words, as messages state it ("> 0", "in [0, 1]", "≥ 1 turn"). */
  stated: string;
}

/** Fields read by the runtime, each with the range the compiler enforces on it. */
export const PLAN_RANGES = {
  /** Update.optimizer.lr (a schedule). */
  lr: { what: "lr", lo: 0, hi: 10, loOpen: true, stated: "> 0" },
  /** Rollout.temperature (a schedule) and Evaluate.temperature: the student's sampling temperature. */
  temperature: { what: "temperature", lo: 0, hi: 2, stated: "in [0, 2]" },
  /** TeacherScore.temperature. */
  teacherTemperature: { what: "teacher_temperature", lo: 0, hi: 4, loOpen: true, stated: "in (0, 4]" },
  /** Advantage.aggregate.weight of the progressive aggregate (a schedule). */
  blendWeight: { what: "progressive blend weight", lo: 0, hi: 1, stated: "in [0, 1]" },
  /** The gkd term's beta (a schedule): the share of forward KL. */
  gkdBeta: { what: "beta", lo: 0, hi: 1, stated: "in [0, 1] (the share of forward KL)" },
  /** EpisodePlanner.horizon (an episode-level schedule); the runtime rounds it down to whole turns. */
  horizon: { what: "horizon", lo: 1, hi: Infinity, stated: "≥ 1 turn" },
  /** The opd term's k1 clamp; 0 (absent from a plan) is none. */
  opdClip: { what: "clip", lo: 0, hi: Number.MAX_VALUE, stated: "≥ 0 (0: no clamp)" },
  /** Update.clip: the PPO clip range. */
  clip: { what: "clip", lo: 0, hi: 10, loOpen: true, stated: "> 0" },
  /** Each of Update.optimizer.betas (Adam's two moment decay rates). */
  adamBeta: { what: "betas", lo: 0, hi: 1, hiOpen: true, stated: "in [0, 1)" },
  /** Update.optimizer.gradClip. */
  gradClip: { what: "grad_clip", lo: 0, hi: 1e9, loOpen: true, stated: "> 0" },
  /** Update.optimizer.eps. */
  eps: { what: "eps", lo: 0, hi: 1, loOpen: true, stated: "> 0" },
  /** Update.optimizer.weightDecay. */
  weightDecay: { what: "weight_decay", lo: 0, hi: 1, stated: "in [0, 1]" },
} as const satisfies Record<string, NumRange>;

/** EpisodePlanner.prefix (an episode-level schedule): the student needs at least one of the run's turns. */
export function prefixRange(maxTurns: number): NumRange {
  return { what: "prefix", lo: 0, hi: maxTurns - 1, stated: `in [0, ${maxTurns - 1}] turns (the student needs at least one of the ${maxTurns} turns)` };
}

/** Whether `v` lies in the range (`lo`, `hi` and the flags given separately, or a NumRange). */
export function inRange(v: number, lo: number | NumRange, hi?: number, opts: { loOpen?: boolean; hiOpen?: boolean; integer?: boolean } = {}): boolean {
  const r = typeof lo === "number" ? { lo, hi: hi!, ...opts } : lo;
  // A plan holds integers exactly up to 2^53 − 1 (JSON numbers are doubles).
  if (r.integer && !Number.isSafeInteger(v)) return false;
  return (r.loOpen ? v > r.lo : v >= r.lo) && (r.hiOpen ? v < r.hi : v <= r.hi);
}

/**
 * The range as a message about `v` states it: as written, but a range written by its lower bound
 * alone gets its upper bound named when `v` is beyond it ("must be > 0, got 1e+308" would not say
 * what is wrong).
 */
export function statedRange(range: string, v: number, hi: number, hiOpen = false): string {
  const aboveHi = hiOpen ? v >= hi : v > hi;
  if (!aboveHi || /[[(≤<]|at most/.test(range)) return range;
  return `${range} and ${hiOpen ? "<" : "≤"} ${hi.toLocaleString("en-US")}`;
}

/** `statedRange` of a NumRange. */
export function rangeFor(r: NumRange, v: number): string {
  return statedRange(r.stated, v, r.hi, r.hiOpen);
}

/** A value out of its range in the compiler's words: "lr must be > 0, got -0.1". */
export function outOfRangeMessage(r: NumRange, v: number): string {
  return `${r.what} must be ${rangeFor(r, v)}, got ${v}`;
}

/** A step of a RangedField's path: a field's name, `[]` (each item of a list) or `kind=X` (only an object whose `kind` is X). */
export type RangedStep = string;

/** Where a range of PLAN_RANGES applies: the kind of node, and the path to the field under its params. */
export interface RangedField { node: string; path: readonly RangedStep[]; range: keyof typeof PLAN_RANGES }

/**
 * Every constant field a range applies to, once: planRangeIssues checks these on load, and
 * plan/schema.ts writes them into the published JSON Schema (docs/plan.schema.json), so the two
 * cannot disagree. EpisodePlanner.prefix is not here: its range depends on the node's maxTurns.
 */
export const RANGED_FIELDS: readonly RangedField[] = [
  { node: "EpisodePlanner", path: ["horizon"], range: "horizon" },
  { node: "Rollout", path: ["temperature"], range: "temperature" },
  { node: "Evaluate", path: ["temperature"], range: "temperature" },
  { node: "TeacherScore", path: ["temperature"], range: "teacherTemperature" },
  { node: "Advantage", path: ["terms", "[]", "kind=gkd", "beta"], range: "gkdBeta" },
  { node: "Advantage", path: ["terms", "[]", "kind=opd", "clip"], range: "opdClip" },
  { node: "Advantage", path: ["aggregate", "kind=progressive", "weight"], range: "blendWeight" },
  { node: "Update", path: ["optimizer", "lr"], range: "lr" },
  { node: "Update", path: ["optimizer", "betas", "[]"], range: "adamBeta" },
  { node: "Update", path: ["optimizer", "eps"], range: "eps" },
  { node: "Update", path: ["optimizer", "weightDecay"], range: "weightDecay" },
  { node: "Update", path: ["optimizer", "gradClip"], range: "gradClip" },
  { node: "Update", path: ["clip"], range: "clip" },
];

/** The values at a RangedField's path under `v`, each with its JSON path (from `at`). */
function valuesAt(v: unknown, path: readonly RangedStep[], at: string, out: [string, unknown][]): void {
  if (path.length === 0) { out.push([at, v]); return; }
  const [step, ...rest] = path as [RangedStep, ...RangedStep[]];
  if (v === null || typeof v !== "object") return;
  if (step === "[]") {
    if (Array.isArray(v)) v.forEach((x, i) => valuesAt(x, rest, `${at}[${i}]`, out));
  } else if (step.startsWith("kind=")) {
    if ((v as { kind?: unknown }).kind === step.slice(5)) valuesAt(v, rest, at, out);
  } else if (Object.hasOwn(v, step)) {
    valuesAt((v as Record<string, unknown>)[step], rest, `${at}.${step}`, out);
  }
}

/**
 * The constants of a schema-valid plan outside their ranges, each with its JSON path (TC7001 on
 * load). Schedules (`{ expr }`) are checked where the runtime evaluates them.
 */
export function planRangeIssues(plan: Plan): { path: string; message: string; hint: string }[] {
  const issues: { path: string; message: string; hint: string }[] = [];
  const check = (path: string, r: NumRange, v: unknown) => {
    if (typeof v === "number" && !inRange(v, r)) issues.push({ path, message: outOfRangeMessage(r, v), hint: planHint("range", { range: rangeFor(r, v) }) });
  };
  plan.graph.nodes.forEach((n, i) => {
    const at = `$.graph.nodes[${i}].params`;
    for (const f of RANGED_FIELDS) {
      if (f.node !== n.kind) continue;
      const found: [string, unknown][] = [];
      valuesAt(n.params, f.path, at, found);
      for (const [path, v] of found) check(path, PLAN_RANGES[f.range], v);
    }
    if (n.kind === "EpisodePlanner") check(`${at}.prefix`, prefixRange(n.params.maxTurns), n.params.prefix);
  });
  return issues;
}
