/**
 * Summary of a study (bench/study/run-embedded.sh → summarize-embedded.sh; bench/study/run-h200.sh →
 * summarize-h200.sh; STUDY_NAME=embedded|h200, default embedded): reads the run folders, aggregates
 * them with `tcod compare`'s functions (runtime/report/compare.ts) and writes
 * RESULTS_DIR/study-NAME.{json,md}, beside the compare page:
 *   success per eval set (final and best, mean ± std over seeds); the wall time (sum of the timed
 *   phases, evaluations included) at which each seed first reached a success level; CPU seconds per
 *   run (the run's own user + sys, from cpu.json); the per-turn KL (mean over the last quarter of the
 *   steps); the f2b/OPD training wall-time ratio at equal steps (training phases only, evaluations
 *   left out), per seed pair; and the teacher's own success on the same eval tasks, so "does the
 *   student pass the teacher on hard" is answered from the numbers: the embedded oracle as a policy
 *   (mass 1 − smoothing on the observable expert's optimal actions, the rest spread over the
 *   admissible ones), sampled at the eval temperature; a served teacher's own last evaluations
 *   (phase1/teacher-*.metrics.jsonl beside runs/, with the student initialisation's).
 * Facts only: what the numbers mean is for the reader (and the notes of whoever reports them).
 * A file it cannot read is never a stack trace nor dropped unsaid: a line of a metrics file or of
 * calls.jsonl that is not a whole row is left out with a warning on stderr naming the file and its
 * first such line (and how many); a run whose plan.json does not read, or a cpu.json/machine.json
 * that is not JSON, is left out with a warning naming the file.
 *
 *   STUDY_NAME=NAME node dist/study-summarize.mjs RESULTS_DIR RUN_DIR…   (bundled by bench/study/summarize.sh)
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { readMetricsSkipping, type MetricsRow } from "../../runtime/metrics.js";
import { UserError } from "../../plan/errors.js";
import { groupRuns, lateKlPerTurn, spread, summarize, type RunData, type Spread } from "../../runtime/report/compare.js";
import { TexthouseEnv } from "../../runtime/envs/texthouse/index.js";
import { sfc32 } from "../../runtime/backends/embedded/prng.js";

const [outDir, ...dirs] = process.argv.slice(2);
const STUDY = process.env.STUDY_NAME ?? "embedded";
if (!outDir || dirs.length === 0) { console.error("usage: study-summarize RESULTS_DIR RUN_DIR…"); process.exit(2); }
const LEVELS = [0.25, 0.5];
const warn = (what: string): void => console.error(`study-summarize: warning: ${what}`);
/** Warns once for a file's lines left out: the first (where and why) and how many. */
function leftOut(file: string, bad: { line: number; why: string }[]): void {
  if (bad.length === 0) return;
  const lines = bad.map((b) => b.line);
  warn(`${file}:${lines[0]}: line ${lines[0]} ${bad[0]!.why}${bad.length > 1 ? `; ${bad.length} lines in all (${lines.slice(0, 10).join(", ")}${lines.length > 10 ? ", …" : ""})` : ""}; left out of the summary`);
}
/** A JSON file; null when missing (said nothing) or not JSON (warned about). */
function readJson<T>(p: string, what = "left out of the summary"): T | null {
  let text: string;
  try { text = readFileSync(p, "utf8"); } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") warn(`${p}: cannot read it (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}); ${what}`);
    return null;
  }
  try { return JSON.parse(text) as T; } catch (e) { warn(`${p}: not JSON (${(e as Error).message}); ${what}`); return null; }
}
/** A metrics file's whole rows; a damaged line is left out (warned about), an unreadable file is none. */
function metricsRows(file: string): MetricsRow[] {
  const bad: { line: number; why: string }[] = [];
  try {
    const rows = readMetricsSkipping(file, (line, why) => bad.push({ line, why }), (line) => console.error(`study-summarize: note: ${file}:${line}: the last line is not a whole row yet (a run killed while writing it); it is left out`));
    leftOut(file, bad);
    return rows;
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    warn(`${e.message}; left out of the summary`);
    return [];
  }
}
const runs: RunData[] = dirs.filter((d) => existsSync(join(d, "metrics.jsonl"))).flatMap((dir) => {
  const plan = readJson<RunData["plan"]>(join(dir, "plan.json"), "the run is left out of the summary");
  return plan ? [{ dir, plan, rows: metricsRows(join(dir, "metrics.jsonl")) }] : [];
});
if (runs.length === 0) { console.error("study-summarize: error: no run with a metrics.jsonl and a readable plan.json among the RUN_DIRs"); process.exit(1); }
const groups = groupRuns(runs);
type Plan0 = {
  clock: { steps: number }; graph?: { nodes: { kind: string; params: Record<string, unknown> }[] }; nodes?: { kind: string; params: Record<string, unknown> }[];
  resources: { models: { teacher: { backend: { smoothing?: number } } }; envs: Record<string, { split: string }> };
};
const plan0 = runs[0]!.plan as unknown as Plan0;
const evalNodes = (plan0.graph?.nodes ?? plan0.nodes ?? []).filter((n) => n.kind === "Evaluate");
const smoothing = plan0.resources.models.teacher.backend.smoothing;
const runsDir = dirname(dirs[0]!.replace(/\/$/, ""));
type Machine = { cpus?: number; cpuModel?: string; node?: string; parallel?: number; deadline?: number; loadBefore?: string; settings?: string; startedAt?: string };
const mach = readJson<Machine>(join(runsDir, "machine.json"));
// A study run over several calls (run-h200.sh) records each call's machine.json as a line of calls.jsonl.
const calls = callLines(join(runsDir, "calls.jsonl"));
/** The lines of calls.jsonl, each a call's machine.json; a line that is not a JSON object is left out (warned about). */
function callLines(file: string): Machine[] {
  if (!existsSync(file)) return [];
  const bad: { line: number; why: string }[] = [];
  const out = readFileSync(file, "utf8").split("\n").flatMap((l, i) => {
    if (!l.trim()) return [];
    let v: unknown;
    try { v = JSON.parse(l); } catch (e) { bad.push({ line: i + 1, why: `is not JSON (${(e as Error).message})` }); return []; }
    if (v === null || typeof v !== "object" || Array.isArray(v)) { bad.push({ line: i + 1, why: "is not a call's machine record (a JSON object)" }); return []; }
    return [v as Machine];
  });
  leftOut(file, bad);
  return out;
}
/** A phase-1 run's last evaluation per eval name (served teachers and the student initialisation). */
function lastEvals(prefix: string): { file: string; step: number; success: Record<string, number> } | null {
  const dir = join(dirname(runsDir), "phase1");
  const file = existsSync(dir) ? readdirSync(dir).find((f) => f.startsWith(prefix) && f.endsWith(".metrics.jsonl")) : undefined;
  if (!file) return null;
  const success: Record<string, number> = {};
  let step = 0;
  for (const r of metricsRows(join(dir, file))) if (r.kind === "eval") { success[r.name] = r.successRate; step = Math.max(step, r.step); }
  return { file: file.replace(/\.metrics\.jsonl$/, ""), step, success };
}

