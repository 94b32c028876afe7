/**
 * Native functions. The prelude (math, turn reductions, backends, `adam`, `evaluate`, `weighted`,
 * runtime variables) is visible in every file; `std/core` holds the low-level constructors the
 * stdlib's .tcod files build on (env, agent_format, loss_term, adaptive…).
 */
import type { Span } from "../grammar/ast.js";
import { chooseHint, closestName, d, didYouMean, dt, h, placeholders } from "./diagnostics/index.js";
import { DIMLESS, dimEq, example, formatDim, isDimless } from "./units.js";
import { constScalar, constValue, invalid, isConst, op, varScalar, type Builtin, type BuiltinParam, type CallInfo, type Obj, type ObjType, type Scalar, type Str, type Value } from "./values.js";
import { levelRank, maxLevel } from "../plan/expr.js";
import { inRange, PLAN_RANGES, statedRange, type NumRange } from "../plan/ranges.js";
import { EMBEDDED_DEFAULTS, GRPO_DEFAULTS, LOSS_DEFAULTS, OPENAI_DEFAULTS, OPTIMIZER_DEFAULTS, SIZE_LIMITS, WORKER_DEFAULTS } from "../plan/defaults.js";
import {
  ACTION_PICKS, AGGREGATES, DIALECTS, ESTIMATORS, HISTORY_ENTRY_PLACEHOLDERS, LOSS_FNS, LOSS_KINDS, MEMORY_KINDS, NOISE_SOURCES, ON_INVALID_KINDS,
  PARSER_KINDS, TEMPLATE_PLACEHOLDERS,
} from "../plan/enums.js";

type Impl = Builtin["impl"];

function builtin(name: string, params: BuiltinParam[], doc: string, impl: Impl): Builtin {
  return { kind: "builtin", name, params, doc, impl };
}
const p = (name: string, type: string, def?: () => Value, doc?: string): BuiltinParam => ({ name, type, ...(def ? { default: def } : {}), ...(doc ? { doc } : {}) });

const NOWHERE: Span = { file: "<builtin>", start: { offset: 0, line: 1, column: 1 }, end: { offset: 0, line: 1, column: 1 } };
const num = (v: number) => () => constScalar(v, DIMLESS, NOWHERE);
const str = (v: string) => (): Str => ({ kind: "string", value: v, span: NOWHERE });
const bool = (v: boolean) => () => constScalar(v ? 1 : 0, DIMLESS, NOWHERE, "bool");
const unit = (v: number, u: string) => () => constScalar(v, { [u]: 1 }, NOWHERE);

const scalar = (args: Map<string, Value>, k: string) => args.get(k) as Scalar;
const string = (args: Map<string, Value>, k: string) => (args.get(k) as Str).value;

/** A constant argument, or a diagnostic. */
function constArg(args: Map<string, Value>, k: string, call: CallInfo, what: string): number | undefined {
  const s = scalar(args, k);
  const v = constValue(s);
  if (v === undefined) {
    if (!call.abstract) call.report(d.notAConstant({ what, level: s.level }), call.argSpans.get(k));
    return undefined;
  }
  return v;
}

function checkRange(args: Map<string, Value>, k: string, call: CallInfo, what: string, lo: number, hi: number, range: string, opts: { loOpen?: boolean; hiOpen?: boolean; integer?: boolean } = {}): boolean {
  const s = scalar(args, k);
  const v = constValue(s);
  if (v === undefined) return true;
  if (inRange(v, lo, hi, opts)) return true;
  const stated = statedRange(range, v, hi, opts.hiOpen);
  call.report(d.outOfRange({ what, range: stated, value: String(v), hint: chooseHint(stated) }), call.argSpans.get(k));
  return false;
}

/** `checkRange` against a field's range in the table the plan loader and the runtime share (plan/ranges.ts). */
function checkPlanRange(args: Map<string, Value>, k: string, call: CallInfo, r: NumRange): boolean {
  return checkRange(args, k, call, k, r.lo, r.hi, r.stated, r);
}

function oneOf(args: Map<string, Value>, k: string, call: CallInfo, allowed: readonly string[], what: string): boolean {
  const v = string(args, k);
  if (allowed.includes(v)) return true;
  call.report(d.invalidValue({ what, detail: dt.notOneOf({ value: v, options: allowed.map((a) => `"${a}"`).join(", "), suggestion: didYouMean(v, allowed) }), hint: h.useOneOf({ options: allowed.map((a) => `"${a}"`).join(", ") }) }), call.argSpans.get(k));
  return false;
}

