/**
 * Metrics sinks: TensorBoard event files (framing and protobuf checked by hand, then read back with
 * TensorBoard's own loader), Weights & Biases in offline mode (read back from the .wandb file), and
 * `tcod metrics --csv`. The Python readers run in $TCOD_METRICS_PYTHON (test/metrics/ci-install.sh);
 * under CI a missing one is an error, elsewhere those cases are skipped.
 */
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { readMetrics, type MetricsRow, type TrainRowMetrics } from "../../runtime/metrics.js";
import { rowNulls, rowScalars } from "../../runtime/sinks/scalars.js";
import { crc32c, encodeEvent, maskedCrc32c, tfRecord } from "../../runtime/sinks/tensorboard.js";
import { summarise, toCsv } from "../../bin/commands/metrics.js";

const ROOT = resolve(import.meta.dirname, "../..");
const CLI = join(ROOT, "bin/tcod.mjs");
const PLAN = join(ROOT, "test/fixtures/plans/texthouse-f2b-small.json");
const PY = process.env.TCOD_METRICS_PYTHON ?? join(ROOT, ".venv-metrics/bin/python");

function pythonMissing(): string | undefined {
  try {
    execFileSync(PY, ["-c", "import tensorboard, wandb"], { stdio: "pipe", timeout: 120_000 });
    return undefined;
  } catch {
    const why = `${PY} cannot import tensorboard and wandb; run bash test/metrics/ci-install.sh`;
    if (process.env.CI) throw new Error(`CI must run the metrics-sink readers: ${why}`);
    console.warn(`skipping the TensorBoard/W&B read-back: ${why}`);
    return why;
  }
}

const trainRow = (step: number, kl: number): TrainRowMetrics => ({
  kind: "train", step, policyStep: step - 1, policyVersion: step, episodes: 4, successRate: 0.25, meanReward: 0.25,
  horizon: 2, prefix: 0, expertLength: 0, studentTurns: 2, turns: 2, invalidActions: 0, admissibleRate: 0.5,
  noExperience: 0, droppedFailed: 0, droppedStale: 0, kl: { mean: kl, perTurn: [kl, null] }, tokens: { prompt: 10, response: 3 },
  coefs: { opd: 1 }, blendWeight: null, adaptiveCap: null, lr: 0.01, loss: Number.NaN, gradNorm: 1.5, updates: 1,
  time: { rollout: 0.5 },
});

