/**
 * Curriculum fields (the table of docs/LANGUAGE.md) and the evaluation of a curriculum declaration,
 * including `with` derivation and command-line overrides. Each field remembers where its value came
 * from, for `tcod explain`.
 */
import type { CurriculumDecl, Expr, Span } from "../grammar/ast.js";
import type { Level } from "../plan/expr.js";
import { FIELD_DEFAULTS, LOSS_DEFAULTS, OPTIMIZER_DEFAULTS, showDefault } from "../plan/defaults.js";
import { d, didYouMean } from "./diagnostics/index.js";
import type { Evaluator, RecordedEval } from "./evaluate.js";
import { DIMLESS, dimEq, formatDim, isDimless, parseDim, type Dim } from "./units.js";
import { unitRepair } from "./unit-repair.js";
import { constScalar, constValue, invalid, lookup, type Scalar, type Scope, type Value } from "./values.js";

export interface FieldSpec {
  /** Accepted types, tried in order (`turns|depth`). */
  type: string;
  level: Level;
  required?: boolean;
  /** A bare literal number is accepted and given this unit (`steps: 250`). */
  bareUnit?: string;
  doc: string;
  example: string;
  /** What applies when the field is not given (shown by `tcod explain`). */
  default: string;
}

export const CURRICULUM_FIELDS: Record<string, FieldSpec> = {
  teacher: { type: "model", level: "const", required: true, doc: "The teacher model: it scores every student token.", example: "teacher", default: "required" },
  student: { type: "model", level: "const", required: true, doc: "The student model: it acts and learns.", example: "student", default: "required" },
  env: { type: "env", level: "const", required: true, doc: "The training environment and split.", example: 'texthouse(split: "train")', default: "required" },
  steps: { type: "steps", level: "const", required: true, bareUnit: "steps", doc: "Training steps; one step = one explore batch (TCOD's batch_id).", example: "250", default: "required" },
  batch: { type: "tasks|tasks×rollouts", level: "const", bareUnit: "tasks", doc: "Tasks per step × rollouts per task (0 rollouts: no student episodes, for a loss of sft terms alone).", example: "16 tasks × 1 rollout", default: "16 tasks × 1 rollout" },
  train_batch: { type: "turns", level: "const", doc: "Turns per optimiser update (Trinity train_batch_size); default: all turns of the step.", example: "64 turns", default: "all turns of the step in one update" },
  max_turns: { type: "turns", level: "const", doc: "Hmax: the turn limit of full episodes and of evaluation; default: the env's.", example: "30 turns", default: "the env's max_turns" },
  horizon: { type: "turns|depth", level: "episode", doc: "Turn cap of training episodes (TCOD-f2b), or an adaptive depth rule (TurnOPD).", example: "f2b(every: 6 steps, max: 30 turns)", default: "max_turns (no cap)" },
  prefix: { type: "turns", level: "episode", doc: "Expert turns replayed before the student plays (TCOD-b2f).", example: "b2f(every: 5 steps)", default: "0 turns (no expert prefix)" },
  loss: { type: "loss", level: "step", doc: "The advantage terms and their aggregation.", example: "opd()", default: `opd() — coef ${LOSS_DEFAULTS.coef}, ${LOSS_DEFAULTS.estimator}, ${LOSS_DEFAULTS.aggregate}` },
  optimizer: { type: "optimizer", level: "const", doc: "AdamW settings; lr may be a step schedule.", example: "adam(lr: 1e-6)", default: `adam(lr: ${showDefault(OPTIMIZER_DEFAULTS.lr)}) — AdamW, ${OPTIMIZER_DEFAULTS.lossFn.toUpperCase()} loss, clip ${OPTIMIZER_DEFAULTS.clip}, grad_clip ${OPTIMIZER_DEFAULTS.gradClip}` },
  staleness: { type: "steps", level: "const", doc: "Drop samples older than step − staleness (0 = synchronous).", example: "2 steps", default: `${FIELD_DEFAULTS.staleness} steps (synchronous)` },
  temperature: { type: "number", level: "step", doc: "Student sampling temperature during training.", example: "1.0", default: FIELD_DEFAULTS.temperature.toFixed(1) },
  teacher_temperature: { type: "number", level: "const", doc: "Temperature of teacher scoring (TCOD: workflow_args.temperature = 1.0).", example: "1.0", default: FIELD_DEFAULTS.teacherTemperature.toFixed(1) },
  agent: { type: "agent", level: "const", doc: "Prompt template, chat memory and action parser; default: the env's.", example: "tcod_format()", default: "the env's agent format" },
  eval: { type: "eval|list<eval>", level: "const", doc: "Evaluation sets and their cadence.", example: 'evaluate(env: texthouse(split: "valid_seen"))', default: "none" },
  rows: { type: "string", level: "const", doc: 'Experience rows: "turn" (one row per turn, Trinity) or "trajectory" (one row per episode, env tokens masked, tinker).', example: '"turn"', default: '"trajectory" for a served student whose chat memory accumulates, else "turn"' },
  old_logprobs: { type: "string", level: "const", doc: 'Where the student log-probs of the advantage and the PPO/IS ratio come from: "trainer" (recomputed with the trainer\'s weights before the update, Trinity) or "sampler" (the rollout\'s).', example: '"trainer"', default: '"trainer" for a served student, "sampler" for embedded' },
  checkpoint_every: { type: "steps", level: "const", doc: "Checkpoint cadence.", example: "50 steps", default: `min(${FIELD_DEFAULTS.checkpointEveryAtMost} steps, steps)` },
  seed: { type: "number", level: "const", doc: "Seed of task order, sampling and initialisation.", example: "42", default: String(FIELD_DEFAULTS.seed) },
};

