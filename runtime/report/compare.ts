/**
 * `tcod compare`: several run folders on one page. Runs are grouped into *methods*: the plan name
 * with any sweep coordinate that sets a seed (a sweep target named `seed` or ending in `seed`, e.g.
 * `c.seed`, `run_seed`) removed, so `opd@run_seed=1` and `opd@run_seed=2` are two seeds of `opd`;
 * runs of the same plan name (e.g. `tcod run --seed N`) are seeds of one method too, as long as their
 * plans agree apart from seeds and serving URLs (configOf). Runs of one name whose plans differ
 * otherwise (`--set` another teacher, student or rate) are not seeds of each other: each
 * configuration is its own method, named for its run folders (`opd (run-a, run-b)`). Each figure
 * shows the mean over a method's seeds, with the min–max spread as a band:
 *   success per eval set against step and against wall time, the reverse KL per turn index (mean
 *   over the last quarter of the steps) and its token mean over steps, tokens per step, and the
 *   schedules in force (horizon, prefix, student turns).
 * Wall time is the sum of the timed phases (rollout, teacher, advantage, update, probe, eval) up to
 * that row of metrics.jsonl, so evaluations count; checkpoint writes do not.
 * The table gives final and best figures per method and eval set as mean ± sample std over seeds,
 * and the wall time at which each seed first reached a success level.
 * Pure functions over parsed metrics; the CLI (bin/commands/compare.ts) does the reading and writing.
 */
import { basename } from "node:path";
import type { Plan } from "../../plan/schema.js";
import type { MetricsRow, TrainRowMetrics } from "../metrics.js";
import { esc, lineChart, type Series } from "./svg.js";

export interface RunData {
  dir: string;
  plan: Pick<Plan, "name" | "clock"> & { sweep?: Record<string, string> };
  rows: MetricsRow[];
}

export interface Spread { mean: number; std: number; min: number; max: number; n: number }

export interface MethodSummary {
  method: string;
  seeds: number[];
  runs: string[];
  /** Train steps completed (min over seeds). */
  steps: number;
  /** Wall time in seconds (sum of timed phases) over the whole run. */
  wallTime: Spread;
  /** Mean KL of the last train step (k1, nats/token). */
  finalKl: Spread;
  /** Per eval set. */
  evals: Record<string, {
    final: Spread;
    best: Spread;
    /** Wall time (s) and step at which each seed's success first reached `level`; null where it never did. */
    toLevel: { level: number; reached: number; wallTime: Spread | null; step: Spread | null };
  }>;
}

const SEED_AXIS = /(^|\.)\w*seed$/i;

/** The method a run belongs to: its plan name without seed sweep coordinates. */
export function methodOf(plan: RunData["plan"]): string {
  const at = plan.name.indexOf("@");
  if (at < 0 || !plan.sweep) return plan.name;
  const kept = Object.entries(plan.sweep).filter(([k]) => !SEED_AXIS.test(k));
  return plan.name.slice(0, at) + (kept.length ? "@" + kept.map(([k, v]) => `${k}=${v}`).join(",") : "");
}

/** Mean, sample standard deviation (n − 1; 0 for one value), min and max. */
export function spread(xs: readonly number[]): Spread {
  const n = xs.length;
  if (n === 0) return { mean: NaN, std: NaN, min: NaN, max: NaN, n: 0 };
  const mean = xs.reduce((a, b) => a + b, 0) / n;
  const std = n > 1 ? Math.sqrt(xs.reduce((a, x) => a + (x - mean) ** 2, 0) / (n - 1)) : 0;
  return { mean, std, min: Math.min(...xs), max: Math.max(...xs), n };
}

const rowTime = (r: MetricsRow): number => Object.values(r.time ?? {}).reduce((a, b) => a + b, 0);

/** Per row of metrics.jsonl (file order): the cumulative wall time after it. */
export function cumulativeTime(rows: readonly MetricsRow[]): number[] {
  let t = 0;
  return rows.map((r) => (t += rowTime(r)));
}

/** Eval points of one eval set: step, success, wall time at the end of the evaluation. */
export function evalPoints(rows: readonly MetricsRow[], name: string): { step: number; success: number; wall: number }[] {
  const cum = cumulativeTime(rows);
  return rows.flatMap((r, i) => (r.kind === "eval" && r.name === name ? [{ step: r.step, success: r.successRate, wall: cum[i]! }] : []));
}

const SEED_KEY = /seed$/i;
/** Plan fields that record where a plan came from, not what it runs. */
const PROVENANCE = new Set(["name", "sweep", "sources"]);