function obj(type: ObjType, args: Map<string, Value>, call: CallInfo): Obj {
  return { kind: "object", type, fields: new Map(args), span: call.span, origin: call.origin };
}

// ---- math ----------------------------------------------------------------------------------------

function sameUnits(name: string, ss: Scalar[], call: CallInfo, keys: string[]): boolean {
  for (let i = 1; i < ss.length; i++) {
    if (!dimEq(ss[0]!.dim, ss[i]!.dim)) {
      call.report(d.unitMismatch({ expected: formatDim(ss[0]!.dim), actual: formatDim(ss[i]!.dim), suggestion: example(constValue(ss[i]!) ?? 1, ss[0]!.dim) }), call.argSpans.get(keys[i]!));
      return false;
    }
  }
  return true;
}

function dimless(name: string, s: Scalar, call: CallInfo, key: string): boolean {
  if (isDimless(s.dim)) return true;
  call.report(d.unitMismatch({ expected: "number", actual: formatDim(s.dim), suggestion: `${name}(x / 1 ${formatDim(s.dim).replace(/s$/, "")})` }), call.argSpans.get(key));
  return false;
}

const unary = (name: "floor" | "ceil" | "round" | "exp" | "log" | "sqrt" | "cos" | "sin", doc: string, keepsUnit = false) =>
  builtin(name, [p("x", "quantity")], doc, (a, call) => {
    const x = scalar(a, "x");
    if (!keepsUnit && !dimless(name, x, call, "x")) return invalid(call.span);
    return op(name, [x], x.dim, "number", call.span);
  });

const binaryUnit = (name: "min" | "max", doc: string) =>
  builtin(name, [p("a", "quantity"), p("b", "quantity")], doc, (a, call) => {
    const xs = [scalar(a, "a"), scalar(a, "b")];
    if (!sameUnits(name, xs, call, ["a", "b"])) return invalid(call.span);
    return op(name, xs, xs[0]!.dim, "number", call.span);
  });

/** Marks a scalar as turn-level (reductions over the turns of a batch). */
function atTurn(s: Scalar): Scalar {
  return levelRank(s.level) >= levelRank("turn") ? s : { ...s, level: maxLevel(s.level, "turn") };
}
const reduction = (name: "zscore" | "softmax_over_turns" | "episode_mean" | "batch_mean", doc: string, keepsUnit: boolean) =>
  builtin(name, [p("x", "quantity")], doc, (a, call) => {
    const x = scalar(a, "x");
    if (!keepsUnit && name === "softmax_over_turns" && !dimless(name, x, call, "x")) return invalid(call.span);
    const r = op(name, [x], keepsUnit ? x.dim : DIMLESS, "number", call.span);
    // A reduction of a constant is still a batch operation: never fold it.
    const tree = isConst(r) ? { op: name, args: [x.tree] } as Scalar["tree"] : r.tree;
    return atTurn({ ...r, tree, reads: r.reads.length ? r.reads : ["turn.index"] });
  });

function piecewise(a: Map<string, Value>, call: CallInfo): Value {
  const at = (a.get("at") as { items: Scalar[] }).items;
  const values = (a.get("values") as { items: Scalar[] }).items;
  if (at.length === 0 || at.length !== values.length) {
    call.report(d.invalidValue({ what: "piecewise schedule", detail: dt.pointsAndValues({ points: at.length, values: values.length }), hint: h.piecewiseLengths() }), call.span);
    return invalid(call.span);
  }
  const xs: number[] = [];
  for (const s of at) {
    const v = constValue(s);
    if (v === undefined) { call.report(d.notAConstant({ what: "A piecewise point", level: s.level }), s.span); return invalid(call.span); }
    if (xs.length && v <= xs[xs.length - 1]!) {
      call.report(d.invalidValue({ what: "piecewise schedule", detail: dt.pointsMustIncrease(), hint: h.piecewiseSorted() }), s.span);
      return invalid(call.span);
    }
    xs.push(v);
  }
  if (!sameUnits("piecewise", values, call, values.map(() => "values"))) return invalid(call.span);
  const step = varScalar("step", call.span);
  const c = (v: number) => constScalar(v, DIMLESS, call.span);
  const dim = values[0]!.dim;
  // Linear between points, constant outside: nested `if` from the right.
  let result: Scalar = values[values.length - 1]!;
  for (let i = xs.length - 2; i >= 0; i--) {
    const frac = op("div", [op("sub", [step, constScalar(xs[i]!, { steps: 1 }, call.span)], { steps: 1 }, "number", call.span), c(xs[i + 1]! - xs[i]!)], DIMLESS, "number", call.span);
    const lerp = op("add", [values[i]!, op("mul", [op("sub", [values[i + 1]!, values[i]!], dim, "number", call.span), frac], dim, "number", call.span)], dim, "number", call.span);
    result = op("if", [op("lt", [step, constScalar(xs[i + 1]!, { steps: 1 }, call.span)], DIMLESS, "bool", call.span), lerp, result], dim, "number", call.span);
  }
  return op("if", [op("lt", [step, constScalar(xs[0]!, { steps: 1 }, call.span)], DIMLESS, "bool", call.span), values[0]!, result], dim, "number", call.span);
}