export type FieldSource = "source" | "base" | "override" | "sweep";
export interface FieldValue {
  value: Value;
  /** The scope the expression was written in. */
  scope: Scope;
  /** The expression as written, and where. */
  expr: Expr;
  span: Span;
  source: FieldSource;
  /** For `base`: the curriculum it was inherited from; for overrides: the text given. */
  detail?: string;
}

export interface CurriculumValue { name: string; decl: CurriculumDecl; fields: Map<string, FieldValue> }

export interface FieldOverride {
  field: string;
  /** Named arguments down the field's call: `optimizer.lr` → ["lr"]; empty to replace the field. */
  args?: string[];
  expr: Expr; scope: Scope; source: "override" | "sweep"; text: string;
  /** The override as written (`c.optimizer.lr`), for messages. */
  target?: string;
}

/** Collects a curriculum's field expressions through `with` chains, then overrides. */
export function collectFields(decl: CurriculumDecl, scope: Scope, ev: Evaluator, seen: CurriculumDecl[] = []): Map<string, { expr: Expr; scope: Scope; span: Span; source: FieldSource; detail?: string }> {
  const out = new Map<string, { expr: Expr; scope: Scope; span: Span; source: FieldSource; detail?: string }>();
  if (decl.base) {
    const b = lookup(scope, decl.base.name);
    const v = b?.get();
    if (!v || v.kind !== "object" || v.type !== "curriculum" || !v.source) {
      if (!v || v.kind !== "invalid") {
        // The curricula this file declares (imported ones are bound as imports: asking their value
        // would evaluate the imported module's lets, so they are not listed).
        const declared = curriculaInScope(scope).filter((n) => n !== decl.name);
        ev.report(d.unknownCurriculum({
          name: decl.base.name, suggestion: didYouMean(decl.base.name, declared), where: "this file",
          available: declared.length > 0 ? `${declared.join(", ")} (and any it imports)` : "none declared (an imported one must be named in the import)",
        }), decl.base.span);
      }
    } else if (seen.includes(v.source.decl) || v.source.decl === decl) {
      ev.report(d.recursiveFunction({ name: decl.name, chain: [...seen, decl].map((c) => c.name).join(" → ") + ` → ${decl.base.name}` }), decl.base.span);
    } else {
      for (const [k, f] of collectFields(v.source.decl, v.source.scope, ev, [...seen, decl])) {
        out.set(k, { ...f, source: "base", detail: f.detail ?? decl.base.name });
      }
    }
  }
  const own = new Set<string>();
  for (const f of decl.fields) {
    if (own.has(f.name)) { ev.report(d.duplicateField({ field: f.name }), f.nameSpan); continue; }
    own.add(f.name);
    if (!Object.hasOwn(CURRICULUM_FIELDS, f.name)) {
      const names = Object.keys(CURRICULUM_FIELDS);
      ev.report(d.unknownField({ field: f.name, owner: `curriculum '${decl.name}'`, suggestion: didYouMean(f.name, names), available: names.join(", ") }), f.nameSpan);
      continue;
    }
    out.set(f.name, { expr: f.value, scope, span: f.span, source: "source" });
  }
  return out;
}

