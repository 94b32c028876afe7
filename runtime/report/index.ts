/**
 * The static run report, RUN_DIR/report.html: one self-contained file (inline SVG and CSS, no
 * scripts) with the success rate (train and every eval set) over steps, the reverse KL per turn
 * index over training (heatmap) and its mean, the schedules in force (horizon, prefix, student
 * turns, adaptive cap), the loss-term coefficients (κ/ρ) and the progressive blend weight, the
 * update's loss, gradient norm and learning rate, the wall time per phase, the feedback rules in
 * force when the plan has any (each stage over the steps, its smoothed signals, and a table of every
 * advance: the step it took effect, the finished step that moved it and the signal then), the resolved
 * curriculum the run was started with (RUN_DIR/config.txt when the run compiled a .tcod file; the
 * plan's nodes otherwise), and a few sample episodes turn by turn with each turn's KL
 * (RUN_DIR/episodes.jsonl, report/episodes.ts). The KL the metrics carry is the k1 estimate of the
 * sampled tokens whatever estimator trains; the plots say so and name the estimator of the loss.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Plan } from "../../plan/schema.js";
import { fileReadError, MAX_RUN_FILE_BYTES, readTextFile } from "../../plan/read-file.js";
import { RunFolderError } from "../checkpoint.js";
import type { MetricsRow, TrainRowMetrics } from "../metrics.js";
import { esc, heatmap, lineChart, type Series } from "./svg.js";
import { damagedLinesMessage, partialSampleMessage, readEpisodeSamples, type EpisodeSamplesRead, type SampleFileNote } from "../episode-samples.js";
import { EPISODES_CSS, episodesPanel } from "./episodes.js";

export interface ReportInfo {
  status?: string;
  runDir?: string;
  /** The resolved curriculum, as `tcod run --print-config` prints it. */
  config?: string;
  /** Sample episodes (RUN_DIR/episodes.jsonl) and the lines of it left out. */
  episodes?: EpisodeSamplesRead;
}

