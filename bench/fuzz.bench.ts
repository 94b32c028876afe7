/**
 * The long fuzz run: up to FUZZ_N inputs (default 1,000,000; half generated programs, half mutations
 * of the examples, fixed seed FUZZ_SEED) through parse + check + lower, in-process. Counts contract
 * violations (a throw, a diagnostic without a catalogue code, an internal error, a span outside the
 * file), inputs over 1 s, and the slowest input; the parse-only time of the same inputs is the
 * baseline measured in the same run. Stops early at FUZZ_UNTIL (ISO time) and records what actually
 * ran. Writes bench/results/fuzz.json after every chunk of 1,000. Run:
 *
 *   npx esbuild bench/fuzz.bench.ts --bundle --platform=node --format=esm --packages=external --outfile=dist/fuzz.bench.mjs && nice node dist/fuzz.bench.mjs
 */
import { writeFileSync } from "node:fs";
import fc from "fast-check";
import { parse } from "../grammar/index.js";
import { rng } from "../test/helpers/prng.js";
import { checkContract, exampleTexts, mutate, programArb, scratch } from "../test/fuzz/generator.js";

const N = Number(process.env.FUZZ_N ?? 1_000_000);
const SEED = Number(process.env.FUZZ_SEED ?? 20261130);
const until = process.env.FUZZ_UNTIL ? Date.parse(process.env.FUZZ_UNTIL) : Infinity;
const out = new URL("results/fuzz.json", import.meta.url.includes("/dist/") ? new URL("../bench/", import.meta.url) : import.meta.url);

const file = scratch();
const seeds = exampleTexts(process.cwd());
const random = rng(SEED);
const stats = { inputs: 0, generated: 0, mutated: 0, crashes: 0, over1s: 0, maxMs: 0, totalCheckMs: 0, totalParseMs: 0, diagnostics: 0, cleanPrograms: 0 };
const failures: { input: string; error: string }[] = [];
const slowest: { ms: number; input: string }[] = [];
const started = new Date().toISOString();

function record(done: boolean): void {
  writeFileSync(out, JSON.stringify({
    bench: "fuzz", seed: SEED, requested: N, ran: stats.inputs, finished: done && stats.inputs === N, started, updated: new Date().toISOString(),
    ...stats, meanCheckMs: stats.totalCheckMs / Math.max(1, stats.inputs), meanParseMs: stats.totalParseMs / Math.max(1, stats.inputs),
    checkOverParse: stats.totalCheckMs / Math.max(1e-9, stats.totalParseMs),
    failures: failures.slice(0, 20), slowest: slowest.slice(0, 5).map((s) => ({ ms: s.ms, input: s.input.slice(0, 2000) })),
    node: process.version,
  }, null, 2) + "\n");
}

for (let chunk = 0; stats.inputs < N && Date.now() < until; chunk++) {
  const size = Math.min(1000, N - stats.inputs);
  const programs = fc.sample(programArb, { numRuns: Math.ceil(size / 2), seed: SEED + chunk });
  for (let i = 0; i < size; i++) {
    const generated = i % 2 === 0;
    const text = generated ? programs[i / 2]! : mutate(seeds, random);
    const p0 = performance.now();
    parse(text, file);
    stats.totalParseMs += performance.now() - p0;
    try {
      const o = checkContract(file, text);
      stats.totalCheckMs += o.ms;
      stats.diagnostics += o.diagnostics;
      if (o.ok) stats.cleanPrograms++;
      if (o.ms > 1000) stats.over1s++;
      if (o.ms > stats.maxMs) stats.maxMs = o.ms;
      if (slowest.length < 5 || o.ms > slowest[slowest.length - 1]!.ms) { slowest.push({ ms: o.ms, input: text }); slowest.sort((a, b) => b.ms - a.ms); slowest.length = Math.min(5, slowest.length); }
    } catch (e) {
      stats.crashes++;
      if (failures.length < 20) failures.push({ input: text.slice(0, 2000), error: (e as Error).message.slice(0, 2000) });
    }
    stats.inputs++;
    if (generated) stats.generated++; else stats.mutated++;
  }
  record(false);
}
record(true);
console.log(JSON.stringify({ ran: stats.inputs, crashes: stats.crashes, over1s: stats.over1s, maxMs: stats.maxMs }));