/** A field's unit: its type, or the one unit among its alternatives (`horizon: turns|depth`); once per type text. */
const fieldDims = new Map<string, Dim | undefined>();
function fieldDim(type: string): Dim | undefined {
  if (fieldDims.has(type)) return fieldDims.get(type);
  const dims = type.split("|").map(parseDim).filter((x) => x !== undefined);
  const dim = dims.length === 1 ? dims[0] : undefined;
  fieldDims.set(type, dim);
  return dim;
}

/**
 * The field's call with one named argument replaced or added (`adam(lr: 0.1)` + lr=0.05 →
 * `adam(lr: 0.05)`), down a path of calls for `loss.inner.coef`; a string says why it cannot be.
 */
function withArgument(e: Expr, path: string[], value: Expr): Expr | string {
  if (e.kind !== "call") return "it is not written as a call";
  const [name, ...rest] = path;
  const at = e.args.findIndex((a) => a.name === name);
  let v: Expr | string = value;
  if (rest.length) {
    const inner = at >= 0 ? e.args[at]!.value : undefined;
    v = inner ? withArgument(inner, rest, value) : `'${name}' is not given in the call`;
    if (typeof v === "string") return v;
  }
  const arg = { name: name!, nameSpan: value.span, value: v, span: value.span };
  const args = at >= 0 ? e.args.map((a, i) => (i === at ? { ...a, value: v as Expr } : a)) : [...e.args, arg];
  return { ...e, args };
}

/**
 * The fields that the points of one sweep evaluate alike, shared between them (compiler/index.ts): a
 * field whose expression names nothing a point sets (`shareable`) is evaluated in the first point and
 * its record replayed in the others (`Evaluator.recorded`), when it read no module value of the
 * point's own (`local`: the entry's, or another module loaded again for the point), reported nothing
 * and did not read the curriculum context; else it is evaluated again.
 */
export interface FieldShare {
  shareable(expr: Expr): boolean;
  /** Whether a module value belongs to the point's own modules (not to one the points share). */
  local(cell: unknown): boolean;
  memo: Map<string, { expr: Expr; record: RecordedEval }>;
}

/** The fields a curriculum must set, in CURRICULUM_FIELDS' order (listed once: every compilation asks). */
let required: [string, FieldSpec][] | undefined;
const requiredFields = () => (required ??= Object.entries(CURRICULUM_FIELDS).filter(([, spec]) => spec.required));

