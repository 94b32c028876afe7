// Summarises the run folders of bench/h200/learn.sh (stdout, JSON): per run, the steps it finished,
// its evaluations (success on valid_seen, valid_unseen and hard at each evaluated step), the final and
// best of each, the mean step time and the median of each part of a step (rollout, teacher, update…:
// the metrics' `time`), for SFT runs the demonstrations' NLL at the first and last step,
// the last evaluation's action rates per eval set (admissible share; repeats of an unlisted action),
// and for runs that sample (students) the mean sampled success and per-token KL over their first and
// last 25 steps: the training policy's own trend, beside the greedy evaluations; for runs traced with
// learn.sh's TRACE, the worker's own time per kind of request (`worker`); and for runs that saved
// training episodes (episodes.jsonl), their turns per block of steps (`turns`): how many, the share of
// actions the env did not list, the `take`s it did, and the mean per-turn KL to the teacher of listed
// and unlisted actions — whether the teacher's signal tells the student's mistakes from its moves.
// Lines that are not JSON are left out with a warning on stderr and counted per file (`unreadLines`).
//   node bench/h200/learn-summary.mjs WORK_DIR > learn.json
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { jsonReader } from "./read-lines.mjs";

const dir = process.argv[2];
if (!dir) { console.error("usage: node bench/h200/learn-summary.mjs WORK_DIR"); process.exit(1); }
// The JSON lines of a run's file (read-lines.mjs): a line that is not JSON is left out, never unsaid:
// one warning per file on stderr names its first such line and counts them, and the run's entry
// records the count (`unreadLines`); an unterminated last line is left out with a note.
const { lines: rows, unread } = jsonReader("learn-summary");
const r3 = (x) => (typeof x === "number" && Number.isFinite(x) ? Math.round(x * 1000) / 1000 : null);
const SPLITS = ["valid_seen", "valid_unseen", "hard"];
const mean = (xs) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : null);
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2 : null; };

const runs = {};
for (const name of readdirSync(dir).sort()) {
  const m = rows(join(dir, name, "metrics.jsonl"));
  if (m.length === 0) continue;
  const train = m.filter((r) => r.kind === "train");
  const byStep = new Map();
  for (const e of m.filter((r) => r.kind === "eval")) {
    const at = byStep.get(e.step) ?? { step: e.step };
    at[e.name] = r3(e.successRate);
    byStep.set(e.step, at);
  }
  const evals = [...byStep.values()].sort((a, b) => a.step - b.step);
  // The three splits, and any other evaluation the run has (e.g. valid_seen_t0.4: another temperature).
  const names = [...new Set([...SPLITS, ...evals.flatMap((e) => Object.keys(e).filter((k) => k !== "step"))])];
  const pick = (f) => Object.fromEntries(names.map((s) => [s, f(evals.map((e) => e[s]).filter((x) => x !== undefined && x !== null))]));
  // The last evaluation's action rates per eval set (listed actions; repeats of an unlisted one).
  const actions = {};
  for (const e of m) if (e.kind === "eval" && e.admissibleRate !== undefined) actions[e.name] = { step: e.step, admissible: r3(e.admissibleRate), repeats: r3(e.repeatRate) };
  const stepTimes = train.map((r) => Object.values(r.time ?? {}).reduce((a, b) => a + b, 0));
  const parts = [...new Set(train.flatMap((r) => Object.keys(r.time ?? {})))];
  const medianS = Object.fromEntries([["step", r3(median(stepTimes))], ...parts.map((k) => [k, r3(median(train.map((r) => r.time?.[k]).filter((x) => typeof x === "number")))])]);
  const sampling = train.filter((r) => r.episodes > 0 && typeof r.successRate === "number");
  const block = (rs) => ({ steps: [rs[0].step, rs[rs.length - 1].step], success: r3(mean(rs.map((r) => r.successRate))),
    kl: r3(mean(rs.map((r) => r.kl?.mean).filter((x) => typeof x === "number"))) });
  runs[name] = {
    steps: train.length,
    meanStepS: r3(stepTimes.reduce((a, b) => a + b, 0) / Math.max(1, stepTimes.length)),
    medianS,
    evals,
    final: pick((xs) => (xs.length ? xs[xs.length - 1] : null)),
    best: pick((xs) => (xs.length ? Math.max(...xs) : null)),
    ...(train.some((r) => r.demoNll !== undefined) ? { demoNll: { first: r3(train[0]?.demoNll), last: r3(train[train.length - 1]?.demoNll) } } : {}),
    klMean: { first: r3(train[0]?.kl?.mean), last: r3(train[train.length - 1]?.kl?.mean) },
    ...(sampling.length ? { sampled: { first25: block(sampling.slice(0, 25)), last25: block(sampling.slice(-25)) } } : {}),
    ...(Object.keys(actions).length ? { lastEvalActions: actions } : {}),
    ...turnBlocks(rows(join(dir, name, "episodes.jsonl"))),
    ...(existsSync(join(dir, `${name}.trace.jsonl`)) ? { worker: workerTrace(rows(join(dir, `${name}.trace.jsonl`))) } : {}),
  };
  const files = [join(dir, name, "metrics.jsonl"), join(dir, name, "episodes.jsonl"), join(dir, `${name}.trace.jsonl`)].filter((f) => unread[f]);
  if (files.length) runs[name].unreadLines = Object.fromEntries(files.map((f) => [f, unread[f]]));
}

