// Summarises a bench/h200/run.sh output folder into one JSON object (stdout): per tcod run, tokens/s
// of sampling, scoring and training, step time by phase, the runtime's own overhead (step wall time
// minus time with a request outstanding at a model server, over step wall time: a lower bound of
// tcod's own time, since JavaScript work done while a call is in flight is hidden), and beside them the
// plain PyTorch loop's figures and the peak GPU memory seen by nvidia-smi.
//   node bench/h200/summarize.mjs OUT_DIR > OUT_DIR/h200.json
// Steps: the first optimiser step of a run is left out (it includes the worker's warm-up and the
// step-0 evaluation); wall time is measured between consecutive optimiser steps (backend-wait.jsonl).
// A line that is not JSON, or a backend-wait mark without its numbers, is left out with a warning on
// stderr naming the file and line (read-lines.mjs), counted in `unreadLines`; so is a .json that is not.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { jsonReader } from "./read-lines.mjs";

const out = process.argv[2];
if (!out) { console.error("usage: node bench/h200/summarize.mjs OUT_DIR"); process.exit(1); }
const { lines: jsonl, json, unread } = jsonReader("summarize");
const num = (v) => typeof v === "number" && Number.isFinite(v);
const obj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
/** What a backend-wait.jsonl mark needs (the differences below read each). */
const markProblem = (m) => (!obj(m) || !num(m.atMs) || !num(m.busyMs) || !obj(m.busyKindMs) || !obj(m.tokens)
  ? "is not a backend-wait mark (`atMs`, `busyMs`, `busyKindMs`, `tokens`)" : undefined);
const rowProblem = (r) => (obj(r) ? undefined : "is not a metrics row (an object)");
const sum = (xs) => xs.reduce((a, b) => a + b, 0);
const r3 = (x) => (x === null || x === undefined || !Number.isFinite(x) ? null : Math.round(x * 1000) / 1000);
const KINDS = ["sample", "score", "teacher", "train", "tokenize"];

function summariseRun(dir) {
  const metrics = jsonl(join(dir, "metrics.jsonl"), rowProblem);
  const marks = jsonl(join(dir, "backend-wait.jsonl"), markProblem);
  const train = metrics.filter((r) => r.kind === "train");
  const evals = metrics.filter((r) => r.kind === "eval");
  const res = { steps: train.length, measuredSteps: Math.max(0, marks.length - 1) };
  if (marks.length < 2) return { ...res, note: "fewer than 2 optimiser steps: nothing measured" };
  const first = marks[0], last = marks[marks.length - 1];
  const d = (f) => f(last) - f(first);
  const wallMs = d((m) => m.atMs), busyMs = d((m) => m.busyMs);
  const busy = Object.fromEntries(KINDS.map((k) => [k, d((m) => m.busyKindMs[k] ?? 0)]));
  const tokens = Object.fromEntries(KINDS.map((k) => [k, d((m) => m.tokens[k] ?? 0)]));
  const n = marks.length - 1;
  const later = train.slice(1);
  const phase = (k) => r3(sum(later.map((r) => r.time?.[k] ?? 0)) / Math.max(1, later.length));
  const perSec = (tok, ms) => (ms > 0 ? r3(tok / (ms / 1000)) : null);
  return {
    ...res,
    stepWallS: r3(wallMs / 1000 / n),
    waitS: r3(busyMs / 1000 / n),
    runtimeOverhead: r3(1 - busyMs / wallMs),
    waitByKindS: Object.fromEntries(KINDS.map((k) => [k, r3(busy[k] / 1000 / n)])),
    phaseS: { rollout: phase("rollout"), teacher: phase("teacher"), probe: phase("probe"), advantage: phase("advantage"), update: phase("update") },
    tokensPerS: {
      sample: perSec(tokens.sample, busy.sample),
      teacherScore: perSec(tokens.teacher, busy.teacher),
      studentScore: perSec(tokens.score, busy.score),
      train: perSec(tokens.train, busy.train),
    },
    tokensPerStep: Object.fromEntries(["sample", "teacher", "score", "train"].map((k) => [k, r3(tokens[k] / n)])),
    turnsPerStep: r3(sum(later.map((r) => r.turns)) / Math.max(1, later.length)),
    successRate: { first: train[0]?.successRate ?? null, last: train[train.length - 1]?.successRate ?? null },
    eval: evals.map((e) => ({ step: e.step, successRate: e.successRate, meanReward: e.meanReward })),
  };
}