// ---- constructors --------------------------------------------------------------------------------

function lossTerm(a: Map<string, Value>, call: CallInfo): Value {
  const kind = string(a, "kind");
  if (!oneOf(a, "kind", call, LOSS_KINDS, "loss kind")) return invalid(call.span);
  const coef = scalar(a, "coef");
  if (!dimless("loss_term", coef, call, "coef")) return invalid(call.span);
  const aggregate = string(a, "aggregate");
  if (aggregate !== "" && !oneOf(a, "aggregate", call, AGGREGATES, "aggregate")) return invalid(call.span);
  if (!oneOf(a, "estimator", call, ESTIMATORS, "KL estimator")) return invalid(call.span);
  const blend = scalar(a, "blend");
  if (kind === "gkd") {
    if (!dimless("loss_term", scalar(a, "beta"), call, "beta")) return invalid(call.span);
    if (!checkPlanRange(a, "beta", call, PLAN_RANGES.gkdBeta)) return invalid(call.span);
  }
  if (kind === "opd") {
    const clip = constArg(a, "clip", call, "opd(clip)");
    if (clip === undefined) return invalid(call.span);
    if (!checkPlanRange(a, "clip", call, PLAN_RANGES.opdClip)) return invalid(call.span);
    const estimator = string(a, "estimator");
    if (clip > 0 && estimator !== "k1") {
      call.report(d.invalidValue({ what: "opd clip", detail: dt.clipNeedsK1({ estimator }), hint: h.clipWithK1() }), call.argSpans.get("clip"));
      return invalid(call.span);
    }
  }
  if (kind === "sft") {
    if (constArg(a, "noise", call, "sft(noise)") === undefined) return invalid(call.span);
    if (!checkRange(a, "noise", call, "noise", 0, 1, "in [0, 1) (the probability of a random command per demonstration turn)", { hiOpen: true })) return invalid(call.span);
    if (!oneOf(a, "noise_from", call, NOISE_SOURCES, "noise source")) return invalid(call.span);
  }
  const params = new Map<string, Value>([["estimator", a.get("estimator")!], ["normalize", a.get("normalize")!], ["eps", a.get("eps")!], ["group", a.get("group")!], ["beta", a.get("beta")!], ["noise", a.get("noise")!], ["noise_from", a.get("noise_from")!], ["clip", a.get("clip")!]]);
  return {
    kind: "loss",
    terms: [{ kind: kind as "opd", coef, params, span: call.span }],
    span: call.span,
    ...(aggregate ? { aggregate: { mode: aggregate, ...(aggregate === "progressive" ? { weight: blend } : {}), span: call.span } } : {}),
  };
}