/**
 * The saved training episodes' turns in blocks of steps (1–5, 6–12, 13–27, 28–50, 51–100, 101+: the
 * blocks the write-ups compare; 13–27 is where unclamped students fell): turns, the share the env did
 * not list (`unlisted`), listed `take`s, and the mean per-turn KL (the episode samples' `kl`: the
 * mean over a reply's tokens of log p_S − log p_T at the sampled tokens) of listed and of unlisted
 * actions. Empty for runs without sampled training episodes (SFT runs save evaluation episodes only).
 */
function turnBlocks(episodes) {
  const edges = [[1, 5], [6, 12], [13, 27], [28, 50], [51, 100], [101, Infinity]];
  const blocks = edges.map(([lo, hi]) => ({ steps: `${lo}-${hi === Infinity ? "" : hi}`, turns: 0, unlisted: 0, takes: 0, klListed: [], klUnlisted: [] }));
  for (const e of episodes) {
    if (e.split !== "train" || !Array.isArray(e.turns)) continue;
    const b = blocks[edges.findIndex(([lo, hi]) => e.step >= lo && e.step <= hi)];
    if (!b) continue;
    for (const t of e.turns) {
      b.turns++;
      if (!t.admissible) b.unlisted++;
      else if (/^take /.test(t.action ?? "")) b.takes++;
      if (typeof t.kl === "number") (t.admissible ? b.klListed : b.klUnlisted).push(t.kl);
    }
  }
  const used = blocks.filter((b) => b.turns > 0).map(({ klListed, klUnlisted, ...b }) => ({
    ...b, unlistedShare: r3(b.unlisted / b.turns), klListed: r3(mean(klListed)), klUnlisted: r3(mean(klUnlisted)),
  }));
  return used.length ? { turns: used } : {};
}

/**
 * learn.sh's TRACE: the worker's own record of the run's requests, per kind (sample, score of the
 * teacher or the student, forward_backward, optim_step): calls, seconds in all and per call (median),
 * for scores the forwards' device seconds, and tokens processed; `perStep` divides by the optimiser
 * steps, to set beside the run's own per-step times (medianS), which add HTTP and the runtime.
 */
function workerTrace(lines) {
  const kinds = {};
  for (const l of lines) {
    const kind = l.op === "score" ? `score_${l.model}` : l.op;
    (kinds[kind] ??= []).push(l);
  }
  const steps = kinds.optim_step?.length ?? 0;
  const tokensOf = (l) => ["sequences", "prompts", "responses", "rows"].reduce((n, k) => n + (typeof l[k]?.tokens === "number" ? l[k].tokens : 0), 0);
  const sum = (xs) => xs.reduce((a, b) => a + b, 0);
  return {
    optimSteps: steps,
    kinds: Object.fromEntries(Object.entries(kinds).map(([k, ls]) => {
      const forward = ls.map((l) => l.forward_s).filter((x) => typeof x === "number");
      return [k, {
        calls: ls.length, s: r3(sum(ls.map((l) => l.s))), medianS: r3(median(ls.map((l) => l.s))),
        ...(forward.length ? { forwardS: r3(sum(forward)), medianForwardS: r3(median(forward)) } : {}),
        tokens: sum(ls.map(tokensOf)),
        ...(steps ? { perStep: { s: r3(sum(ls.map((l) => l.s)) / steps), ...(forward.length ? { forwardS: r3(sum(forward) / steps) } : {}) } } : {}),
      }];
    })),
  };
}
console.log(JSON.stringify({ date: new Date().toISOString(), runs }, null, 2));