/** Training wall time (rollout, teacher, advantage, update, probe; no eval) up to each step. */
function trainTimeAt(rows: RunData["rows"]): Map<number, number> {
  let t = 0;
  const out = new Map<number, number>();
  for (const r of rows) if (r.kind === "train") { t += Object.entries(r.time).filter(([k]) => k !== "eval").reduce((a, [, v]) => a + v, 0); out.set(r.step, t); }
  return out;
}

/** The embedded teacher as a policy on `tasks` tasks of `split`: P(a) ∝ q(a)^(1/τ), `reps` seeds. */
async function teacherSuccess(split: string, tasks: number, temperature: number, reps: number): Promise<number> {
  const env = new TexthouseEnv();
  const all = await env.tasks(split);
  let wins = 0;
  for (let rep = 0; rep < reps; rep++) {
    const rnd = sfc32(1000 + rep);
    for (let i = 0; i < tasks; i++) {
      let obs = await env.reset(all[i]!);
      let adm = obs.admissible, done = false, won = false;
      while (!done) {
        const opt = new Set(await env.optimalActions());
        const cands = [...new Set([...adm, ...opt])];
        const eps = smoothing ?? 0;
        const q = cands.map((a) => (1 - eps) * (opt.has(a) ? 1 / opt.size : 0) + eps / cands.length);
        const w = q.map((p) => (temperature === 0 ? 0 : p ** (1 / temperature)));
        if (temperature === 0) w[q.indexOf(Math.max(...q))] = 1;
        const s = w.reduce((a, b) => a + b, 0);
        let u = rnd() * s, k = 0;
        while (k < w.length - 1 && (u -= w[k]!) > 0) k++;
        const r = await env.step(cands[k]!);
        adm = r.admissible; done = r.done; won = r.won;
      }
      if (won) wins++;
    }
  }
  return wins / (tasks * reps);
}