export function preludeBuiltins(): Map<string, Value> {
  const m = new Map<string, Value>();
  const add = (b: Builtin) => m.set(b.name, b);
  add(binaryUnit("min", "The smaller of two values of the same unit."));
  add(binaryUnit("max", "The larger of two values of the same unit."));
  add(builtin("clamp", [p("x", "quantity"), p("lo", "quantity"), p("hi", "quantity")], "max(lo, min(x, hi)) — as TCOD's b2f prefix rule, `lo` wins when lo > hi.", (a, call) => {
    const xs = [scalar(a, "x"), scalar(a, "lo"), scalar(a, "hi")];
    if (!sameUnits("clamp", xs, call, ["x", "lo", "hi"])) return invalid(call.span);
    return op("clamp", xs, xs[0]!.dim, "number", call.span);
  }));
  add(unary("floor", "Largest integer ≤ x (x a number: write `floor(step / 6 steps)`)."));
  add(unary("ceil", "Smallest integer ≥ x."));
  add(unary("round", "Nearest integer."));
  add(unary("exp", "e^x."));
  add(unary("log", "Natural logarithm."));
  add(unary("sqrt", "Square root."));
  add(unary("cos", "Cosine (radians)."));
  add(unary("sin", "Sine (radians)."));
  add(builtin("abs", [p("x", "quantity")], "|x|, same unit.", (a, call) => op("abs", [scalar(a, "x")], scalar(a, "x").dim, "number", call.span)));
  add(builtin("pow", [p("x", "number"), p("y", "number")], "x^y.", (a, call) => op("pow", [scalar(a, "x"), scalar(a, "y")], DIMLESS, "number", call.span)));
  m.set("pi", constScalar(Math.PI, DIMLESS, NOWHERE));
  add(reduction("zscore", "Standardise over every turn of the batch: (x − mean) / (std + 1e-6).", false));
  add(reduction("softmax_over_turns", "Softmax of x over the turns of each episode.", false));
  add(reduction("episode_mean", "Mean of x over the turns of each episode.", true));
  add(reduction("batch_mean", "Mean of x over every turn of the batch.", true));
  add(builtin("piecewise", [p("at", "list<steps>"), p("values", "list<quantity>")], "Linear between (at[i], values[i]), constant outside.", piecewise));

  add(builtin("embedded", [p("smoothing", "number", num(EMBEDDED_DEFAULTS.smoothing)), p("features", "number", num(EMBEDDED_DEFAULTS.features)), p("forward_kl", "number", num(0)), p("candidate_log_odds", "number", num(EMBEDDED_DEFAULTS.candidateLogOdds))],
    "The embedded CPU backend: an oracle teacher (mass 1 − smoothing on the env expert's optimal actions) and a log-linear student with `features` hashed features; `candidate_log_odds` gives tokens that continue an action listed in the prompt a fixed prior bonus. The loss is the curriculum's (`opd(estimator: \"full\")` is the exact reverse KL, `gkd(beta)` mixes in forward KL); `forward_kl` is no longer a backend option.", (a, call) => {
      if (!checkRange(a, "smoothing", call, "smoothing", 0, 1, "in [0, 1]")) return invalid(call.span);
      if (!checkRange(a, "features", call, "features", 16, 1 << 24, "an integer in [16, 2^24]", { integer: true })) return invalid(call.span);
      if (call.argSpans.get("forward_kl") !== call.span) { // given explicitly (defaults carry the call's span)
        call.report(d.invalidValue({
          what: "embedded backend option forward_kl",
          detail: dt.forwardKlNotABackendOption(),
          hint: h.forwardKlIsALoss(),
        }), call.argSpans.get("forward_kl"));
        return invalid(call.span);
      }
      if (!checkRange(a, "candidate_log_odds", call, "candidate_log_odds", 0, 50, "in [0, 50]")) return invalid(call.span);
      a.set("kind", { kind: "string", value: "embedded", span: call.span });
      return obj("backend", a, call);
    }));
  add(builtin("openai", [p("url", "string"), p("dialect", "string", str(OPENAI_DEFAULTS.dialect)), p("api_key_env", "string", str("")), p("concurrency", "number", num(OPENAI_DEFAULTS.concurrency)), p("timeout_s", "number", num(OPENAI_DEFAULTS.timeoutS))],
    "An OpenAI-compatible inference server (vLLM, SGLang, or a tcod worker).", (a, call) => {
      if (!oneOf(a, "dialect", call, DIALECTS, "dialect")) return invalid(call.span);
      if (!checkRange(a, "concurrency", call, "concurrency", 1, 1e6, "an integer ≥ 1", { integer: true })) return invalid(call.span);
      if (!checkRange(a, "timeout_s", call, "timeout_s", 0, 1e7, "> 0 seconds", { loOpen: true })) return invalid(call.span);
      a.set("kind", { kind: "string", value: "openai", span: call.span });
      return obj("backend", a, call);
    }));
  add(builtin("worker", [p("url", "string", str(WORKER_DEFAULTS.url)), p("start", "bool", bool(false)), p("token_env", "string", str("")), p("concurrency", "number", num(WORKER_DEFAULTS.concurrency)), p("timeout_s", "number", num(WORKER_DEFAULTS.timeoutS))],
    "The tcod Python worker (worker/): sampling, scoring and training on GPU.", (a, call) => {
      if (!checkRange(a, "concurrency", call, "concurrency", 1, 1e6, "an integer ≥ 1", { integer: true })) return invalid(call.span);
      if (!checkRange(a, "timeout_s", call, "timeout_s", 0, 1e7, "> 0 seconds", { loOpen: true })) return invalid(call.span);
      a.set("kind", { kind: "string", value: "worker", span: call.span });
      return obj("backend", a, call);
    }));
  const O = OPTIMIZER_DEFAULTS;
  add(builtin("adam", [p("lr", "number"), p("betas", "list<number>", () => ({ kind: "list", items: O.betas.map((b) => num(b)()), span: NOWHERE })), p("eps", "number", num(O.eps)), p("weight_decay", "number", num(O.weightDecay)), p("grad_clip", "number", num(O.gradClip)), p("loss_fn", "string", str(O.lossFn)), p("clip", "number", num(O.clip))],
    "AdamW. `lr` may be a step schedule. loss_fn: \"ppo\" (Trinity's default for OPD, clip 0.2, dual-clip 3) or \"importance_sampling\" (Tinker).", (a, call) => {
      const lr = scalar(a, "lr");
      if (isConst(lr) && !checkPlanRange(a, "lr", call, PLAN_RANGES.lr)) return invalid(call.span);
      const betas = (a.get("betas") as { items: Scalar[] }).items;
      if (betas.length !== 2 || betas.some((b) => !isConst(b) || !inRange(constValue(b)!, PLAN_RANGES.adamBeta))) {
        call.report(d.outOfRange({ what: "betas", range: `two constants ${PLAN_RANGES.adamBeta.stated}`, value: betas.map((b) => constValue(b) ?? "?").join(", "), hint: h.betasExample() }), call.argSpans.get("betas"));
        return invalid(call.span);
      }
      if (!checkPlanRange(a, "grad_clip", call, PLAN_RANGES.gradClip)) return invalid(call.span);
      if (!checkPlanRange(a, "clip", call, PLAN_RANGES.clip)) return invalid(call.span);
      if (!checkPlanRange(a, "eps", call, PLAN_RANGES.eps)) return invalid(call.span);
      if (!checkPlanRange(a, "weight_decay", call, PLAN_RANGES.weightDecay)) return invalid(call.span);
      if (!oneOf(a, "loss_fn", call, LOSS_FNS, "loss_fn")) return invalid(call.span);
      return obj("optimizer", a, call);
    }));
  add(builtin("evaluate", [p("env", "env"), p("every", "steps", unit(5, "steps")), p("tasks", "tasks", unit(32, "tasks")), p("temperature", "number", num(0.4)), p("max_turns", "turns", unit(0, "turns")), p("name", "string", str("")), p("at_start", "bool", bool(true)), p("from", "steps", unit(0, "steps"))],
    "Evaluate every `every` steps on `tasks` tasks of `env`, uncapped (the env's max turns unless `max_turns` is given); with `from`, only at the multiples of `every` from that step on (and the last step, and step 0 with `at_start`).", (a, call) => {
      for (const k of ["every", "tasks", "from"]) if (constArg(a, k, call, `evaluate(${k})`) === undefined) return invalid(call.span);
      if (!checkRange(a, "every", call, "every", 1, 1e9, "≥ 1 step", { integer: true })) return invalid(call.span);
      if (!checkRange(a, "from", call, "from", 0, 1e9, "an integer ≥ 0 steps", { integer: true })) return invalid(call.span);
      if (!checkRange(a, "tasks", call, "tasks", 1, SIZE_LIMITS.episodesPerStep, `an integer in [1, ${SIZE_LIMITS.episodesPerStep}] tasks`, { integer: true })) return invalid(call.span);
      if (!checkPlanRange(a, "temperature", call, PLAN_RANGES.temperature)) return invalid(call.span);
      return obj("eval", a, call);
    }));
  add(builtin("weighted", [p("loss", "loss"), p("by", "per_turn<number>")],
    "Multiplies every turn's advantages by a turn-level weight (e.g. T-DUR).", (a, call) => {
      const l = a.get("loss") as Extract<Value, { kind: "loss" }>;
      if (l.weights) { call.report(d.invalidValue({ what: "weighting", detail: dt.alreadyWeighted(), hint: h.weightedOnce() }), call.span); return invalid(call.span); }
      const by = scalar(a, "by");
      if (!dimless("weighted", by, call, "by")) return invalid(call.span);
      return { ...l, weights: by, span: call.span };
    }));
  return m;
}

