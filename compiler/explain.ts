/**
 * `tcod explain CURRICULUM.FIELD`: the value, its binding-time level, where it came from (source,
 * `with` base, --set override or sweep; the function that computed it), and its values at steps.
 */
import type { Expr } from "../grammar/ast.js";
import { evalScalar, readsFeedback } from "../plan/expr.js";
import { planReplay } from "../plan/schedules.js";
import type { Observation } from "../plan/feedback.js";
import { printExpr } from "../plan/print.js";
import { CURRICULUM_FIELDS } from "./curriculum.js";
import type { CompiledPlan } from "./index.js";
import { h } from "./diagnostics/index.js";
import { formatDim } from "./units.js";
import { lookup, type Loss, type Scalar, type Value } from "./values.js";

export interface Explanation {
  target: string;
  value: string;
  kind: string;
  level?: string;
  unit?: string;
  reads?: string[];
  origin: string[];
  /** Values at the asked steps; for episode-level values, one row per expert length. */
  table?: { expertLength?: number; label?: string; values: { step: number; value: number }[] }[];
  note?: string;
  /** A feedback-level value explained without a trace: its values need one (TC7012). */
  needsTrace?: boolean;
  /** With a trace: the stages and signals along it (when each stage advanced, and on what). */
  stages?: { name: string; rule: string; advances: { step: number; observed: number; signal: number | null }[] }[];
}

/** A target `explain` cannot resolve: what is wrong, and a hint that names what can be explained there. */
export interface ExplainMiss { error: string; available: string[]; hint: string }

/**
 * The members `explain` can reach below a value: an object's or record's fields; a loss's terms by
 * kind (`loss.opd.coef`), and with a single term its coefficient and arguments directly
 * (`loss.coef`, `loss.estimator`), since `opd(coef: 1)` reads as a call with those arguments.
 */
const TERM_PARAMS: Record<Loss["terms"][number]["kind"], readonly string[]> = {
  opd: ["estimator", "clip"], grpo: ["group", "normalize", "eps"], gkd: ["beta"], sft: ["noise", "noise_from"],
};

function membersOf(v: Value): Map<string, Value> | undefined {
  if (v.kind === "object" || v.kind === "record") return v.fields;
  if (v.kind !== "loss") return undefined;
  // A term carries every kind's parameters (builtins.ts lossTerm); its own are the ones its function takes.
  const termFields = (t: Loss["terms"][number]) => new Map<string, Value>([["coef", t.coef], ...[...t.params].filter(([k]) => TERM_PARAMS[t.kind].includes(k))]);
  const out = new Map<string, Value>();
  for (const t of v.terms) {
    // A kind given twice has no one member to name.
    if (v.terms.filter((x) => x.kind === t.kind).length === 1) out.set(t.kind, { kind: "record", fields: termFields(t), span: t.span });
  }
  if (v.terms.length === 1) for (const [k, x] of termFields(v.terms[0]!)) if (!out.has(k)) out.set(k, x);
  return out;
}