const fmt = (s: Spread | null | undefined, d = 3): string => (!s || s.n === 0 || !Number.isFinite(s.mean) ? "—" : s.n > 1 ? `${s.mean.toFixed(d)} ± ${s.std.toFixed(d)}` : s.mean.toFixed(d));

const methods = [...groups].map(([m, rs]) => {
  const byLevel = Object.fromEntries(LEVELS.map((l) => [l, summarize(m, rs, l)]));
  const s = byLevel[LEVELS[0]!]!;
  const cpu = rs.map((r) => readJson<{ wall: number; user: number; sys: number }>(join(r.dir, "cpu.json")));
  const trainTimes = rs.map((r) => trainTimeAt(r.rows));
  return {
    ...s,
    toLevel: Object.fromEntries(LEVELS.map((l) => [l, Object.fromEntries(Object.entries(byLevel[l]!.evals).map(([k, v]) => [k, v.toLevel]))])),
    lateKlPerTurn: lateKlPerTurn(rs.flatMap((r) => r.rows)),
    trainTime: spread(trainTimes.map((t) => [...t.values()].pop() ?? NaN)),
    cpuSeconds: spread(cpu.flatMap((c) => (c ? [c.user + c.sys] : []))),
    process: cpu,
    trainTimes, seedOf: rs.map((r) => r.plan.clock.seed),
  };
});

const byName = (prefix: string) => methods.find((m) => m.method.startsWith(prefix));
const opd = byName("opd_plain"), f2b = byName("tcod_f2b");
let ratio: { step: number; ratio: Spread; pairs: number } | null = null;
if (opd && f2b) {
  const step = Math.min(opd.steps, f2b.steps);
  const r: number[] = [];
  f2b.seedOf.forEach((seed, i) => {
    const j = opd.seedOf.indexOf(seed);
    const a = f2b.trainTimes[i]!.get(step), b = j >= 0 ? opd.trainTimes[j]!.get(step) : undefined;
    if (a !== undefined && b !== undefined && b > 0) r.push(a / b);
  });
  ratio = { step, ratio: spread(r), pairs: r.length };
}
const evalSets: { name: string; split: string; tasks: number; temperature: number }[] = evalNodes.map((n) => {
  const p = n.params as { name: string; env: string; tasks: number; temperature: number };
  return { name: p.name, split: plan0.resources.envs[p.env]!.split, tasks: p.tasks, temperature: p.temperature };
});
// The teacher on the same eval tasks: the embedded oracle simulated here; a served teacher's own
// last evaluations from phase 1 (greedy, as learn.sh evaluates it).
const teacher: Record<string, { sampled?: number; greedy: number }> = {};
const servedTeacher = smoothing === undefined ? lastEvals("teacher-") : null;
const init = smoothing === undefined ? lastEvals("student-init") : null;
for (const e of evalSets) {
  if (smoothing !== undefined) teacher[e.name] = { sampled: await teacherSuccess(e.split, e.tasks, e.temperature, 5), greedy: await teacherSuccess(e.split, e.tasks, 0, 1) };
  else if (servedTeacher?.success[e.name] !== undefined) teacher[e.name] = { greedy: servedTeacher.success[e.name]! };
}
const teacherAt = (name: string, temperature: number): number | undefined =>
  teacher[name] && (temperature === 0 ? teacher[name]!.greedy : teacher[name]!.sampled);

// Does the student pass the teacher on hard? Per method: seeds whose final (and best) hard success
// is above the teacher's sampled success at the same temperature.
const hard = evalSets.find((e) => e.name === "hard");
const hardTeacher = hard ? teacherAt("hard", hard.temperature) : undefined;
const passes = hard && hardTeacher !== undefined ? methods.map((m) => {
  const t = hardTeacher;
  return { method: m.method, teacher: t, final: m.evals.hard?.final ?? null, best: m.evals.hard?.best ?? null, seedsAbove: m.evals.hard ? (m.evals.hard.best.max > t ? "some" : "none") : "—" };
}) : [];

