/**
 * End-to-end speed of every texthouse example on the embedded backend: compile + run to completion
 * (quiet), wall seconds, training steps per second and turns per second, and the eval success at the
 * start and the end. Baseline measured in the same run: texthouse env steps per second with random
 * admissible actions (the env alone), so results from different (noisy, shared) runs compare as ratios.
 *
 *   npx esbuild bench/examples.bench.ts --bundle --platform=node --format=esm --outfile=runs/examples.bench.mjs \
 *     --external:ts-morph --external:esbuild && node runs/examples.bench.mjs > bench/results/examples.json
 * (bundle inside the repository: the compiler finds stdlib/ next to it.)
 */
import os from "node:os";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compileFile } from "../compiler/index.js";
import { runPlan } from "../runtime/engine.js";
import { TexthouseWorld, generateTask } from "../runtime/envs/texthouse/index.js";

/** TCOD_EXAMPLES=tcod-f2b,opd runs only those (a shared machine's budget); default all five. */
const EXAMPLES = process.env.TCOD_EXAMPLES ? process.env.TCOD_EXAMPLES.split(",") : ["opd", "tcod-f2b", "tcod-b2f", "turnopd", "atod"];

function envStepsPerSecond(): number {
  let seed = 7;
  const rand = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const specs = Array.from({ length: 20 }, (_, i) => generateTask("train", i * 13));
  const t0 = performance.now();
  let n = 0, w = new TexthouseWorld(specs[0]!), adm = w.reset().admissible;
  while (performance.now() - t0 < 1000) {
    const r = w.step(adm[Math.floor(rand() * adm.length)]!);
    n++;
    if (r.done) { w = new TexthouseWorld(specs[n % specs.length]!); adm = w.reset().admissible; } else adm = r.admissible;
  }
  return Math.round(n / ((performance.now() - t0) / 1000));
}

const results: Record<string, unknown>[] = [];
const baseline = envStepsPerSecond();
for (const name of EXAMPLES) {
  const file = `examples/texthouse/${name}.tcod`;
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const load0 = os.loadavg()[0]!;
  const compiled = compileFile(file);
  if (!compiled.ok) throw new Error(`${file} does not compile`);
  const plan = compiled.plans[0]!.plan;
  const dir = mkdtempSync(join(tmpdir(), `tcod-ex-${name}-`));
  let turns = 0;
  const evals: { name: string; step: number; success: number }[] = [];
  // Training-side learning signals (first and last step): mean KL to the teacher (k1 on sampled
  // tokens) and the rate of admissible actions.
  const train: { step: number; kl: number; admissibleRate: number }[] = [];
  const res = await runPlan(plan, {
    runDir: dir,
    onRow: (r) => {
      if (r.kind === "train") { turns += r.turns; train.push({ step: r.step, kl: +r.kl.mean.toFixed(3), admissibleRate: +r.admissibleRate.toFixed(3) }); }
      else evals.push({ name: r.name, step: r.step, success: r.successRate });
    },
  });
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  rmSync(dir, { recursive: true, force: true });
  results.push({
    example: file, status: res.status, steps: res.step, seconds: +seconds.toFixed(1),
    cpuSeconds: +((cpu.user + cpu.system) / 1e6).toFixed(1), loadAverage: [+load0.toFixed(1), +os.loadavg()[0]!.toFixed(1)],
    stepsPerSecond: +(res.step / seconds).toFixed(3), turnsPerSecond: Math.round(turns / seconds),
    turnsPerSecondOverEnvStepsPerSecond: Number((turns / seconds / baseline).toPrecision(3)),
    evalSuccessFirst: evals[0] ?? null, evalSuccessLast: evals[evals.length - 1] ?? null, evals,
    trainFirst: train[0] ?? null, trainLast: train[train.length - 1] ?? null,
  });
}
process.stdout.write(JSON.stringify({
  bench: "examples", machine: { cpus: os.cpus().length, node: process.version }, date: new Date().toISOString(),
  baselineEnvStepsPerSecond: baseline, results,
}, null, 2) + "\n");