// ---- feedback rules (plan/feedback.ts) -------------------------------------------------------------

/**
 * A feedback node: never folded (its value comes from the run's metrics), at least feedback-level.
 * `shown` names the rule in level diagnostics ("it reads `ema(…)`").
 */
function feedbackNode(opName: "ema" | "window_mean" | "stage" | "kl_turn", args: Scalar[], dim: Scalar["dim"], type: "number" | "bool", call: CallInfo): Scalar {
  let level: Scalar["level"] = "feedback";
  const reads = new Set<string>([`${opName}(…)`]);
  for (const a of args) { level = maxLevel(level, a.level); a.reads.forEach((r) => reads.add(r)); }
  const abstract = args.some((a) => a.abstract);
  return { kind: "scalar", type, dim, level, tree: { op: opName, args: args.map((a) => a.tree) }, reads: [...reads], span: call.span, ...(abstract ? { abstract } : {}) };
}

/** A rule's signal must be known by the start of a step: constants, the clock or feedback. */
function atMostFeedback(s: Scalar, call: CallInfo, key: string, fn: string): boolean {
  if (call.abstract || levelRank(s.level) <= levelRank("feedback")) return true;
  const reads = s.reads.filter((r) => r.startsWith("episode.") || r.startsWith("turn.") || r.startsWith("token."));
  call.report(d.levelTooHigh({
    field: `${fn}(${key})`, max: "feedback", level: s.level, reads: reads.map((r) => `\`${r}\``).join(", ") || "runtime values",
    hint: h.feedbackStepLevel(),
  }), call.argSpans.get(key));
  return false;
}