export function explain(compiled: CompiledPlan, path: string[], steps: number[], expertLengths: number[] | undefined, sources: Map<string, string>, describe: (file: string, line: number, col: number) => string, trace?: Observation[]): Explanation | ExplainMiss {
  const [field, ...rest] = path;
  const fv = field ? compiled.curriculum.fields.get(field) : undefined;
  if (!fv) {
    const spec = field && Object.hasOwn(CURRICULUM_FIELDS, field) ? CURRICULUM_FIELDS[field] : undefined;
    if (!spec) {
      const available = Object.keys(CURRICULUM_FIELDS);
      return { error: `a curriculum has no field '${field ?? ""}'`, available, hint: h.explainFields({ fields: available.join(", ") }) };
    }
    // A default is a value of its own, not the members a call would have had: `horizon.every` of an unset horizon names nothing.
    if (rest.length > 0) return { error: `'${field}' is not set in curriculum '${compiled.curriculum.name}', so it has no member '${rest[0]}' (its default: ${spec.default})`, available: [], hint: h.explainDefault({ target: `${compiled.curriculum.name}.${field}` }) };
    return { target: `${compiled.curriculum.name}.${path.join(".")}`, kind: "default", value: spec.default, origin: ["not set in the curriculum: the default applies"], note: spec.doc };
  }
  let v: Value = fv.value;
  for (const [i, p] of rest.entries()) {
    const owner = [field, ...rest.slice(0, i)].join(".");
    const members = membersOf(v);
    const next = members?.get(p);
    if (next) { v = next; continue; }
    const cur = compiled.curriculum.name;
    if (members && members.size > 0) {
      const available = [...members.keys()];
      return { error: `'${owner}' has no member '${p}'`, available, hint: h.explainMembers({ owner, members: available.map((m) => `${cur}.${owner}.${m}`).join(", ") }) };
    }
    // A number or schedule keeps no members: a function's arguments (`f2b(every: …)`) went into its value.
    const made = i === 0 && fv.expr.kind === "call" ? `, computed by the call \`${(sources.get(fv.expr.span.file) ?? "").slice(fv.expr.span.start.offset, fv.expr.span.end.offset)}\`` : "";
    const what = v.kind === "scalar" ? `a ${v.level === "const" ? "constant" : `${v.level}-level`} value in ${formatDim(v.dim)}` : `a ${v.kind}`;
    return { error: `'${owner}' is ${what}${made}; it has no member '${p}'`, available: [], hint: h.explainValueItself({ target: `${cur}.${owner}` }) };
  }
  const target = `${compiled.curriculum.name}.${path.join(".")}`;
  const text = (e: Expr) => (sources.get(e.span.file) ?? "").slice(e.span.start.offset, e.span.end.offset);
  const where = describe(fv.expr.span.file, fv.expr.span.start.line, fv.expr.span.start.column);
  const origin: string[] = [];
  switch (fv.source) {
    case "source": origin.push(`${where}  ${field}: ${text(fv.expr)}`); break;
    case "base": origin.push(`inherited from curriculum ${fv.detail} (${where})  ${field}: ${text(fv.expr)}`); break;
    case "override": origin.push(`--set ${fv.detail?.startsWith(`${field}.`) ? fv.detail : `${field}=${fv.detail}`}`); break;
    case "sweep": origin.push(`sweep point ${field}=${fv.detail} (${where})`); break;
  }
  const callee = fv.expr.kind === "call" && fv.expr.callee.kind === "name" ? fv.expr.callee.name : fv.expr.kind === "name" ? fv.expr.name : undefined;
  if (callee) {
    const b = lookup(fv.scope, callee);
    if (b) origin.push(`${callee}: ${b.describe}`);
    const bv = b?.get();
    if (bv?.kind === "fn" && bv.decl.doc) origin.push(...bv.decl.doc.split("\n").map((l) => `  ${l.trim()}`));
  }

  if (v.kind === "scalar") return explainScalar(v, target, origin, steps, expertLengths, compiled, trace);
  if (v.kind === "loss") {
    const terms = v.terms.map((t) => `${printExpr(t.coef.tree)} × ${t.kind}`).join(" + ");
    const rows = v.terms.map((t) => ({ name: `${t.kind} coef`, values: steps.map((s) => evalScalar(t.coef.tree, { step: s, total_steps: compiled.plan.clock.steps })) }));
    return {
      target, kind: "loss", value: terms + (v.aggregate ? `, aggregate ${v.aggregate.mode}${v.aggregate.weight ? ` (turn_mean weight ${printExpr(v.aggregate.weight.tree)})` : ""}` : ", aggregate token_mean") + (v.weights ? `, turn weights ${printExpr(v.weights.tree)}` : ""),
      level: "step", origin, ...(steps.length ? { table: rows.map((r) => ({ values: r.values.map((value, i) => ({ step: steps[i]!, value })) })) } : {}),
      note: rows.map((r) => r.name).join(" | "),
    };
  }
  return { target, kind: v.kind === "object" ? v.type : v.kind, value: summarise(v), level: "const", origin };
}