/** A plan without its provenance, seeds (every field whose name ends in `seed`) and serving URLs. */
function configTree(v: unknown, top = true, inBackend = false): unknown {
  if (Array.isArray(v)) return v.map((x) => configTree(x, false));
  if (v === null || typeof v !== "object") return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) {
    if (SEED_KEY.test(k) || (top && PROVENANCE.has(k)) || (inBackend && k === "url")) continue;
    out[k] = configTree((v as Record<string, unknown>)[k], false, k === "backend");
  }
  return out;
}

/**
 * What a run trains, as a string: its plan without its name and sweep coordinates, its source files'
 * provenance, its seeds (the clock's and every node's) and the URLs its models were served at
 * (each point of a study runs a server on its own port). Two runs are seeds of one method only if
 * these agree.
 */
export function configOf(plan: object): string {
  return JSON.stringify(configTree(plan));
}

/** Dotted paths of the plan fields (configOf's) in which the runs differ. */
export function configDifferences(runs: readonly RunData[]): string[] {
  const leaves = (v: unknown, path: string, out: Map<string, string>): Map<string, string> => {
    if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) leaves(x, path ? `${path}.${k}` : k, out);
    } else out.set(path, JSON.stringify(v));
    return out;
  };
  const all = runs.map((r) => leaves(configTree(r.plan), "", new Map()));
  const paths = [...new Set(all.flatMap((m) => [...m.keys()]))].sort();
  return paths.filter((p) => new Set(all.map((m) => m.get(p))).size > 1);
}

/** Runs by methodOf, in first-seen order (configurations not yet told apart). */
export function runsByMethod(runs: readonly RunData[]): Map<string, RunData[]> {
  const byMethod = new Map<string, RunData[]>();
  for (const r of runs) {
    const m = methodOf(r.plan);
    byMethod.set(m, [...(byMethod.get(m) ?? []), r]);
  }
  return byMethod;
}

/**
 * Runs grouped into methods (see the file comment): by methodOf, then, where runs of one method
 * differ in configOf, one group per configuration, named `METHOD (folder, folder)` after its run
 * folders (the first two, then `+N`).
 */
export function groupRuns(runs: readonly RunData[]): Map<string, RunData[]> {
  const groups = new Map<string, RunData[]>();
  for (const [m, rs] of runsByMethod(runs)) {
    const byConfig = new Map<string, RunData[]>();
    for (const r of rs) {
      const c = configOf(r.plan);
      byConfig.set(c, [...(byConfig.get(c) ?? []), r]);
    }
    if (byConfig.size === 1) { groups.set(m, rs); continue; }
    for (const cs of byConfig.values()) {
      const names = cs.map((r) => basename(r.dir));
      let label = `${m} (${names.slice(0, 2).join(", ")}${names.length > 2 ? `, +${names.length - 2}` : ""})`;
      for (let k = 2; groups.has(label); k++) label = `${m} (${names[0]} #${k})`;
      groups.set(label, cs);
    }
  }
  return groups;
}

const train = (r: RunData): TrainRowMetrics[] => r.rows.filter((x): x is TrainRowMetrics => x.kind === "train");
export const evalNames = (runs: readonly RunData[]): string[] =>
  [...new Set(runs.flatMap((r) => r.rows.flatMap((x) => (x.kind === "eval" ? [x.name] : []))))].sort();

/** The table's figures for one method (see the file comment). */
export function summarize(method: string, runs: readonly RunData[], level: number): MethodSummary {
  const evals: MethodSummary["evals"] = {};
  for (const name of evalNames(runs)) {
    const per = runs.map((r) => evalPoints(r.rows, name)).filter((p) => p.length > 0);
    const hits = per.map((p) => p.find((x) => x.success >= level) ?? null);
    const reached = hits.filter((h): h is NonNullable<typeof h> => h !== null);
    evals[name] = {
      final: spread(per.map((p) => p[p.length - 1]!.success)),
      best: spread(per.map((p) => Math.max(...p.map((x) => x.success)))),
      toLevel: {
        level, reached: reached.length,
        wallTime: reached.length ? spread(reached.map((h) => h.wall)) : null,
        step: reached.length ? spread(reached.map((h) => h.step)) : null,
      },
    };
  }
  const trains = runs.map(train);
  return {
    method, seeds: runs.map((r) => r.plan.clock.seed), runs: runs.map((r) => r.dir),
    steps: Math.min(...trains.map((t) => t[t.length - 1]?.step ?? 0)),
    wallTime: spread(runs.map((r) => r.rows.reduce((a, x) => a + rowTime(x), 0))),
    finalKl: spread(trains.filter((t) => t.length > 0).map((t) => t[t.length - 1]!.kl.mean)),
    evals,
  };
}