export function evalCurriculum(decl: CurriculumDecl, scope: Scope, ev: Evaluator, overrides: FieldOverride[], share?: FieldShare): CurriculumValue {
  const exprs = collectFields(decl, scope, ev);
  // Unknown override fields were reported when the overrides were read.
  for (const o of overrides) {
    if (!Object.hasOwn(CURRICULUM_FIELDS, o.field)) continue;
    if (!o.args?.length) {
      exprs.set(o.field, { expr: o.expr, scope: o.scope, span: o.expr.span, source: o.source, detail: o.text });
      continue;
    }
    const cur = exprs.get(o.field);
    const nested = cur ? withArgument(cur.expr, o.args, o.expr) : "it is not set (its default applies)";
    if (typeof nested === "string") {
      ev.report(d.nestedOverrideNotCall({ target: o.target ?? [o.field, ...o.args].join("."), arg: o.args.join("."), field: o.field, what: nested, whole: `${decl.name}.${o.field}` }), o.expr.span);
      continue;
    }
    exprs.set(o.field, { expr: nested, scope: cur!.scope, span: o.expr.span, source: o.source, detail: `${o.field}.${o.args.join(".")}=${o.text}` });
  }
  for (const [name, spec] of requiredFields()) {
    if (!exprs.has(name)) {
      ev.report(d.missingField({ owner: `curriculum '${decl.name}'`, field: name, example: spec.example }), decl.nameSpan);
    }
  }
  const fields = new Map<string, FieldValue>();
  // `steps` first: `total_steps` folds to it everywhere else.
  const order = ["steps", ...[...exprs.keys()].filter((k) => k !== "steps")];
  ev.context = {};
  const setContext = (name: string, value: Value) => {
    if (name === "steps" && value.kind === "scalar") {
      const n = constValue(value);
      if (n !== undefined) ev.context = { totalSteps: n };
    }
  };
  for (const name of order) {
    const e = exprs.get(name);
    if (!e) continue;
    const spec = CURRICULUM_FIELDS[name]!;
    const shared = share && (e.source === "source" || e.source === "base") && share.shareable(e.expr) ? share : undefined;
    const hit = shared?.memo.get(name);
    if (hit && hit.expr === e.expr && ev.replayRecorded(hit.record, e.expr.span)) {
      fields.set(name, { value: hit.record.value, scope: e.scope, expr: e.expr, span: e.span, source: e.source, ...(e.detail ? { detail: e.detail } : {}) });
      setContext(name, hit.record.value);
      continue;
    }
    // Tried quietly first: a field whose only errors are units it mixes gets one rewrite that checks.
    const tried = ev.quietly(() => (shared ? ev.recorded(() => checkField(name, spec, ev.expr(e.expr, e.scope), e.expr.span, ev)) : { value: checkField(name, spec, ev.expr(e.expr, e.scope), e.expr.span, ev) }));
    const record = (tried.value as { record?: RecordedEval }).record;
    if (shared && record && tried.reports.length === 0 && !record.cells.some((c, i) => i % 2 === 0 && shared.local(c))) shared.memo.set(name, { expr: e.expr, record });
    // The field's unit: its type, or the one unit among its alternatives (`horizon: turns|depth`).
    const dim = fieldDim(spec.type);
    // (A bare number alone already gets a one-edit hint: `0.5` → `0.5 turns`.)
    const fix = dim && tried.reports.length && e.expr.kind !== "number" ? unitRepair(e.expr, e.scope, dim, tried.reports, ev, (x) => checkField(name, spec, ev.expr(x, e.scope), e.expr.span, ev)) : undefined;
    let value = tried.value.value;
    if (fix !== undefined) {
      ev.report(d.fieldUnits({ field: name, expected: formatDim(dim!), first: tried.reports[0]!.m.message.replace(/\.$/, "").replace(/^./, (c) => c.toLowerCase()), fix }), e.expr.span);
      value = invalid(e.expr.span);
    } else ev.replay(tried.reports);
    fields.set(name, { value, scope: e.scope, expr: e.expr, span: e.span, source: e.source, ...(e.detail ? { detail: e.detail } : {}) });
    setContext(name, value);
  }
  return { name: decl.name, decl, fields };
}

function checkField(name: string, spec: FieldSpec, raw: Value, span: Span, ev: Evaluator): Value {
  if (raw.kind === "invalid") return raw;
  let v = raw;
  // `steps: 250`, `batch: 16`: a bare literal takes the field's unit.
  if (spec.bareUnit && v.kind === "scalar" && v.literal && isDimless(v.dim)) {
    v = constScalar(constValue(v)!, { [spec.bareUnit]: 1 }, v.span);
  }
  const checked = ev.check.type(v, ev.types.of(spec.type), span, `field '${name}'`);
  if (checked.kind === "scalar" && !ev.check.level(checked, spec.level, name, span)) return invalid(span);
  if (checked.kind === "scalar" && spec.level === "const" && checked.tree.op !== "const") {
    ev.report(d.notAConstant({ what: `'${name}'`, level: checked.level }), span);
    return invalid(span);
  }
  return checked;
}

export const scalarOf = (f: FieldValue | undefined): Scalar | undefined => (f?.value.kind === "scalar" ? f.value : undefined);
export const DIMLESS_ONE = (span: Span) => constScalar(1, DIMLESS, span);

/** The names of the curricula declared in `scope` and the scopes around it, in declaration order. */
function curriculaInScope(scope: Scope): string[] {
  const names: string[] = [];
  for (let s: Scope | undefined = scope; s; s = s.parent) {
    for (const [name, b] of s.names) if (b.kind === "curriculum" && !names.includes(name)) names.push(name);
  }
  return names;
}