function explainScalar(v: Scalar, target: string, origin: string[], steps: number[], lengths: number[] | undefined, compiled: CompiledPlan, trace?: Observation[]): Explanation {
  const total = compiled.plan.clock.steps;
  const base: Explanation = {
    target, kind: v.type, value: printExpr(v.tree), level: v.level, unit: formatDim(v.dim), reads: v.reads, origin,
  };
  if (v.level === "turn" || v.level === "token") return { ...base, note: `known only at ${v.level} level, from ${v.reads.join(", ")}: it is evaluated by the runtime over the turns of each batch` };
  const feedback = readsFeedback(v.tree);
  const fbNote = "it reads the run's own metrics: at step t, those of the steps finished before t starts (t − 1, or t − 1 − staleness); at step 1 none (feedback.* read 0, smoothers their init, stages 0)";
  if (feedback && !trace) return { ...base, needsTrace: true, note: `known at ${v.level} level — ${fbNote}; its values need a metrics trace (--trace RUN_DIR/metrics.jsonl)` };
  const episode = v.level === "episode";
  const Ls = episode ? (lengths ?? [1, 5, 10, 20]) : [undefined];
  // The value is tracked beside the plan's own expressions, so its stages carry the run's names.
  const replay = feedback ? planReplay(compiled.plan, trace!, { "~explain": { level: v.level, unit: "", tree: v.tree } }) : undefined;
  const sorted = [...steps].sort((a, b) => a - b);
  const at = new Map(sorted.map((t) => [t, replay?.at(t)]));
  const table: NonNullable<Explanation["table"]> = Ls.map((L) => ({
    ...(L !== undefined ? { expertLength: L } : {}),
    values: steps.map((step) => {
      const r = at.get(step);
      return { step, value: evalScalar(v.tree, { step, total_steps: total, ...(L !== undefined ? { "episode.expert_length": L } : {}), ...r?.vars }, {}, r?.view) };
    }),
  }));
  let stages: Explanation["stages"];
  if (replay) {
    const names = Object.keys(at.get(sorted[0]!)?.summary.values ?? {});
    for (const name of names) table.push({ label: name, values: steps.map((step) => ({ step, value: at.get(step)!.summary.values[name]! })) });
    table.push({ label: "feedback.step", values: steps.map((step) => ({ step, value: at.get(step)!.summary.step })) });
    // Every advance of every stage along the whole trace (not only at the asked steps).
    stages = [];
    const log = new Map<string, { rule: string; advances: { step: number; observed: number; signal: number | null }[] }>();
    let last: Record<string, number> = {};
    for (let t = 1; t <= total; t++) {
      const s = replay.at(t).summary;
      for (const [name, st] of Object.entries(s.stages)) {
        const entry = log.get(name) ?? { rule: st.rule, advances: [] };
        log.set(name, entry);
        if (st.stage > (last[name] ?? 0)) entry.advances.push({ step: t, observed: st.advancedAt ?? 0, signal: st.signal });
      }
      last = Object.fromEntries(Object.entries(s.stages).map(([k, x]) => [k, x.stage]));
    }
    for (const [name, e] of log) stages.push({ name, ...e });
  }
  const note = v.level === "const" ? "a constant"
    : feedback ? `known at ${v.level} level — ${fbNote}; values replayed on the trace (${trace!.length} training rows)`
      : `known at ${v.level} level (reads ${v.reads.map((r) => `\`${r}\``).join(", ")}); step = the explorer step, 1-based, one step per explore batch (TCOD's batch_id)`;
  return { ...base, table, note, ...(stages ? { stages } : {}) };
}

function summarise(v: Value): string {
  switch (v.kind) {
    case "string": return JSON.stringify(v.value);
    case "scalar": return printExpr(v.tree);
    case "list": return `[${v.items.map(summarise).join(", ")}]`;
    case "object": case "record": return `${v.kind === "object" ? v.type : ""}{ ${[...v.fields].filter(([k]) => k !== "agent" && k !== "template" && k !== "template_no_history").map(([k, x]) => `${k}: ${summarise(x)}`).join(", ")} }`;
    default: return v.kind;
  }
}

export function formatExplanation(e: Explanation): string {
  const lines = [`${e.target} = ${e.value}`];
  if (e.unit !== undefined) lines.push(`  unit:   ${e.unit}`);
  if (e.level) lines.push(`  level:  ${e.level}${e.note && e.kind !== "loss" ? ` — ${e.note}` : ""}`);
  else if (e.note) lines.push(`  about:  ${e.note}`);
  lines.push(`  from:   ${e.origin[0] ?? "?"}`);
  for (const o of e.origin.slice(1)) lines.push(`          ${o}`);
  if (e.table && e.table.length && e.table[0]!.values.length) {
    const steps = e.table[0]!.values.map((x) => x.step);
    const w = Math.max(6, ...e.table.flatMap((r) => r.values.map((x) => fmt(x.value).length)), ...steps.map((s) => String(s).length)) + 1;
    const label = (s: string) => s.padEnd(16);
    lines.push(`  ${label("step")}${steps.map((s) => String(s).padStart(w)).join("")}`);
    e.table.forEach((r, i) => {
      const name = r.label ?? (e.kind === "loss" ? (e.note?.split(" | ")[i] ?? "") : r.expertLength !== undefined ? `L = ${r.expertLength}` : (e.unit && e.unit !== "number" ? e.unit : "value"));
      lines.push(`  ${label(name)}${r.values.map((x) => fmt(x.value).padStart(w)).join("")}`);
    });
  }
  for (const st of e.stages ?? []) {
    lines.push(`  ${st.name}: advances when ${st.rule}`);
    if (st.advances.length === 0) lines.push("    never advanced on this trace");
    for (const a of st.advances) lines.push(`    → stage ${st.advances.indexOf(a) + 1} from step ${a.step} (observed after step ${a.observed}${a.signal !== null ? `; signal ${fmt(a.signal)}` : ""})`);
  }
  return lines.join("\n");
}

const fmt = (v: number) => (Number.isInteger(v) ? String(v) : String(Number(v.toPrecision(5))));
