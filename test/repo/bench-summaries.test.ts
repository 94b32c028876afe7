/**
 * The bench summaries read what runs wrote (bench/h200/summarize.mjs: metrics.jsonl, backend-wait.jsonl,
 * plain.json; bench/study/summarize.ts: metrics.jsonl, calls.jsonl, plan.json, cpu.json) and go on
 * past a bad line, as learn-summary.mjs does (test/repo/learn-summary.test.ts): a warning on stderr
 * naming the file and its first such line, and how many — not a stack trace (a line that is not
 * JSON crashed both) nor a silent null (a damaged cpu.json).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildSync } from "esbuild";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../..");
const noStack = (stderr: string) => expect(stderr).not.toMatch(/\n\s+at .+:\d+:\d+|SyntaxError|TypeError/);

describe("bench/h200/summarize.mjs", () => {
  it("warns of the lines it cannot read, per file, counts them, and summarises the rest", () => {
    const out = mkdtempSync(join(tmpdir(), "tcod-h200-summary-"));
    const run = join(out, "runs", "opd");
    mkdirSync(run, { recursive: true });
    const metrics = join(run, "metrics.jsonl"), marks = join(run, "backend-wait.jsonl");
    const train = (step: number) => JSON.stringify({ kind: "train", step, turns: 2, successRate: 0.5, time: { rollout: 1 } });
    writeFileSync(metrics, [train(1), "garbage", train(2), ""].join("\n"));
    const mark = (atMs: number, busyMs: number) => JSON.stringify({ atMs, busyMs, busyKindMs: { sample: busyMs }, tokens: { sample: busyMs / 10 } });
    writeFileSync(marks, [mark(0, 0), '{"atMs": 5}', mark(1000, 500), mark(2000, 1500), ""].join("\n"));
    writeFileSync(join(out, "plain.json"), '{"step_s": ');
    const r = spawnSync(process.execPath, [join(ROOT, "bench/h200/summarize.mjs"), out], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    noStack(r.stderr);
    expect(r.stderr.split("\n").filter(Boolean)).toEqual([
      `summarize: warning: ${metrics}:2: line 2 is not JSON; left out of the summary`,
      `summarize: warning: ${marks}:2: line 2 is not a backend-wait mark (\`atMs\`, \`busyMs\`, \`busyKindMs\`, \`tokens\`); left out of the summary`,
      `summarize: warning: ${join(out, "plain.json")}: not JSON (Unexpected end of JSON input); left out of the summary`,
    ]);
    const s = JSON.parse(r.stdout) as { runs: { opd: { steps: number; stepWallS: number } }; plain: unknown; unreadLines: Record<string, number> };
    expect(s.runs.opd.steps).toBe(2);
    expect(s.runs.opd.stepWallS).toBe(1);
    expect(s.plain).toBeNull();
    expect(s.unreadLines).toEqual({ [metrics]: 1, [marks]: 1 });
  });
});

describe("bench/study/summarize.ts", () => {
  it("warns of the metrics and calls.jsonl lines it cannot read and of a damaged cpu.json, and summarises the rest", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-study-summary-"));
    const script = join(dir, "study-summarize.mjs");
    buildSync({ entryPoints: [join(ROOT, "bench/study/summarize.ts")], bundle: true, platform: "node", format: "esm", outfile: script, logLevel: "error" });
    const run = join(dir, "runs", "a"), results = join(dir, "results");
    mkdirSync(run, { recursive: true });
    mkdirSync(results);
    // The test plan without its evaluations (the summary would simulate the embedded teacher on each).
    const plan = JSON.parse(readFileSync(join(ROOT, "test/fixtures/plans/texthouse-f2b-small.json"), "utf8")) as { graph: { nodes: { kind: string }[] } };
    plan.graph.nodes = plan.graph.nodes.filter((n) => n.kind !== "Evaluate");
    writeFileSync(join(run, "plan.json"), JSON.stringify(plan));
    const train = (step: number) => JSON.stringify({
      kind: "train", step, policyStep: 0, policyVersion: 1, episodes: 4, successRate: 0.25, meanReward: 0.25, horizon: 2, prefix: 0,
      expertLength: 0, studentTurns: 2, turns: 2, invalidActions: 0, admissibleRate: 0.5, noExperience: 0, droppedFailed: 0, droppedStale: 0,
      kl: { mean: 0.1, perTurn: [0.1, 0.2] }, tokens: { prompt: 10, response: 3 }, coefs: { opd: 1 }, blendWeight: null, adaptiveCap: null,
      lr: 0.01, loss: 0.5, gradNorm: 1.5, updates: 1, time: { rollout: 0.5 },
    });
    const metrics = join(run, "metrics.jsonl"), calls = join(dir, "runs", "calls.jsonl"), cpu = join(run, "cpu.json");
    writeFileSync(metrics, [train(1), "garbage", train(2), '{"kind":"train","step":3}', train(4), ""].join("\n"));
    writeFileSync(calls, ['{"cpus": 2}', "{oops", '{"cpus": 4}', ""].join("\n"));
    writeFileSync(cpu, '{"wall": 1,');
    const r = spawnSync(process.execPath, [script, results, run], { encoding: "utf8", env: { ...process.env, STUDY_NAME: "embedded" } });
    expect(r.status, r.stderr).toBe(0);
    noStack(r.stderr);
    const lines = r.stderr.split("\n").filter(Boolean);
    expect(lines).toHaveLength(3);
    expect(lines[0]).toBe(`study-summarize: warning: ${metrics}:2: line 2 is not a metrics row (truncated or overwritten): not JSON (Unexpected token 'g' at column 1); 2 lines in all (2, 4); left out of the summary`);
    expect(lines[1]).toMatch(new RegExp(`^study-summarize: warning: ${calls}:2: line 2 is not JSON \\(.*\\); left out of the summary$`));
    expect(lines[2]).toMatch(new RegExp(`^study-summarize: warning: ${cpu}: not JSON \\(.*\\); left out of the summary$`));
    const s = JSON.parse(readFileSync(join(results, "study-embedded.json"), "utf8")) as { calls: unknown[]; methods: { steps: number; process: unknown[] }[] };
    expect(s.calls).toEqual([{ cpus: 2 }, { cpus: 4 }]);
    expect(s.methods[0]!.steps).toBe(4);
    expect(s.methods[0]!.process).toEqual([null]);
  });
});