/** `init` of a smoother: a constant in x's unit (a bare 0 fits any unit). */
function smootherInit(a: Map<string, Value>, call: CallInfo, fn: string, x: Scalar): Scalar | undefined {
  const init = scalar(a, "init");
  const v = constValue(init);
  if (v === undefined) { if (!call.abstract) call.report(d.notAConstant({ what: `${fn}(init)`, level: init.level }), call.argSpans.get("init")); return call.abstract ? init : undefined; }
  if (v === 0 && isDimless(init.dim)) return constScalar(0, x.dim, init.span);
  if (!dimEq(init.dim, x.dim)) {
    call.report(d.unitMismatch({ expected: formatDim(x.dim), actual: formatDim(init.dim), suggestion: example(v, x.dim) }), call.argSpans.get("init"));
    return undefined;
  }
  return init;
}

function feedbackBuiltins(add: (b: Builtin) => void): void {
  add(builtin("ema", [p("x", "quantity"), p("decay", "number", num(0.9)), p("init", "quantity", num(0))],
    "Exponential moving average of a feedback value over finished steps: the first observation sets m = x, then m ← decay·m + (1 − decay)·x; `init` before any step has finished.", (a, call) => {
      const x = scalar(a, "x");
      if (!atMostFeedback(x, call, "x", "ema")) return invalid(call.span);
      const decay = constArg(a, "decay", call, "ema(decay)");
      if (decay === undefined && !call.abstract) return invalid(call.span);
      if (!checkRange(a, "decay", call, "decay", 0, 1, "in [0, 1)") || decay === 1) {
        if (decay === 1) call.report(d.outOfRange({ what: "decay", range: "in [0, 1)", value: "1", hint: h.decayMoves() }), call.argSpans.get("decay"));
        return invalid(call.span);
      }
      const init = smootherInit(a, call, "ema", x);
      if (!init) return invalid(call.span);
      return feedbackNode("ema", [x, scalar(a, "decay"), init], x.dim, "number", call);
    }));
  add(builtin("window_mean", [p("x", "quantity"), p("size", "steps"), p("init", "quantity", num(0))],
    "Mean of a feedback value over the last `size` finished steps (fewer while fewer have finished); `init` before any.", (a, call) => {
      const x = scalar(a, "x");
      if (!atMostFeedback(x, call, "x", "window_mean")) return invalid(call.span);
      if (constArg(a, "size", call, "window_mean(size)") === undefined && !call.abstract) return invalid(call.span);
      if (!checkRange(a, "size", call, "size", 1, 1e6, "an integer ≥ 1 step", { integer: true })) return invalid(call.span);
      const init = smootherInit(a, call, "window_mean", x);
      if (!init) return invalid(call.span);
      return feedbackNode("window_mean", [x, scalar(a, "size"), init], x.dim, "number", call);
    }));
  add(builtin("stage", [p("when", "bool"), p("patience", "steps", unit(1, "steps")), p("max", "number", num(1e9))],
    "A pacing stage: 0 at the start; advances by one each time `when` has held for `patience` consecutive finished steps (the streak restarts after each advance, and a step where it fails resets it); stops at `max`.", (a, call) => {
      const when = scalar(a, "when");
      if (!atMostFeedback(when, call, "when", "stage")) return invalid(call.span);
      for (const k of ["patience", "max"]) if (constArg(a, k, call, `stage(${k})`) === undefined && !call.abstract) return invalid(call.span);
      if (!checkRange(a, "patience", call, "patience", 1, 1e6, "an integer ≥ 1 step", { integer: true })) return invalid(call.span);
      if (!checkRange(a, "max", call, "max", 0, 1e9, "an integer ≥ 0", { integer: true })) return invalid(call.span);
      return feedbackNode("stage", [when, scalar(a, "patience"), scalar(a, "max")], DIMLESS, "number", call);
    }));
  add(builtin("choose", [p("key", "string"), p("options", "record")],
    "The option named `key` (a string known at compile time); any other key is an error listing the options.", (a, call) => {
      const key = string(a, "key");
      const opts = a.get("options") as Extract<Value, { kind: "record" }>;
      const v = opts.fields.get(key);
      if (v) return v;
      const names = [...opts.fields.keys()];
      if (call.abstract) return opts.fields.values().next().value ?? invalid(call.span);
      call.report(d.invalidValue({ what: "option", detail: dt.notOneOf({ value: key, options: names.map((n) => `"${n}"`).join(", "), suggestion: didYouMean(key, names) }), hint: h.useOneOf({ options: names.map((n) => `"${n}"`).join(", ") }) }), call.argSpans.get("key"));
      return invalid(call.span);
    }));
  add(builtin("kl_turn", [p("index", "turns")],
    "The mean reverse KL of the turns at `index` (0-based) in the last finished step; that step's mean KL where no episode reached the index; 0 before any step has finished.", (a, call) => {
      const i = scalar(a, "index");
      if (!atMostFeedback(i, call, "index", "kl_turn")) return invalid(call.span);
      return feedbackNode("kl_turn", [i], DIMLESS, "number", call);
    }));
}

