/**
 * The report's episodes panel: a few sample episodes (episode-samples.ts) rendered turn by turn —
 * what the environment showed, what the student answered, the action it parsed to, whether the env
 * offered it, and the turn's reverse KL to the teacher as a number and a bar. It shows the samples
 * of the first and the last sampled step, so a reader sees the agent before and after training, and
 * the episodes kept from the last evaluation of each eval set (no KL there: an evaluation has no
 * teacher scores).
 */
import type { EpisodeSample, SampleLineProblem } from "../episode-samples.js";
import { esc } from "./svg.js";

/** The samples the panel shows: those of the first and of the last sampled step, at most `perStep` each. */
export function shownSamples(samples: readonly EpisodeSample[], perStep = 2): EpisodeSample[] {
  if (samples.length === 0) return [];
  const steps = [...new Set(samples.map((s) => s.step))].sort((a, b) => a - b);
  const chosen = [...new Set([steps[0]!, steps[steps.length - 1]!])];
  return chosen.flatMap((st) => samples.filter((s) => s.step === st).slice(0, perStep));
}

/** The evaluation samples the panel shows: those of each eval set's last evaluation. */
export function shownEvalSamples(samples: readonly EpisodeSample[], perEval = 2): EpisodeSample[] {
  const last = new Map<string, number>();
  for (const s of samples) if (s.eval !== undefined) last.set(s.eval, Math.max(last.get(s.eval) ?? -1, s.step));
  return [...last].flatMap(([name, step]) => samples.filter((s) => s.eval === name && s.step === step).slice(0, perEval));
}

/** What the panel says of the lines of episodes.jsonl left out ("" when none were). */
export function leftOutText(damaged: readonly SampleLineProblem[], partialLastLine?: number): string {
  const n = damaged.length;
  const lines = n === 0 ? "" : ` ${n} line${n === 1 ? "" : "s"} of episodes.jsonl ${n === 1 ? "is" : "are"} not a sample episode and ${n === 1 ? "is" : "are"} left out (line ${damaged[0]!.line} ${damaged[0]!.problem}${n > 1 ? `; lines ${damaged.slice(0, 10).map((d) => d.line).join(", ")}${n > 10 ? ", …" : ""}` : ""}).`;
  const partial = partialLastLine === undefined ? "" : ` Its last line, ${partialLastLine}, is cut off (a run killed while writing it) and left out.`;
  return lines + partial;
}

export function episodesPanel(all: readonly EpisodeSample[], damagedLines: readonly SampleLineProblem[] = [], partialLastLine?: number): string {
  const samples = all.filter((s) => s.eval === undefined);
  const shown = shownSamples(samples);
  const evals = shownEvalSamples(all);
  const damaged = leftOutText(damagedLines, partialLastLine);
  if (shown.length === 0 && evals.length === 0) {
    return `<section id="episodes"><h2>Episodes</h2><p>No sample episodes were recorded (RUN_DIR/episodes.jsonl is missing or empty).${esc(damaged)}</p></section>`;
  }
  const steps = new Set(samples.map((s) => s.step)).size;
  const maxKl = Math.max(1e-9, ...shown.flatMap((s) => s.turns.map((t) => Math.abs(t.kl ?? 0))));
  const evalPart = evals.length === 0 ? "" : `
<h3>Evaluation episodes</h3>
<p>${all.length - samples.length} evaluation episodes are in RUN_DIR/episodes.jsonl (the first won and the first failed of each evaluation); shown: each eval set's last evaluation.</p>
${evals.map((s) => episode(s, maxKl, false)).join("\n")}`;
  return `<section id="episodes"><h2>Episodes</h2>
<p>${samples.length} sampled training episodes from ${steps} steps are in RUN_DIR/episodes.jsonl; shown: the first and the last sampled step.
KL is the turn's reverse KL to the teacher, k1 (the mean of log p_S − log p_T over the turn's sampled tokens, nats/token).${esc(damaged)}</p>
${shown.map((s, i) => episode(s, maxKl, i === 0)).join("\n")}${evalPart}
</section>`;
}

function episode(s: EpisodeSample, maxKl: number, open: boolean): string {
  const outcome = s.won ? "won" : s.truncated ? "cut by the horizon" : "not won";
  const head = `${s.eval !== undefined ? `evaluation ${s.eval} after ` : ""}step ${s.step} · episode ${s.episode} · task ${s.task} (${s.split}) · ${outcome}, reward ${fmt(s.reward)} · horizon ${s.horizon}${s.prefix.length ? ` · ${s.prefix.length} expert actions replayed first` : ""}`;
  const prefix = s.prefix.length
    ? `<p class="prefix">Expert prefix (replayed, no model call): ${s.prefix.map((a) => `<code>${esc(a)}</code>`).join(" → ")}</p>` : "";
  const rows = s.turns.map((t) => `<tr class="${t.admissible ? "ok" : "bad"}"><td>${t.index}</td><td><pre>${esc(t.observation)}</pre></td><td><pre>${esc(t.response)}</pre>${t.finishReason === "length" ? "<small>(cut at the token limit)</small>" : ""}</td><td>${t.action === null ? "<em>unparsed</em>" : `<code>${esc(t.action)}</code>`}${t.admissible ? "" : " <small>(not offered)</small>"}</td><td class="kl">${t.kl === null ? "—" : `${fmt(t.kl)}<span class="bar" style="width:${Math.round((60 * Math.abs(t.kl)) / maxKl)}px"></span>`}</td></tr>`).join("\n");
  return `<details class="episode"${open ? " open" : ""}><summary>${esc(head)}</summary>${prefix}
<table class="turns"><thead><tr><th>turn</th><th>observation</th><th>response</th><th>action</th><th>KL</th></tr></thead><tbody>
${rows}
</tbody></table></details>`;
}

const fmt = (x: number): string => (Number.isInteger(x) ? String(x) : x.toFixed(3));

export const EPISODES_CSS = `
#episodes table.turns{border-collapse:collapse;width:100%;font-size:12px} #episodes th{text-align:left;border-bottom:1px solid #ccc}
#episodes td{vertical-align:top;border-bottom:1px solid #eee;padding:4px 8px 4px 0} #episodes pre{margin:0;padding:2px 4px;white-space:pre-wrap;max-width:560px}
#episodes tr.bad td:nth-child(4){color:#b00} #episodes td.kl{white-space:nowrap} #episodes .bar{display:inline-block;height:8px;margin-left:6px;background:#d95f02;vertical-align:middle}
#episodes summary{cursor:pointer;font-weight:600} #episodes .prefix{color:#555}`;