const result = {
  machine: mach, ...(calls.length > 1 ? { calls } : {}), budget: plan0.clock.steps, levels: LEVELS, teacher, ...(servedTeacher ? { teacherRun: servedTeacher } : {}), ...(init ? { studentInit: init } : {}),
  evalSets, f2bOverOpdTrainTime: ratio, studentVsTeacherOnHard: passes,
  methods: methods.map(({ trainTimes: _t, seedOf: _s, ...m }) => m),
};
writeFileSync(join(outDir, `study-${STUDY}.json`), JSON.stringify(result, null, 2) + "\n");

const names = evalSets.map((e) => e.name);
const lines: string[] = [];
lines.push("| method | seeds | steps | " + names.map((n) => `${n} final | ${n} best`).join(" | ") + " | CPU s (user+sys) | wall s (timed phases) | final KL |");
lines.push("|" + " --- |".repeat(6 + 2 * names.length));
for (const m of methods) {
  lines.push(`| ${m.method} | ${m.seeds.length} | ${m.steps} | ${names.map((n) => `${fmt(m.evals[n]?.final)} | ${fmt(m.evals[n]?.best)}`).join(" | ")} | ${fmt(m.cpuSeconds, 1)} | ${fmt(m.wallTime, 1)} | ${fmt(m.finalKl)} |`);
}
const levelLines = ["| method | " + LEVELS.flatMap((l) => names.map((n) => `${n} ≥ ${l}: seeds, at wall s (step)`)).join(" | ") + " |", "|" + " --- |".repeat(1 + LEVELS.length * names.length)];
for (const m of methods) {
  levelLines.push(`| ${m.method} | ` + LEVELS.flatMap((l) => names.map((n) => {
    const t = m.toLevel[l]?.[n];
    return t ? `${t.reached}/${m.seeds.length}${t.wallTime ? ` at ${fmt(t.wallTime, 1)} (${fmt(t.step, 0)})` : ""}` : "—";
  })).join(" | ") + " |");
}
const klCols = 12;
const klLines = methods.map((m) => `| ${m.method} | ${Array.from({ length: klCols }, (_, i) => { const v = m.lateKlPerTurn.find(([t]) => t === i); return v ? v[1].toFixed(2) : "—"; }).join(" | ")} |`);
const machineHead = mach ? `Machine: ${mach.cpus} CPUs (${mach.cpuModel || "model unknown"}), Node ${mach.node}` : "";
const machineLine = !mach
  ? "Machine: not recorded."
  : calls.length > 1
    ? `${machineHead}; the study ran over ${calls.length} calls, each resuming the last: ` +
      calls.map((c, i) => `${i + 1}. started ${c.startedAt}, ${c.parallel} runs at a time, deadline ${c.deadline} s, load before ${c.loadBefore}`).join("; ") + "."
    : `${machineHead}, ${mach.parallel} runs at a time, load before ${mach.loadBefore}, started ${mach.startedAt}.`;
// The example run beside the study (run-embedded.sh STUDY_EXAMPLE), when there is one.
const exDir = join(dirname(dirs[0]!.replace(/\/$/, "")), "example");
let example: { plan: string; cpu: { wall: number; user: number; sys: number } | null; steps: number; evals: { step: number; name: string; success: number }[] } | null = null;
if (existsSync(join(exDir, "metrics.jsonl"))) {
  const rows = metricsRows(join(exDir, "metrics.jsonl"));
  example = {
    plan: (readJson<{ name: string }>(join(exDir, "plan.json")))?.name ?? "?", cpu: readJson(join(exDir, "cpu.json")),
    steps: rows.filter((r) => r.kind === "train").length,
    evals: rows.flatMap((r) => (r.kind === "eval" ? [{ step: r.step, name: r.name, success: r.successRate }] : [])),
  };
  (result as Record<string, unknown>).example = example;
  writeFileSync(join(outDir, `study-${STUDY}.json`), JSON.stringify(result, null, 2) + "\n");
}
// The opd estimators the runs train with (their Advantage nodes' terms).
const estimators = [...new Set(runs.flatMap((r) => ((r.plan as unknown as Plan0).graph?.nodes ?? [])
  .filter((n) => n.kind === "Advantage").flatMap((n) => (n.params.terms as { estimator?: string }[] | undefined) ?? [])
  .flatMap((t) => (t.estimator ? [t.estimator] : []))))];
