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
    switch (n.kind) {
      case "EpisodePlanner":
        check(`${at}.horizon`, PLAN_RANGES.horizon, n.params.horizon);
        check(`${at}.prefix`, prefixRange(n.params.maxTurns), n.params.prefix);
        break;
      case "Rollout": check(`${at}.temperature`, PLAN_RANGES.temperature, n.params.temperature); break;
      case "Evaluate": check(`${at}.temperature`, PLAN_RANGES.temperature, n.params.temperature); break;
      case "TeacherScore": check(`${at}.temperature`, PLAN_RANGES.teacherTemperature, n.params.temperature); break;
      case "Advantage":
        n.params.terms.forEach((t, j) => {
          if (t.kind === "gkd") check(`${at}.terms[${j}].beta`, PLAN_RANGES.gkdBeta, t.beta);
          if (t.kind === "opd") check(`${at}.terms[${j}].clip`, PLAN_RANGES.opdClip, t.clip);
        });
        if (n.params.aggregate.kind === "progressive") check(`${at}.aggregate.weight`, PLAN_RANGES.blendWeight, n.params.aggregate.weight);
        break;
      case "Update": {
        const o = n.params.optimizer;
        check(`${at}.optimizer.lr`, PLAN_RANGES.lr, o.lr);
        o.betas.forEach((b, j) => check(`${at}.optimizer.betas[${j}]`, PLAN_RANGES.adamBeta, b));
        check(`${at}.optimizer.eps`, PLAN_RANGES.eps, o.eps);
        check(`${at}.optimizer.weightDecay`, PLAN_RANGES.weightDecay, o.weightDecay);
        check(`${at}.optimizer.gradClip`, PLAN_RANGES.gradClip, o.gradClip);
        check(`${at}.clip`, PLAN_RANGES.clip, n.params.clip);
        break;
      }
      default: break;
    }
  });
  return issues;
}
