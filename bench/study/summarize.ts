/**
 * Summary of the embedded study (bench/study/run-embedded.sh): reads the run folders, aggregates them
 * with `tcod compare`'s functions (runtime/report/compare.ts), adds what the issue asks beside the
 * compare page, and writes bench/results/study-embedded.{json,md}:
 *   success per eval set (final and best, mean ± std over seeds), per-turn KL (mean over the last
 *   quarter of the steps), wall time to reach a success level, the f2b/OPD wall-time ratio at equal
 *   steps (training phases only, the evaluations left out), and the teacher's own success on the same
 *   eval tasks — the embedded oracle as a policy (mass 1 − smoothing on the observable expert's optimal
 *   actions, the rest spread over the admissible ones), sampled at the eval temperature — so "does the
 *   student pass the teacher on hard" has an answer.
 *
 *   node dist/study-summarize.mjs OUT_DIR RUN_DIR… (bundled by run-embedded.sh)
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readMetrics, type TrainRowMetrics } from "../../runtime/metrics.js";
import { groupRuns, lateKlPerTurn, spread, summarize, type RunData, type Spread } from "../../runtime/report/compare.js";
import { TexthouseEnv } from "../../runtime/envs/texthouse/index.js";
import { sfc32 } from "../../runtime/backends/embedded/prng.js";

const [outDir, ...dirs] = process.argv.slice(2);
if (!outDir || dirs.length === 0) throw new Error("usage: study-summarize OUT_DIR RUN_DIR…");
const LEVEL = 0.25;
const runs: RunData[] = dirs.map((dir) => ({ dir, plan: JSON.parse(readFileSync(join(dir, "plan.json"), "utf8")), rows: readMetrics(join(dir, "metrics.jsonl")) }));
const groups = groupRuns(runs);
const plan0 = JSON.parse(readFileSync(join(dirs[0]!, "plan.json"), "utf8"));
const evalNodes = (plan0.graph?.nodes ?? plan0.nodes ?? []).filter((n: { kind: string }) => n.kind === "Evaluate");
const smoothing: number = plan0.resources.models.teacher.backend.smoothing;

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
        const q = cands.map((a) => (1 - smoothing) * (opt.has(a) ? 1 / opt.size : 0) + smoothing / cands.length);
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

const fmt = (s: Spread | null, d = 3): string => (!s || s.n === 0 ? "—" : s.n > 1 ? `${s.mean.toFixed(d)} ± ${s.std.toFixed(d)}` : s.mean.toFixed(d));

const methods = [...groups].map(([m, rs]) => {
  const s = summarize(m, rs, LEVEL);
  const kl = lateKlPerTurn(rs.flatMap((r) => r.rows));
  const trainTimes = rs.map((r) => trainTimeAt(r.rows));
  const cpu = rs.map((r) => { try { return JSON.parse(readFileSync(join(r.dir, "cpu.json"), "utf8")) as { wall: number; user: number; sys: number }; } catch { return null; } });
  return { ...s, lateKlPerTurn: kl, trainTime: spread(trainTimes.map((t) => [...t.values()].pop() ?? NaN)), trainTimes, process: cpu };
});

const byName = (prefix: string) => methods.find((m) => m.method.startsWith(prefix));
const opd = byName("opd_plain"), f2b = byName("tcod_f2b");
let ratio: { step: number; ratio: Spread } | null = null;
if (opd && f2b) {
  const step = Math.min(opd.steps, f2b.steps);
  const mean = (ts: Map<number, number>[]) => ts.map((t) => t.get(step)!).filter(Number.isFinite);
  const r = mean(f2b.trainTimes).map((x, i) => x / (mean(opd.trainTimes)[i] ?? NaN));
  ratio = { step, ratio: spread(r.filter(Number.isFinite)) };
}
const evalSets: { name: string; split: string; tasks: number; temperature: number }[] = evalNodes.map((n: { params: { name: string; env: string; tasks: number; temperature: number } }) => ({
  name: n.params.name, split: plan0.resources.envs[n.params.env].split, tasks: n.params.tasks, temperature: n.params.temperature,
}));
const teacher: Record<string, { sampled: number; greedy: number }> = {};
for (const e of evalSets) teacher[e.name] = { sampled: await teacherSuccess(e.split, e.tasks, e.temperature, 5), greedy: await teacherSuccess(e.split, e.tasks, 0, 1) };

const result = {
  level: LEVEL, teacher, evalSets, f2bOverOpdTrainTime: ratio,
  methods: methods.map(({ trainTimes: _t, ...m }) => m),
};
writeFileSync(join(outDir, "study-embedded.json"), JSON.stringify(result, null, 2) + "\n");

const names = evalSets.map((e) => e.name);
const lines: string[] = [];
lines.push("| method | seeds | steps | " + names.map((n) => `${n} final | ${n} best`).join(" | ") + ` | train time (s) | wall time (s) | final KL | first ${LEVEL} on ${names[0]} (s) |`);
lines.push("|" + " --- |".repeat(7 + 2 * names.length));
for (const m of methods) {
  const t = m.evals[names[0]!]?.toLevel;
  lines.push(`| ${m.method} | ${m.seeds.length} | ${m.steps} | ${names.map((n) => `${fmt(m.evals[n]?.final ?? null)} | ${fmt(m.evals[n]?.best ?? null)}`).join(" | ")} | ${fmt(m.trainTime, 1)} | ${fmt(m.wallTime, 1)} | ${fmt(m.finalKl)} | ${t ? `${t.reached}/${m.seeds.length}${t.wallTime ? ` at ${fmt(t.wallTime, 1)}` : ""}` : "—"} |`);
}
const klLines = methods.map((m) => `| ${m.method} | ${m.lateKlPerTurn.slice(0, 12).map(([, v]) => v.toFixed(2)).join(" | ")} |`);
writeFileSync(join(outDir, "study-embedded.table.md"), [
  ...lines, "",
  `Teacher (embedded oracle over the observable expert, smoothing ${smoothing}) on the same eval tasks: ` +
    evalSets.map((e) => `${e.name} ${teacher[e.name]!.sampled.toFixed(3)} sampled at τ ${e.temperature} (5 draws), ${teacher[e.name]!.greedy.toFixed(3)} greedy`).join("; ") + ".",
  ratio ? `TCOD-f2b / OPD training wall time at step ${ratio.step}: ${fmt(ratio.ratio)} (per seed pair).` : "",
  "", "Per-turn KL (k1, mean over the last quarter of the steps), turn index 0…11:", "",
  "| method | " + Array.from({ length: 12 }, (_, i) => String(i)).join(" | ") + " |", "|" + " --- |".repeat(13), ...klLines, "",
].join("\n"));
process.stdout.write(readFileSync(join(outDir, "study-embedded.table.md"), "utf8"));