const md = [
  STUDY === "embedded" ? `# texthouse study on the embedded backend: ${methods.map((m) => m.method).join(", ")}`
    : `# texthouse study on the ${STUDY === "h200" ? "H200 (tcod worker)" : STUDY}: ${methods.map((m) => m.method).join(", ")}`,
  "",
  `Generated by \`bash bench/study/summarize-${STUDY}.sh OUT/study-${STUDY}-runs.tgz\` from the runs of`,
  `\`OUT=… STUDY_PARALLEL=${mach?.parallel ?? "N"} bash bench/study/run-${STUDY}.sh${mach?.settings ? " " + mach.settings : ""}\` (bench/study/${STUDY}.tcod: the methods as`,
  "curricula × a sweep over run_seed; same teacher, student initialisation, step budget, batch, optimizer and",
  STUDY === "embedded" ? "evaluations for every method; every loss is the exact reverse KL (opd estimator \"full\"), ATOD adding its GRPO term)."
    : `evaluations for every method; every loss is the reverse KL to the teacher, opd estimator ${estimators.map((e) => `"${e}"`).join("/") || "—"}, ATOD adding its GRPO term).`,
  machineLine,
  `Budget: ${plan0.clock.steps} steps per run; the compare page is study-${STUDY}.html, every figure is in study-${STUDY}.json.`,
  "",
  "Success (mean ± sample std over seeds; eval temperature " + [...new Set(evalSets.map((e) => e.temperature))].join("/") + ", " + evalSets.map((e) => `${e.name} ${e.tasks} tasks`).join(", ") + "):",
  "",
  ...lines, "",
  "Wall time (sum of the timed phases, evaluations included) at which each seed first reached a success level:",
  "",
  ...levelLines, "",
  smoothing !== undefined
    ? `Teacher (embedded oracle over the observable expert, smoothing ${smoothing}) on the same eval tasks: ` +
      evalSets.map((e) => `${e.name} ${teacher[e.name]!.sampled!.toFixed(3)} sampled at τ ${e.temperature} (5 draws), ${teacher[e.name]!.greedy.toFixed(3)} greedy`).join("; ") + "."
    : servedTeacher
      ? `Teacher (${servedTeacher.file}, its last evaluations in phase 1, step ${servedTeacher.step}, greedy, every task): ` +
        Object.entries(servedTeacher.success).map(([n, v]) => `${n} ${v.toFixed(3)}`).join("; ") + "." +
        (init ? ` The student initialisation (step ${init.step}): ` + Object.entries(init.success).map(([n, v]) => `${n} ${v.toFixed(3)}`).join("; ") + "." : "")
      : "Teacher: no phase-1 metrics beside the runs.",
  ...(passes.length ? ["", `Student vs teacher on hard (teacher ${smoothing !== undefined ? "sampled" : "evaluated"} at the eval temperature): ` + passes.map((p) =>
    `${p.method} final ${fmt(p.final)}, best seed ${p.best ? p.best.max.toFixed(3) : "—"} vs ${p.teacher.toFixed(3)} (${p.seedsAbove === "some" ? "a seed passes the teacher" : "no seed passes the teacher"})`).join("; ") + "."] : []),
  "",
  ratio ? `TCOD-f2b / OPD training wall time (evaluations left out) at step ${ratio.step}: ${fmt(ratio.ratio)} over ${ratio.pairs} seed pair(s).` : "TCOD-f2b / OPD ratio: not both methods present.",
  ...(example ? ["", `Beside the study, on a core of its own: ${example.plan} (${example.steps} steps) took ${example.cpu ? `${example.cpu.wall.toFixed(1)} s wall, ${(example.cpu.user + example.cpu.sys).toFixed(1)} s CPU (user + sys)` : "— (no timing)"}; ` +
    example.evals.map((e) => `${e.name} ${e.success.toFixed(3)} at step ${e.step}`).join(", ") + "."] : []),
  "", `Per-turn KL (k1, mean over the last quarter of the steps), turn index 0…${klCols - 1}:`, "",
  "| method | " + Array.from({ length: klCols }, (_, i) => String(i)).join(" | ") + " |", "|" + " --- |".repeat(klCols + 1), ...klLines, "",
].join("\n");
writeFileSync(join(outDir, `study-${STUDY}.md`), md);
process.stdout.write(md);