export function coreBuiltins(): Map<string, Value> {
  const m = new Map<string, Value>();
  const add = (b: Builtin) => m.set(b.name, b);
  feedbackBuiltins(add);
  add(builtin("env", [p("kind", "string"), p("split", "string"), p("splits", "list<string>"), p("max_turns", "turns"), p("agent", "agent"),
    p("server", "string", str("")), p("task_file", "string", str("")), p("pool", "number", num(4)), p("params", "record", () => ({ kind: "record", fields: new Map(), span: NOWHERE }))],
    "An environment declaration; `split` must be one of `splits`.", (a, call) => {
      const splits = (a.get("splits") as { items: Str[] }).items.map((s) => s.value);
      if (!oneOf(a, "split", call, splits, `split of ${string(a, "kind")}`)) return invalid(call.span);
      if (!checkRange(a, "max_turns", call, "max_turns", 1, 1e6, "≥ 1 turn", { integer: true })) return invalid(call.span);
      if (!checkRange(a, "pool", call, "pool", 1, 1024, "an integer in [1, 1024]", { integer: true })) return invalid(call.span);
      return obj("env", a, call);
    }));
  add(builtin("agent_format", [p("name", "string"), p("system", "string"), p("template", "string"), p("template_no_history", "string"),
    p("history_window", "number", num(2)), p("history_entry", "string"), p("memory", "string", str("accumulate")), p("memory_window", "turns", unit(0, "turns")),
    p("parser", "string"), p("tag", "string", str("action")), p("think", "bool", bool(true)), p("react_prefix", "string", str("Action:")),
    p("max_tokens", "tokens", unit(512, "tokens")), p("thinking", "bool", bool(true)), p("on_invalid", "string", str("feedback")), p("invalid_text", "string", str("Invalid Action.")),
    p("action_pick", "string", str("last"))],
    "How observations become prompts and responses become actions.", (a, call) => {
      if (!oneOf(a, "memory", call, MEMORY_KINDS, "memory")) return invalid(call.span);
      if (!oneOf(a, "parser", call, PARSER_KINDS, "parser")) return invalid(call.span);
      if (!oneOf(a, "on_invalid", call, ON_INVALID_KINDS, "on_invalid")) return invalid(call.span);
      if (!oneOf(a, "action_pick", call, ACTION_PICKS, "action_pick")) return invalid(call.span);
      if (!checkRange(a, "history_window", call, "history_window", 0, 1000, "an integer ≥ 0", { integer: true })) return invalid(call.span);
      if (!checkRange(a, "max_tokens", call, "max_tokens", 1, 1e7, "≥ 1 token", { integer: true })) return invalid(call.span);
      // The runtime fills exactly these placeholders; anything else would reach the model verbatim.
      const allowed: Record<string, readonly string[]> = {
        template: TEMPLATE_PLACEHOLDERS, template_no_history: TEMPLATE_PLACEHOLDERS, history_entry: HISTORY_ENTRY_PLACEHOLDERS,
      };
      for (const [k, names] of Object.entries(allowed)) {
        for (const { name } of placeholders(string(a, k))) {
          if (!names.includes(name)) {
            call.report(d.invalidValue({ what: `placeholder in ${k}`, detail: dt.placeholderNotFilled({ placeholder: `{${name}}`, suggestion: suggestPlaceholder(name, names) }), hint: h.placeholdersOf({ field: k, names: names.map((n) => `{${n}}`).join(" ") }) }), call.argSpans.get(k));
            return invalid(call.span);
          }
        }
      }
      return obj("agent", a, call);
    }));
  add(builtin("loss_term", [p("kind", "string"), p("coef", "number", num(LOSS_DEFAULTS.coef)), p("estimator", "string", str(LOSS_DEFAULTS.estimator)), p("aggregate", "string", str("")),
    p("blend", "number", num(0)), p("normalize", "bool", bool(GRPO_DEFAULTS.normalize)), p("eps", "number", num(GRPO_DEFAULTS.eps)), p("group", "number", num(0)), p("beta", "number", num(0)), p("noise", "number", num(0)),
    p("noise_from", "string", str("admissible")), p("clip", "number", num(0))],
    "One loss term: opd, grpo, sft or gkd.", lossTerm));
  add(builtin("adaptive", [p("probe_every", "steps"), p("probe_episodes", "episodes"), p("rule", "depth_rule"), p("initial", "turns"), p("min", "turns", unit(1, "turns"))],
    "TurnOPD adaptive depth: probe full-horizon episodes every `probe_every` steps and move the cap.", (a, call) => {
      for (const k of ["probe_every", "probe_episodes", "initial", "min"]) {
        if (constArg(a, k, call, `adaptive(${k})`) === undefined) return invalid(call.span);
        const hi = k === "probe_episodes" ? SIZE_LIMITS.episodesPerStep : 1e9;
        if (!checkRange(a, k, call, k, 1, hi, hi === 1e9 ? "an integer ≥ 1" : `an integer in [1, ${hi}]`, { integer: true })) return invalid(call.span);
      }
      return obj("depth", a, call);
    }));
  add(builtin("coverage", [p("keep", "number")], "Cap = smallest H whose turns hold `keep` of all still-running episode-turns.", (a, call) => {
    if (!checkRange(a, "keep", call, "keep", 0, 1, "in (0, 1]", { loOpen: true })) return invalid(call.span);
    a.set("kind", { kind: "string", value: "coverage", span: call.span });
    return obj("depth_rule", a, call);
  }));
  add(builtin("divergence", [p("ratio", "number")], "Cap = first turn whose mean KL exceeds `ratio` × the median of turns 1–3.", (a, call) => {
    if (!checkRange(a, "ratio", call, "ratio", 0, 1e9, "> 0", { loOpen: true })) return invalid(call.span);
    a.set("kind", { kind: "string", value: "divergence", span: call.span });
    return obj("depth_rule", a, call);
  }));
  return m;
}

/** " (did you mean {x}?)" for the closest placeholder name, else "". */
function suggestPlaceholder(name: string, names: readonly string[]): string {
  const best = closestName(name, names);
  return best === undefined ? "" : dt.placeholderSuggestion({ placeholder: `{${best}}` });
}