export function renderReport(plan: Plan, rows: readonly MetricsRow[], info: ReportInfo = {}): string {
  const train = rows.filter((r): r is TrainRowMetrics => r.kind === "train");
  const evals = rows.filter((r) => r.kind === "eval");
  const evalNames = [...new Set(evals.map((r) => (r.kind === "eval" ? r.name : "")))];
  const pts = (f: (r: TrainRowMetrics) => number | null): [number, number][] =>
    train.flatMap((r) => { const v = f(r); return v === null ? [] : [[r.step, v] as [number, number]]; });

  const success: Series[] = [
    { name: "train", points: pts((r) => r.successRate) },
    ...evalNames.map((n) => ({ name: `eval ${n}`, points: evals.flatMap((r) => (r.kind === "eval" && r.name === n ? [[r.step, r.successRate] as [number, number]] : [])) })),
  ];
  const depth = train.reduce((m, r) => Math.max(m, r.kl.perTurn.length), 0);
  const klGrid = train.map((r) => Array.from({ length: depth }, (_, h) => r.kl.perTurn[h] ?? null));
  const schedules: Series[] = [
    // The horizon is drawn wide and pale so the student-turns line, often equal to it, leaves it visible.
    { name: "horizon", points: pts((r) => r.horizon), width: 5 },
    { name: "prefix", points: pts((r) => r.prefix) },
    { name: "student turns", points: pts((r) => r.studentTurns), dashed: true },
    ...(train.some((r) => r.adaptiveCap !== null) ? [{ name: "adaptive cap", points: pts((r) => r.adaptiveCap) }] : []),
  ];
  const termNames = [...new Set(train.flatMap((r) => Object.keys(r.coefs)))].sort();
  const weights: Series[] = [
    ...termNames.map((k) => ({ name: k === "opd" ? "κ (opd)" : k === "grpo" ? "ρ (grpo)" : k, points: pts((r) => r.coefs[k] ?? null) })),
    ...(train.some((r) => r.blendWeight !== null) ? [{ name: "blend w (turn_mean)", points: pts((r) => r.blendWeight) }] : []),
  ];
  const phases = ["rollout", "teacher", "advantage", "update", "eval", "probe"];
  const times: Series[] = phases
    .map((p) => ({ name: p, points: pts((r) => r.time[p] ?? null) }))
    .filter((s) => s.points.some(([, y]) => y > 0));

  const kl = klTitle(plan);
  const last = train[train.length - 1];
  const firstEval = evals[0], lastEval = evals[evals.length - 1];
  const summary = [
    ["plan", plan.name],
    ["status", info.status ?? "—"],
    ["steps", `${last?.step ?? 0} / ${plan.clock.steps}`],
    ["seed", String(plan.clock.seed)],
    ...(firstEval && lastEval && firstEval.kind === "eval" && lastEval.kind === "eval"
      ? [["eval success", `${firstEval.successRate.toFixed(3)} (step ${firstEval.step}) → ${lastEval.successRate.toFixed(3)} (step ${lastEval.step})`]] : []),
    ["wall time", `${train.reduce((a, r) => a + Object.values(r.time).reduce((x, y) => x + y, 0), 0).toFixed(1)} s`],
    ["dropped episodes (faults)", String(train.reduce((a, r) => a + r.droppedFailed, 0))],
    ["dropped stale rows", String(train.reduce((a, r) => a + r.droppedStale, 0))],
  ];
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>tcod report: ${esc(plan.name)}</title>
<style>
body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1400px}
h1{font-size:20px} .grid{display:flex;flex-wrap:wrap;gap:16px}
figure{margin:0;border:1px solid #ddd;border-radius:6px;padding:8px;background:#fafafa}
figcaption{font-weight:600;margin-bottom:4px} details{margin-top:16px} pre{background:#f6f6f6;padding:8px;overflow:auto;font-size:12px} table{border-collapse:collapse} td{padding:2px 10px 2px 0}
td:first-child{color:#666}${EPISODES_CSS}
</style></head><body>
<h1>tcod run report — ${esc(plan.name)}</h1>
<table>${summary.map(([k, v]) => `<tr><td>${esc(k!)}</td><td>${esc(v!)}</td></tr>`).join("")}</table>
<p>One step = one explore batch (${batchText(plan)}); evaluation episodes are never capped.</p>
<div class="grid">
${lineChart("success", "Success rate (train episodes and evaluation)", success, { yMin: 0, yMax: 1 })}
${heatmap("kl-per-turn", `${kl} per turn index over training`, train.map((r) => r.step), depth, klGrid)}
${lineChart("kl-mean", `${kl}, token mean`, [{ name: "KL", points: pts((r) => r.kl.mean) }])}
${lineChart("schedules", "Schedules in force (turns, mean over episodes)", schedules)}
${lineChart("weights", "Loss coefficients and blend weight", weights)}
${lineChart("reward", "Mean episode reward and share of admissible actions", [{ name: "reward", points: pts((r) => r.meanReward) }, { name: "admissible", points: pts((r) => r.admissibleRate ?? null) }])}
${lineChart("loss", "Update: loss", [{ name: "loss", points: pts((r) => (Number.isFinite(r.loss) ? r.loss : null)) }])}
${lineChart("grad-norm", "Update: gradient norm (before clipping)", [{ name: "grad norm", points: pts((r) => (Number.isFinite(r.gradNorm) ? r.gradNorm : null)) }])}
${lineChart("lr", "Update: learning rate", [{ name: "lr", points: pts((r) => r.lr) }])}
${lineChart("time", "Wall time per phase (s)", times)}
${feedbackCharts(train, pts)}
</div>
${feedbackPanel(train)}
${episodesPanel(info.episodes?.samples ?? [], info.episodes?.damaged ?? [], info.episodes?.partialLastLine)}
${configPanel(plan, info.config)}
</body></html>
`;
}

/** The feedback rules' stages and smoothed signals over the steps (nothing without feedback rules). */
function feedbackCharts(train: TrainRowMetrics[], pts: (f: (r: TrainRowMetrics) => number | null) => [number, number][]): string {
  const names = [...new Set(train.flatMap((r) => Object.keys(r.feedback?.values ?? {})))].sort();
  if (names.length === 0) return "";
  const stages = names.filter((n) => n.startsWith("stage#"));
  const signals = names.filter((n) => !n.startsWith("stage#"));
  return [
    stages.length ? lineChart("feedback-stages", "Feedback: pacing stages in force", stages.map((n) => ({ name: n, points: pts((r) => r.feedback?.values[n] ?? null) }))) : "",
    signals.length ? lineChart("feedback-signals", "Feedback: smoothed signals in force (from the steps finished before)", signals.map((n) => ({ name: n, points: pts((r) => r.feedback?.values[n] ?? null) }))) : "",
  ].join("\n");
}

/** Every stage advance of the run: the step it took effect, the finished step that moved it, the signal then. */
export function stageAdvances(train: readonly TrainRowMetrics[]): { name: string; rule: string; stage: number; step: number; observed: number; signal: number | null }[] {
  const out: ReturnType<typeof stageAdvances> = [];
  const last: Record<string, number> = {};
  for (const r of train) {
    for (const [name, st] of Object.entries(r.feedback?.stages ?? {})) {
      if (st.stage > (last[name] ?? 0)) out.push({ name, rule: st.rule, stage: st.stage, step: r.step, observed: st.advancedAt ?? 0, signal: st.signal });
      last[name] = st.stage;
    }
  }
  return out;
}

function feedbackPanel(train: TrainRowMetrics[]): string {
  if (!train.some((r) => r.feedback)) return "";
  const adv = stageAdvances(train);
  const rules = [...new Map(adv.map((a) => [a.name, a.rule])).entries()];
  const lastRow = train[train.length - 1]!;
  const finals = Object.entries(lastRow.feedback?.stages ?? {}).map(([n, s]) => `${n} = ${s.stage} (streak ${s.streak})`).join(", ");
  const fmt = (v: number | null) => (v === null ? "—" : String(Number(v.toPrecision(4))));
  return `<details id="feedback" open><summary>Feedback rules: ${esc(finals || "no stage")} at step ${lastRow.step}</summary>
${rules.map(([n, r]) => `<p>${esc(n)} advances when <code>${esc(r)}</code> has held for its patience.</p>`).join("")}
<table><tr><td>stage</td><td>in force from step</td><td>moved by the metrics of step</td><td>signal then</td></tr>
${adv.map((a) => `<tr><td>${esc(a.name)} → ${a.stage}</td><td>${a.step}</td><td>${a.observed}</td><td>${esc(fmt(a.signal))}</td></tr>`).join("\n")}
</table></details>`;
}

/**
 * What the KL plots show. The metrics' per-turn and mean KL are the k1 estimate (log p_S − log p_T
 * of each sampled token, nats/token) whatever estimator the loss uses; the title says so and names
 * the estimator the plan's OPD term trains with.
 */
export function klTitle(plan: Plan): string {
  const adv = plan.graph.nodes.find((n) => n.kind === "Advantage");
  const terms = (adv?.params as { terms?: { kind: string; estimator?: string }[] } | undefined)?.terms ?? [];
  const est = terms.find((t) => t.kind === "opd" && t.estimator)?.estimator;
  const base = "Reverse KL, k1 estimate (log p_S − log p_T of the sampled token, nats/token)";
  switch (est) {
    case undefined: return `${base}; no OPD term trains on it`;
    case "k1": return `${base}; the loss uses k1`;
    case "full": return `${base}; the loss uses the exact full-vocabulary KL`;
    case "topk": return `${base}; the loss uses the exact KL to the teacher's top-k distribution (its tail spread evenly)`;
    default: return `${base}; the loss uses ${est}`;
  }
}

function configPanel(plan: Plan, config: string | undefined): string {
  if (config) return `<details id="config" open><summary>Curriculum (resolved)</summary><pre>${esc(config)}</pre></details>`;
  const nodes = plan.graph.nodes.map((n) => `${n.id} (${n.kind})\n${JSON.stringify(n.params, null, 2).split("\n").map((l) => `  ${l}`).join("\n")}`).join("\n");
  return `<details id="config"><summary>Plan nodes (the run was started from a plan file)</summary><pre>${esc(nodes)}</pre></details>`;
}

function batchText(plan: Plan): string {
  const t = plan.graph.nodes.find((n) => n.kind === "TaskSampler");
  return t?.kind === "TaskSampler" ? `${t.params.tasksPerStep} tasks × ${t.params.rolloutsPerTask} rollouts` : "no TaskSampler";
}

/**
 * Writes RUN_DIR/report.html. Lines of episodes.jsonl left out of it are told to `tell` (a warning
 * naming the first damaged line and counting them; a note for an unterminated last line), as well as
 * said in the report's episodes panel.
 */
export function writeReport(runDir: string, plan: Plan, rows: readonly MetricsRow[], info: { status?: string } = {}, tell?: SampleFileNote): string {
  const path = join(runDir, "report.html");
  const configPath = join(runDir, "config.txt");
  let config: string | undefined;
  if (existsSync(configPath)) {
    try {
      config = readTextFile(configPath, MAX_RUN_FILE_BYTES);
    } catch (e) {
      throw new RunFolderError(`the report cannot read ${configPath} (${fileReadError(e).message})`, {
        where: { file: configPath }, hint: `${configPath} holds the resolved curriculum the run was started with; move what is in its place out of the way, then resume the run (--resume ${runDir}) to write the report.`,
      });
    }
  }
  const episodesPath = join(runDir, "episodes.jsonl");
  const episodes = readEpisodeSamples(episodesPath);
  if (episodes.damaged.length) tell?.("warning", damagedLinesMessage(episodesPath, episodes.damaged, "the report leaves such lines out"), episodes.damaged);
  if (episodes.partialLastLine !== undefined) tell?.("note", partialSampleMessage(episodesPath, episodes.partialLastLine));
  writeFileSync(path, renderReport(plan, rows, { ...info, runDir, episodes, ...(config !== undefined ? { config } : {}) }));
  return path;
}