/** A run `tcod compare` leaves out of the figures, and why (shown on the page and on stderr). */
export interface LeftOutRun { dir: string; why: string }

/**
 * The runs with at least one training step, and the others with why: a run whose metrics.jsonl is
 * empty (it stopped before its first row) or holds only the evaluation before step 1 has no training
 * to compare, and counted as a seed it would pull every mean towards step 0 and the untrained model.
 */
export function splitUntrained(runs: readonly RunData[]): { kept: RunData[]; leftOut: LeftOutRun[] } {
  const kept: RunData[] = [], leftOut: LeftOutRun[] = [];
  for (const r of runs) {
    if (train(r).length > 0) kept.push(r);
    else leftOut.push({ dir: r.dir, why: r.rows.length === 0 ? "its metrics.jsonl is empty (the run stopped before its first row)" : "its metrics.jsonl holds no training step (only the evaluation before step 1)" });
  }
  return { kept, leftOut };
}

/** Mean over runs of y at each x present in every run (with min and max), sorted by x. */
export function meanCurve(curves: readonly [number, number][][]): { x: number; mean: number; min: number; max: number }[] {
  if (curves.length === 0) return [];
  const maps = curves.map((c) => new Map(c));
  const xs = [...maps[0]!.keys()].filter((x) => maps.every((m) => m.has(x))).sort((a, b) => a - b);
  return xs.map((x) => {
    const ys = maps.map((m) => m.get(x)!);
    return { x, mean: ys.reduce((a, b) => a + b, 0) / ys.length, min: Math.min(...ys), max: Math.max(...ys) };
  });
}

/** A method's mean series with its min–max band. */
function banded(name: string, curves: [number, number][][]): Series {
  const m = meanCurve(curves);
  return { name, points: m.map((p) => [p.x, p.mean]), band: m.map((p) => [p.x, p.min, p.max]) };
}

/** Per-turn KL of a run: mean over the last quarter of its train steps, per turn index. */
export function lateKlPerTurn(rows: readonly MetricsRow[]): [number, number][] {
  const t = rows.filter((x): x is TrainRowMetrics => x.kind === "train");
  const late = t.slice(Math.floor(t.length * 0.75));
  const depth = late.reduce((m, r) => Math.max(m, r.kl.perTurn.length), 0);
  const out: [number, number][] = [];
  for (let h = 0; h < depth; h++) {
    const vs = late.map((r) => r.kl.perTurn[h]).filter((v): v is number => typeof v === "number" && Number.isFinite(v));
    if (vs.length) out.push([h, vs.reduce((a, b) => a + b, 0) / vs.length]);
  }
  return out;
}

const f3 = (s: Spread): string => (s.n === 0 || Number.isNaN(s.mean) ? "—" : s.n > 1 ? `${s.mean.toFixed(3)} ± ${s.std.toFixed(3)}` : s.mean.toFixed(3));
const f1 = (s: Spread | null): string => (!s ? "—" : s.n > 1 ? `${s.mean.toFixed(1)} ± ${s.std.toFixed(1)}` : s.mean.toFixed(1));