describe("TensorBoard encoding", () => {
  it("CRC-32C and TFRecord's mask match the reference values", () => {
    expect(crc32c(Buffer.from("123456789"))).toBe(0xe3069283); // the CRC-32C check value (RFC 3720 B.4)
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa); // RFC 3720 B.4: 32 bytes of zeros
    const c = crc32c(Buffer.from("abc"));
    expect(maskedCrc32c(Buffer.from("abc"))).toBe(((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0);
  }, 240000);

  it("frames a record as length, crc(length), payload, crc(payload)", () => {
    const payload = Buffer.from([1, 2, 3]);
    const r = tfRecord(payload);
    expect(r.length).toBe(8 + 4 + 3 + 4);
    expect(r.readBigUInt64LE(0)).toBe(3n);
    expect(r.readUInt32LE(8)).toBe(maskedCrc32c(r.subarray(0, 8)));
    expect([...r.subarray(12, 15)]).toEqual([1, 2, 3]);
    expect(r.readUInt32LE(15)).toBe(maskedCrc32c(payload));
  }, 240000);

  it("encodes an Event with a scalar summary as protobuf wire bytes", () => {
    const e = Buffer.from(encodeEvent({ wallTime: 1, step: 300, scalars: [["a", 0.5]] }));
    // wall_time: field 1, fixed64 double 1.0
    expect([...e.subarray(0, 9)]).toEqual([0x09, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f]);
    // step: field 2, varint 300 = 0xac 0x02
    expect([...e.subarray(9, 12)]).toEqual([0x10, 0xac, 0x02]);
    // summary (field 5) { value (1) { tag (1) "a", simple_value (2) float 0.5 } }
    expect([...e.subarray(12)]).toEqual([0x2a, 10, 0x0a, 8, 0x0a, 1, 0x61, 0x15, 0, 0, 0, 0x3f]);
  }, 240000);
});

describe("scalar names", () => {
  it("names train, eval and time fields; drops non-finite and null", () => {
    const s = rowScalars(trainRow(3, 0.7));
    expect(s["train/success_rate"]).toBe(0.25);
    expect(s["train/kl/mean"]).toBe(0.7);
    expect(s["train/kl/turn_0"]).toBe(0.7);
    expect("train/kl/turn_1" in s).toBe(false);
    expect("train/loss" in s).toBe(false);
    expect("train/blend_weight" in s).toBe(false);
    expect(s["train/coef/opd"]).toBe(1);
    expect(s["train/tokens/prompt"]).toBe(10);
    expect(s["time/rollout"]).toBe(0.5);
    const ev = rowScalars({ kind: "eval", name: "valid_seen", step: 4, successRate: 0.5, meanReward: 0.5, meanTurns: 7, episodes: 8, time: {} });
    expect(ev).toEqual({ "eval/valid_seen/success_rate": 0.5, "eval/valid_seen/mean_reward": 0.5, "eval/valid_seen/mean_turns": 7, "eval/valid_seen/episodes": 8 });
  }, 240000);

  it("CSV has one column per scalar and quotes what needs it; the summary finds the best step", () => {
    const rows: MetricsRow[] = [trainRow(1, 0.9), trainRow(2, 0.4), { kind: "eval", name: "a,b", step: 2, successRate: 1, meanReward: 1, meanTurns: 3, episodes: 2, time: {} }];
    const csv = toCsv([{ dir: "run\"1", rows }]).trim().split("\n");
    expect(csv).toHaveLength(4);
    const head = csv[0]!.split(",");
    expect(head.slice(0, 4)).toEqual(["run", "kind", "set", "step"]);
    expect(csv[3]!.startsWith('"run""1",eval,"a,b",2,')).toBe(true);
    const plain = toCsv([{ dir: "r", rows: rows.slice(0, 2) }]).trim().split("\n").map((l) => l.split(","));
    expect(plain[2]![plain[0]!.indexOf("train/kl/mean")]).toBe("0.4");
    const s = summarise(rows)["train/kl/mean"]!;
    expect(s).toMatchObject({ first: 0.9, last: 0.4, min: 0.4, argmin: 2, max: 0.9, argmax: 1, n: 2 });
  }, 240000);
});

describe("null values (`tcod metrics` shows them; it dropped them without a word)", () => {
  // loss NaN (written as null: JSON has no NaN) at steps 2 and 3 only; blendWeight and adaptiveCap
  // null in every row (the plan has neither); the KL of turn 1 null (no episode reached it).
  const rows: MetricsRow[] = [{ ...trainRow(1, 0.9), loss: 0.5 }, trainRow(2, 0.4), trainRow(3, 0.6)];
  const json = rows.map((r) => JSON.stringify(r)).join("\n") + "\n";

  it("rowNulls names what rowScalars leaves out, by the same names", () => {
    expect(rowNulls(trainRow(1, 0.9)).sort()).toEqual(["train/adaptive_cap", "train/blend_weight", "train/kl/turn_1", "train/loss"]);
    expect(rowNulls({ ...trainRow(1, 0.9), loss: 0.5, blendWeight: 0.2, adaptiveCap: 3, kl: { mean: 0.9, perTurn: [0.9] } })).toEqual([]);
  });

  it("the summary counts them: first/last null where that row holds null, min/max over the numbers", () => {
    const s = summarise(JSON.parse(`[${json.trim().split("\n").join(",")}]`) as MetricsRow[]);
    expect(s["train/loss"]).toEqual({ first: 0.5, last: null, min: 0.5, max: 0.5, argmin: 1, argmax: 1, n: 1, nulls: 2 });
    expect(s["train/blend_weight"]).toEqual({ first: null, last: null, min: null, max: null, argmin: null, argmax: null, n: 0, nulls: 3 });
    expect(s["train/kl/mean"]).toMatchObject({ n: 3, nulls: 0 });
  });

  it("the CSV writes null where the row holds null, and leaves empty what a row does not have", () => {
    const csv = toCsv([{ dir: "r", rows: [...rows, { kind: "eval", name: "v", step: 3, successRate: 1, meanReward: 1, meanTurns: 3, episodes: 2, time: {} }] }])
      .trim().split("\n").map((l) => l.split(","));
    const col = (tag: string) => csv.slice(1).map((r) => r[csv[0]!.indexOf(tag)]);
    expect(col("train/loss")).toEqual(["0.5", "null", "null", ""]);
    expect(col("train/blend_weight")).toEqual(["null", "null", "null", ""]);
  });

  it("tcod metrics prints them in the table, and names the scalars null in every row", () => {
    if (!existsSync(join(ROOT, "dist/tcod.js"))) spawnSync(process.execPath, [join(ROOT, "scripts/build.mjs")], { cwd: ROOT, stdio: "inherit" });
    const dir = join(mkdtempSync(join(tmpdir(), "tcod-sinks-")), "run");
    mkdirSync(dir);
    writeFileSync(join(dir, "metrics.jsonl"), json);
    const r = spawnSync(process.execPath, [CLI, "metrics", dir], { cwd: ROOT, encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const line = (tag: string) => r.stdout.split("\n").find((l) => l.trim().startsWith(`${tag} `));
    expect(line("train/loss")).toMatch(/^\s+train\/loss\s+0\.5000\s+null\s+0\.5000\s+0\.5000\s+1\s+\(null in 2 of 3 rows\)$/);
    expect(line("train/kl/mean")).not.toContain("null");
    expect(r.stdout).toContain("  null in every row that has it: train/adaptive_cap (3 rows), train/blend_weight (3 rows)\n");
    expect(r.stdout).toContain("(null: a value not measured at that step, or NaN/±Infinity when it was written;");
    const j = spawnSync(process.execPath, [CLI, "metrics", dir, "--json"], { cwd: ROOT, encoding: "utf8" });
    const last = JSON.parse(j.stdout.trim().split("\n").pop()!) as { runs: { summary: Record<string, { nulls: number }> }[] };
    expect(last.runs[0]!.summary["train/loss"]!.nulls).toBe(2);
  }, 240000);
});

describe("sinks in a run (CLI)", () => {
  const missing = pythonMissing();
  beforeAll(() => {
    if (!existsSync(join(ROOT, "dist/tcod.js"))) spawnSync(process.execPath, [join(ROOT, "scripts/build.mjs")], { cwd: ROOT, stdio: "inherit" });
  }, 240000);

  it.skipIf(!!missing)("writes TensorBoard event files that TensorBoard reads back with the metrics' values; W&B offline logs the same rows", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "tcod-sinks-")), "run");
    const r = spawnSync(process.execPath, [CLI, "run", PLAN, "--out", dir, "-q", "--wandb", "tcod-test"], {
      cwd: ROOT, encoding: "utf8", env: { ...process.env, WANDB_MODE: "offline", TCOD_PYTHON: PY, WANDB_SILENT: "true" },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(readdirSync(dir).some((f) => f.startsWith("events.out.tfevents."))).toBe(true);
    const rows = readMetrics(join(dir, "metrics.jsonl"));
    const train = rows.filter((x): x is TrainRowMetrics => x.kind === "train");
    const tb = JSON.parse(execFileSync(PY, [join(ROOT, "test/metrics/read_tensorboard.py"), dir, "train/kl/mean", "eval/valid/success_rate"], { encoding: "utf8" })) as Record<string, [number, number][]>;
    expect(tb["train/kl/mean"]!.map(([s]) => s)).toEqual(train.map((t) => t.step));
    tb["train/kl/mean"]!.forEach(([, v], i) => expect(v).toBeCloseTo(train[i]!.kl.mean, 5)); // float32 in the event
    expect(tb["eval/valid/success_rate"]!.length).toBe(rows.filter((x) => x.kind === "eval").length);

    const wb = JSON.parse(execFileSync(PY, [join(ROOT, "test/metrics/read_wandb.py"), dir], { encoding: "utf8" })) as Record<string, number>[];
    const wbTrain = wb.filter((h) => "train/kl/mean" in h);
    expect(wbTrain.map((h) => h._step)).toEqual(train.map((t) => t.step));
    wbTrain.forEach((h, i) => expect(h["train/kl/mean"]).toBe(train[i]!.kl.mean));
    expect(readFileSync(join(dir, "wandb-id"), "utf8").trim()).toMatch(/^[0-9a-f]{12}$/);
  }, 240000);

  it("--wandb without the wandb package is a user error with a hint, before the run starts", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "tcod-sinks-")), "run");
    const r = spawnSync(process.execPath, [CLI, "run", PLAN, "--out", dir, "-q", "--wandb", "p"], {
      cwd: ROOT, encoding: "utf8", env: { ...process.env, TCOD_PYTHON: "/nonexistent/python" },
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain("W&B logging did not start");
    expect(r.stderr).toContain("hint:");
    expect(r.stderr).not.toMatch(/\n\s+at /);
    expect(existsSync(join(dir, "metrics.jsonl"))).toBe(false);
  }, 240000);

  it("tcod metrics --csv prints every row; a folder without metrics is exit 1", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "tcod-sinks-")), "run");
    expect(spawnSync(process.execPath, [CLI, "run", PLAN, "--out", dir, "-q", "--no-tensorboard"], { cwd: ROOT }).status).toBe(0);
    expect(readdirSync(dir).some((f) => f.includes("tfevents"))).toBe(false);
    const csv = spawnSync(process.execPath, [CLI, "metrics", dir, "--csv"], { cwd: ROOT, encoding: "utf8" });
    expect(csv.status).toBe(0);
    expect(csv.stdout.trim().split("\n")).toHaveLength(1 + readMetrics(join(dir, "metrics.jsonl")).length);
    const bad = spawnSync(process.execPath, [CLI, "metrics", tmpdir()], { cwd: ROOT, encoding: "utf8" });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain("no metrics.jsonl");
  }, 240000);
});