function gpuSamples(file) {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8").split("\n").slice(1).map((l) => l.split(",").map((x) => x.trim())).filter((r) => r.length >= 6)
    .map(([idx, , used, total, util, ts]) => ({ idx, used: parseFloat(used), total: parseFloat(total), util: parseFloat(util), at: Date.parse(ts.replace(/\//g, "-")) / 1000 }));
}

function gpuMemory(samples) {
  if (samples.length === 0) return null;
  const peak = {};
  for (const { idx, used, total } of samples) {
    if (!Number.isFinite(used)) continue;
    peak[idx] = { peakUsedMiB: Math.max(peak[idx]?.peakUsedMiB ?? 0, used), totalMiB: total };
  }
  return { samples: samples.length, perGpu: peak, note: "nvidia-smi memory.used every 0.25 s over the whole script (all processes)" };
}

/** Mean nvidia-smi utilization.gpu (the share of time a kernel was running) of GPU 0 over [from, to] (s since epoch). */
function busyShare(samples, from, to) {
  const xs = samples.filter((s) => s.idx === "0" && s.at >= from && s.at <= to && Number.isFinite(s.util)).map((s) => s.util);
  return xs.length ? r3(sum(xs) / xs.length / 100) : null;
}

function traceWindow(file) {
  const ops = jsonl(file, (o) => (obj(o) ? undefined : "is not a trace record (an object)")).filter((o) => o.op === "optim_step" && num(o.at));
  return ops.length >= 2 ? [ops[0].at, ops[ops.length - 1].at] : null;
}

const runsDir = join(out, "runs");
const runs = existsSync(runsDir) ? Object.fromEntries(readdirSync(runsDir).sort().map((r) => [r, summariseRun(join(runsDir, r))])) : {};
const samples = gpuSamples(join(out, "gpu-mem.csv"));
for (const [name, run] of Object.entries(runs)) {
  const w = traceWindow(join(runsDir, name, "worker-trace.jsonl"));
  if (w) run.gpuBusyShare = busyShare(samples, w[0], w[1]);
}
const read = (f) => json(join(out, f));
const plain = read("plain.json");
const ops = read("ops.json");
const ops2 = read("ops-2gpu.json");
const opd = runs.opd;
const sideBySide = opd && plain ? {
  note: "the tcod OPD run vs the plain PyTorch loop replaying that run's own worker requests (same sequences, same batches, same models); tokens = prompt + response of every sequence a forward ran over, counted the same way on both sides",
  stepS: plain.step_s,
  tokensPerS: plain.tokens_per_s,
  jobSPerStep: plain.job_s_per_step,
  workerBusyShare: r3(plain.worker_busy_share),
  gpuBusyShare: opd.gpuBusyShare ?? null,
  peakMemoryGiB: { tcodWorker: plain.tcod_worker_peak_memory_gib, plain: plain.plain_peak_memory_gib },
} : null;
const targets = {
  opdStepRatio: { target: "<= 1.2", value: r3(plain?.step_s?.ratio) },
  teacherScoreTokPerS: { target: ">= 1e6", value: ops?.score?.worker_tok_s ?? null },
  trainTokPerS: { target: ">= 3e5", value: ops?.train?.worker_tok_s ?? null },
  sample256TokPerS: { target: ">= 2e4 (and >= HF generate at 256)", value: ops?.sample_teacher?.worker_tok_s ?? null, student: ops?.sample_student?.worker_tok_s ?? null },
  twoGpuSpeedup: { target: ">= 1.7", value: ops2?.scaling?.speedup ?? null },
  fsdp1b: { target: "trains on 2 GPUs without OOM", value: ops2?.fsdp_1b ? `${(ops2.fsdp_1b.params / 1e9).toFixed(2)} B params, ${ops2.fsdp_1b.worker_tok_s} tok/s` : null },
};
const unreadLines = Object.keys(unread).length ? { unreadLines: unread } : {};
console.log(JSON.stringify({ generatedAt: new Date().toISOString(), targets, runs, plain, ops, ops2gpu: ops2, sideBySide, gpuMemory: gpuMemory(samples), ...unreadLines }, null, 1));