/** The compare page: one self-contained HTML file (inline SVG, no scripts). `groups`: `groupRuns(runs)`, when the caller has it. */
export function renderCompare(runs: readonly RunData[], opts: { level: number; title?: string; groups?: Map<string, RunData[]>; leftOut?: readonly LeftOutRun[] }): string {
  const groups = opts.groups ?? groupRuns(runs);
  const names = evalNames(runs);
  const summaries = [...groups].map(([m, rs]) => summarize(m, rs, opts.level));
  const perMethod = (f: (r: RunData) => [number, number][]): Series[] => [...groups].map(([m, rs]) => banded(m, rs.map(f)));
  const trainPts = (r: RunData, f: (t: TrainRowMetrics) => number): [number, number][] => train(r).map((t) => [t.step, f(t)]);
  const charts: string[] = [];
  names.forEach((name, i) => {
    charts.push(lineChart(`success-step-${i}`, `Success on ${name} against step (mean over seeds, band: min–max)`,
      perMethod((r) => evalPoints(r.rows, name).map((p) => [p.step, p.success])), { yMin: 0, yMax: 1 }));
    // Wall-time axes differ per seed: each seed's curve is drawn at its own times; the band is per eval index.
    charts.push(lineChart(`success-time-${i}`, `Success on ${name} against wall time (s)`,
      [...groups].map(([m, rs]) => {
        const pts = rs.map((r) => evalPoints(r.rows, name));
        const k = Math.min(...pts.map((p) => p.length));
        const mean = Array.from({ length: k }, (_, j) => [pts.reduce((a, p) => a + p[j]!.wall, 0) / pts.length, pts.reduce((a, p) => a + p[j]!.success, 0) / pts.length] as [number, number]);
        return { name: m, points: mean };
      }), { yMin: 0, yMax: 1, xLabel: "wall time (s)" }));
  });
  charts.push(lineChart("kl-per-turn", "Reverse KL per turn index (k1, mean over the last quarter of steps)", perMethod((r) => lateKlPerTurn(r.rows)), { xLabel: "turn index" }));
  charts.push(lineChart("kl-mean", "Reverse KL, token mean, per step", perMethod((r) => trainPts(r, (t) => t.kl.mean))));
  charts.push(lineChart("tokens", "Tokens per step (prompt + response)", perMethod((r) => trainPts(r, (t) => t.tokens.prompt + t.tokens.response))));
  charts.push(lineChart("horizon", "Schedule in force: horizon (turns)", perMethod((r) => trainPts(r, (t) => t.horizon))));
  charts.push(lineChart("prefix", "Schedule in force: expert prefix (turns)", perMethod((r) => trainPts(r, (t) => t.prefix))));
  charts.push(lineChart("student-turns", "Student turns per episode", perMethod((r) => trainPts(r, (t) => t.studentTurns))));
  const coefNames = [...new Set(runs.flatMap((r) => train(r).flatMap((t) => Object.keys(t.coefs))))].sort();
  if (coefNames.length > 0) {
    charts.push(lineChart("coefs", "Loss coefficients in force", [...groups].flatMap(([m, rs]) =>
      coefNames.filter((k) => rs.some((r) => train(r).some((t) => k in t.coefs))).map((k) => banded(`${m}: ${k}`, rs.map((r) => trainPts(r, (t) => t.coefs[k] ?? NaN)))))));
  }
  const head = `<tr><th>method</th><th>seeds</th><th>steps</th><th>wall time (s)</th><th>final KL</th>${names.map((n) =>
    `<th>${esc(n)} final</th><th>${esc(n)} best</th><th>${esc(n)} ≥ ${opts.level}: time (s)</th>`).join("")}</tr>`;
  const body = summaries.map((s) => `<tr data-method="${esc(s.method)}"><td>${esc(s.method)}</td><td>${s.seeds.join(", ")}</td><td>${s.steps}</td><td>${f1(s.wallTime)}</td><td>${f3(s.finalKl)}</td>${names.map((n) => {
    const e = s.evals[n];
    if (!e) return "<td>—</td><td>—</td><td>—</td>";
    return `<td data-eval="${esc(n)}" data-final="${e.final.mean}">${f3(e.final)}</td><td data-best="${e.best.mean}">${f3(e.best)}</td><td>${e.toLevel.reached}/${e.final.n}${e.toLevel.wallTime ? `: ${f1(e.toLevel.wallTime)}` : ""}</td>`;
  }).join("")}</tr>`).join("");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${esc(opts.title ?? "tcod compare")}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1500px}
h1{font-size:20px} .grid{display:flex;flex-wrap:wrap;gap:16px}
figure{margin:0;border:1px solid #ddd;border-radius:6px;padding:8px;background:#fafafa}
figcaption{font-weight:600;margin-bottom:4px} table{border-collapse:collapse;margin:12px 0}
td,th{padding:3px 10px;border-bottom:1px solid #eee;text-align:left} th{font-weight:600}
.note{background:#fff4d6;border-left:3px solid #d9a400;padding:4px 8px}
</style></head><body>
<h1>${esc(opts.title ?? "tcod compare")}</h1>
<p>${runs.length} runs, ${groups.size} methods. Figures: mean over seeds; bands: min–max over seeds. Table: mean ± sample std over seeds.
Wall time = sum of the timed phases (evaluations included).</p>
${(opts.leftOut ?? []).map((l) => `<p class="note" data-left-out="${esc(l.dir)}">Left out: ${esc(l.dir)}: ${esc(l.why)}; it is in no figure, mean or seed count.</p>`).join("\n")}
<table id="summary">${head}${body}</table>
<div class="grid">
${charts.join("\n")}
</div>
</body></html>
`;
}
