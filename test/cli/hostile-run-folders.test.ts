/**
 * Hostile run folders and sweep folders for the commands that read them (`tcod metrics`, `tcod
 * compare`, `tcod run --resume`, `tcod run --sweep`): every damaged file is a coded error naming it
 * (or, for a record tcod can do without, a warning), never a stack trace, never read silently.
 */
import { spawnSync } from "node:child_process";
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { expectUserError as userError } from "../helpers/cli.js";
import { readMetrics, rowProblem } from "../../runtime/metrics.js";
import { RunFolderError } from "../../runtime/checkpoint.js";

const ROOT = join(import.meta.dirname, "../..");
const tcod = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
const tmp = () => mkdtempSync(join(tmpdir(), "tcod-hostile-"));

const TRAIN = {
  kind: "train", step: 1, policyStep: 0, policyVersion: 1, episodes: 4, successRate: 0.25, meanReward: 0.25,
  horizon: 2, prefix: 0, expertLength: 0, studentTurns: 2, turns: 2, invalidActions: 0, admissibleRate: 0.5,
  noExperience: 0, droppedFailed: 0, droppedStale: 0, kl: { mean: 0.1, perTurn: [0.1, null] }, tokens: { prompt: 10, response: 3 },
  coefs: { opd: 1 }, blendWeight: null, adaptiveCap: null, lr: 0.01, loss: 0.5, gradNorm: 1.5, updates: 1, time: { rollout: 0.5 },
  feedback: { step: 0, values: { "ema#1": 0, "stage#1": 0 }, stages: { "stage#1": { stage: 0, streak: 0, advancedAt: null, signal: null, rule: "ema(feedback.kl, 0.5, 0) < 0.6" } } },
};
const EVAL = { kind: "eval", name: "valid", step: 0, successRate: 0.25, meanReward: 0.25, meanTurns: 3, episodes: 4, time: { eval: 0 } };

/** A run folder as compare and metrics read it: the plan and these metrics rows (or this text). */
function runFolder(rows: object[] | string, parent = tmp(), name = "run"): string {
  const dir = join(parent, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "plan.json"), readFileSync(join(ROOT, "test/fixtures/plans/texthouse-f2b-small.json")));
  writeFileSync(join(dir, "metrics.jsonl"), typeof rows === "string" ? rows : rows.map((r) => JSON.stringify(r) + "\n").join(""));
  return dir;
}

describe("a metrics row is checked for every field a reader takes", () => {
  const row = (edit: (r: Record<string, unknown>) => void): string => {
    const r = structuredClone(TRAIN) as Record<string, unknown>;
    edit(r);
    return JSON.stringify(r);
  };
  it.each([
    ["a whole row", row(() => {}), undefined],
    ["step 1e999 (JSON.parse: Infinity)", JSON.stringify(TRAIN).replace('"step":1,', '"step":1e999,'), "is a train row whose `step` is a number too large for a double, not an integer ≥ 1"],
    ["step -5", row((r) => { r.step = -5; }), "is a train row whose `step` is -5, not an integer ≥ 1"],
    ["step 1.5", row((r) => { r.step = 1.5; }), "is a train row whose `step` is 1.5, not an integer ≥ 1"],
    ["an eval row of step -1", JSON.stringify({ ...EVAL, step: -1 }), "is an eval row whose `step` is -1, not an integer ≥ 0"],
    ["successRate 1e999", JSON.stringify(TRAIN).replace('"successRate":0.25', '"successRate":1e999'), "is a train row whose `successRate` is a number too large for a double, not a finite number"],
    ["a wall time that is a string", row((r) => { r.time = { rollout: "abc" }; }), 'is a train row whose `time.rollout` is "abc", not a number of seconds'],
    ["a coefficient that is a string", row((r) => { r.coefs = { opd: "x" }; }), 'is a train row whose `coefs.opd` is "x", not a number'],
    ["a per-turn KL that is an object", row((r) => { r.kl = { mean: 0.1, perTurn: [{ a: 1 }] }; }), 'is a train row whose `kl.perTurn[0]` is {"a":1}, not a number or null'],
    ["a number field that is a string", row((r) => { r.meanReward = "x"; }), 'is a train row whose `meanReward` is "x", not a number or null'],
    ["feedback a string", row((r) => { r.feedback = "x"; }), "is a train row without `feedback.values` (an object)"],
    ["a feedback value a string", row((r) => { r.feedback = { values: { "ema#1": "x" } }; }), 'is a train row whose `feedback.values.ema#1` is "x", not a number or null'],
    ["a feedback stage without its rule", row((r) => { r.feedback = { values: {}, stages: { "stage#1": { stage: 0 } } }; }), "is a train row whose `feedback.stages.stage#1` is {\"stage\":0}, not a stage (`stage`, `streak`, `advancedAt`, `signal`, `rule`)"],
  ])("%s", (_, line, problem) => {
    expect(rowProblem(line)).toBe(problem);
  });

  it("`tcod metrics` on a row whose `feedback` is not an object: TC7014 at its line, for every output (was: a TypeError, an internal error)", () => {
    const run = runFolder([EVAL, { ...TRAIN, feedback: "x" }]);
    for (const flags of [[], ["--csv"], ["--tensorboard"]]) {
      const r = tcod("metrics", run, ...flags);
      userError(r, "TC7014");
      expect(r.stderr).toMatch(/metrics\.jsonl:2 error TC7014: .*line 2 is a train row without `feedback\.values` \(an object\)/);
    }
    expect(JSON.parse(tcod("metrics", run, "--json").stdout.trim().split("\n").at(-1)!)).toMatchObject({ ok: false, error: { code: "TC7014" } });
  });

  it("`tcod compare` on a wall time that is not a number: TC7014 (was: NaN on the page, exit 0)", () => {
    const run = runFolder([EVAL, { ...TRAIN, time: { rollout: "abc" } }]);
    const r = tcod("compare", run, "--out", join(run, "c.html"));
    userError(r, "TC7014");
    expect(existsSync(join(run, "c.html"))).toBe(false);
  });

  it("train steps out of order (two runs' rows in one file): TC7014 at the line", () => {
    const run = runFolder([EVAL, TRAIN, { ...TRAIN, step: 2 }, TRAIN]);
    const r = tcod("metrics", run);
    userError(r, "TC7014");
    expect(r.stderr).toMatch(/metrics\.jsonl:4 error TC7014: .*line 4 is a train row of step 1 after the train row of step 2/);
  });
});

describe("several run folders, some bad", () => {
  it("`tcod metrics A /missing B`: every bad folder is reported, each a coded error, and nothing printed for the good ones, as `tcod compare` does (was: it stopped at the first)", () => {
    const parent = tmp();
    const good = runFolder([EVAL, TRAIN], parent, "good");
    const missing = join(parent, "missing");
    const damaged = runFolder([EVAL, { ...TRAIN, step: 0 }], parent, "damaged");
    const notRun = join(parent, "empty");
    mkdirSync(notRun);
    for (const flags of [[], ["--csv"], ["--tensorboard"]]) {
      const r = tcod("metrics", good, missing, damaged, notRun, ...flags);
      userError(r, "TC7009");
      const lines = r.stderr.split("\n").filter((l) => / error TC\d+: /.test(l));
      expect(lines).toEqual([
        `${missing} error TC7009: ${missing}: no such folder`,
        expect.stringMatching(new RegExp(`^${join(damaged, "metrics.jsonl").replace(/[.]/g, "\\.")}:2 error TC7014: .*line 2 is a train row whose \`step\` is 0`)),
        `${notRun} error TC7009: ${notRun}: not a run folder (no metrics.jsonl)`,
      ]);
      expect(r.stdout).toBe("");
    }
    expect(readdirSync(good).filter((f) => f.startsWith("events.out.tfevents."))).toEqual([]);
    const json = JSON.parse(tcod("metrics", good, missing, damaged, "--json").stdout.trim().split("\n").at(-1)!) as { ok: boolean; error: { code: string; problems: { code: string; where: { file: string } }[] } };
    expect(json.ok).toBe(false);
    expect(json.error.code).toBe("TC7009");
    expect(json.error.problems.map((p) => [p.code, p.where.file])).toEqual([["TC7009", missing], ["TC7014", join(damaged, "metrics.jsonl")]]);
    // Good folders alone: their tables, exit 0.
    const ok = tcod("metrics", good, good);
    expect(ok.status, ok.stderr).toBe(0);
  });
});

describe("the last line of metrics.jsonl", () => {
  it("a whole JSON value that is no row, without its newline, is refused (was: taken for a row being written: 0 rows, exit 0)", () => {
    for (const text of ["[]", "42", "null", `${"[".repeat(100_000)}${"]".repeat(100_000)}`, `${JSON.stringify(EVAL)}\n{"kind":"train","step":1}`]) {
      const run = runFolder(text);
      const m = tcod("metrics", run);
      userError(m, "TC7014");
      const c = tcod("compare", run, "--out", join(run, "c.html"));
      userError(c, "TC7014");
      expect(c.stderr).not.toContain("is empty");
    }
  });

  it("a row cut short while being written is left out with a note naming its line (was: left out unsaid)", () => {
    const text = `${JSON.stringify(EVAL)}\n${JSON.stringify(TRAIN)}\n${JSON.stringify({ ...TRAIN, step: 2 }).slice(0, 50)}`;
    const run = runFolder(text);
    const notes: number[] = [];
    expect(readMetrics(join(run, "metrics.jsonl"), (line) => notes.push(line))).toHaveLength(2);
    expect(notes).toEqual([3]);
    const m = tcod("metrics", run);
    expect(m.status, m.stderr).toBe(0);
    expect(m.stderr).toContain(`tcod metrics: note: ${join(run, "metrics.jsonl")}:3: the last line is not a whole row yet`);
    expect(m.stdout).toContain("(2 rows)");
    const c = tcod("compare", run, "--out", join(run, "c.html"));
    expect(c.status, c.stderr).toBe(0);
    expect(c.stderr).toContain(`tcod compare: note: ${join(run, "metrics.jsonl")}:3: the last line is not a whole row yet`);
  });
});

describe("links that lead nowhere in a run folder", () => {
  it("metrics.jsonl or plan.json a loop of links: metrics and compare say so (was: \"no metrics.jsonl\", \"has no plan.json\")", () => {
    const a = runFolder([EVAL, TRAIN]);
    rmSync(join(a, "metrics.jsonl"));
    symlinkSync("metrics.jsonl", join(a, "metrics.jsonl"));
    for (const r of [tcod("metrics", a), tcod("compare", a, "--out", join(a, "c.html"))]) {
      userError(r, "TC7014");
      expect(r.stderr).toMatch(/metrics\.jsonl error TC7014: cannot read .*metrics\.jsonl \(the path has a loop of symbolic links\)/);
    }
    const b = runFolder([EVAL, TRAIN]);
    rmSync(join(b, "plan.json"));
    symlinkSync("plan.json", join(b, "plan.json"));
    const r = tcod("compare", b, "--out", join(b, "c.html"));
    userError(r, "TC7014");
    expect(r.stderr).toMatch(/plan\.json error TC7014: the run's plan cannot be read \(the path has a loop of symbolic links\)/);
  });
});

describe("tcod metrics --tensorboard", () => {
  it("a folder named like an event file is left alone (was: EISDIR from rmSync, an internal error)", () => {
    const run = runFolder([EVAL, TRAIN]);
    mkdirSync(join(run, "events.out.tfevents.1.host.1.tcod"));
    writeFileSync(join(run, "notes.tfevents.txt"), "mine");
    const r = tcod("metrics", run, "--tensorboard");
    expect(r.status, r.stderr).toBe(0);
    expect(existsSync(join(run, "events.out.tfevents.1.host.1.tcod"))).toBe(true);
    expect(readFileSync(join(run, "notes.tfevents.txt"), "utf8")).toBe("mine");
    expect(readdirSync(run).filter((f) => f.startsWith("events.out.tfevents.")).length).toBe(2);
  });

  // Root writes anywhere: only a user without write permission meets EACCES.
  it.skipIf(process.getuid?.() === 0 || process.platform === "win32")("a run folder this user cannot write: TC7015 naming the file (was: EACCES, an internal error)", () => {
    const run = runFolder([EVAL, TRAIN]);
    writeFileSync(join(run, "events.out.tfevents.1.host.1.tcod"), "");
    chmodSync(run, 0o555);
    try {
      const r = tcod("metrics", run, "--tensorboard");
      userError(r, "TC7015");
      expect(r.stderr).toContain("hint: Make the run folder writable for this user, then run `tcod metrics --tensorboard` again.");
    } finally {
      chmodSync(run, 0o755);
    }
  });
});

describe("tcod run --resume: what it records", () => {
  let stopped: string;
  beforeAll(async () => {
    const { runPlan } = await import("../../runtime/engine.js");
    const { parsePlan } = await import("../../plan/schema.js");
    const { composeRuntime } = await import("../../bin/compose.js");
    composeRuntime();
    stopped = join(tmp(), "run");
    const plan = parsePlan(JSON.parse(readFileSync(join(ROOT, "test/fixtures/plans/texthouse-f2b-small.json"), "utf8")));
    expect((await runPlan(plan, { runDir: stopped, stopAfter: 2 })).status).toBe("stopped");
  });

  it("a run.json it cannot add to: the run goes on, with a warning (was: the resume left unrecorded unsaid)", () => {
    for (const text of ['{"tcod": "0.1', "null", "[]"]) {
      const dir = join(tmp(), "run");
      cpSync(stopped, dir, { recursive: true });
      writeFileSync(join(dir, "run.json"), text);
      const r = tcod("run", "--resume", dir, "-q", "--no-tensorboard");
      expect(r.status, r.stderr).toBe(0);
      expect(r.stderr).toContain(`tcod run: warning: ${join(dir, "run.json")} `);
      expect(r.stderr).toContain("this resume is not recorded in it");
      expect(readFileSync(join(dir, "run.json"), "utf8")).toBe(text);
    }
  });

  it("a run.json that is not JSON: the warning says where it breaks (was: no line or column)", () => {
    const dir = join(tmp(), "run");
    cpSync(stopped, dir, { recursive: true });
    writeFileSync(join(dir, "run.json"), '{\n  "tcod": "0.1');
    const r = tcod("run", "--resume", dir, "-q", "--no-tensorboard");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`tcod run: warning: ${join(dir, "run.json")} is not JSON (Unterminated string at line 2, column 15); this resume is not recorded in it`);
  });

  it("a truncated checkpoint/state.json: TC7014 at the line and column where it ends (was: the file alone)", () => {
    const dir = join(tmp(), "run");
    cpSync(stopped, dir, { recursive: true });
    const state = join(dir, "checkpoint", "state.json");
    const text = readFileSync(state, "utf8");
    writeFileSync(state, text.slice(0, 40));
    const r = tcod("run", "--resume", dir, "-q", "--no-tensorboard");
    userError(r, "TC7014");
    expect(r.stderr.startsWith(`${state}:1:41 error TC7014: cannot resume: ${state} is not JSON (truncated or overwritten; 40 bytes; `), r.stderr).toBe(true);
  });

  it("checkpoint/ removed: the run starts again at step 0 with a note naming where the rows it had are kept (was: they were overwritten unsaid)", () => {
    const dir = join(tmp(), "run");
    cpSync(stopped, dir, { recursive: true });
    rmSync(join(dir, "checkpoint"), { recursive: true });
    const rows = readFileSync(join(dir, "metrics.jsonl"), "utf8");
    const r = tcod("run", "--resume", dir, "-q", "--no-tensorboard", "--json");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toContain(`tcod run: note: ${dir} has no checkpoint, so the run starts again at step 0; the rows written before are kept, not overwritten: ${join(dir, "metrics.jsonl")} → metrics.jsonl.before-restart-1, ${join(dir, "episodes.jsonl")} → episodes.jsonl.before-restart-1`);
    expect(r.stderr).toContain(`; read them with \`tcod metrics ${join(dir, "metrics.jsonl.before-restart-1")}\``);
    expect(readFileSync(join(dir, "metrics.jsonl.before-restart-1"), "utf8")).toBe(rows);
    const result = JSON.parse(r.stdout.trim().split("\n").at(-1)!) as { status: string; setAside: { from: string; to: string }[] };
    expect(result.status).toBe("completed");
    expect(result.setAside.map((m) => m.to)).toEqual([join(dir, "metrics.jsonl.before-restart-1"), join(dir, "episodes.jsonl.before-restart-1")]);
  });

  it("the rows a restart set aside are read by `tcod metrics` and `tcod compare` named by their file (was: no command read them)", () => {
    const dir = join(tmp(), "run");
    cpSync(stopped, dir, { recursive: true });
    rmSync(join(dir, "checkpoint"), { recursive: true });
    const before = readFileSync(join(dir, "metrics.jsonl"), "utf8").trim().split("\n").length;
    expect(tcod("run", "--resume", dir, "-q", "--no-tensorboard").status).toBe(0);
    const aside = join(dir, "metrics.jsonl.before-restart-1");
    // The folder: its own rows, and a note naming the set-aside file and the command that reads it.
    const own = tcod("metrics", dir);
    expect(own.status, own.stderr).toBe(0);
    expect(own.stderr).toContain(`tcod metrics: note: ${dir} also holds the rows of an earlier start a restart at step 0 set aside (metrics.jsonl.before-restart-1); read them with \`tcod metrics ${aside}\``);
    // The set-aside file: its rows, under its own name.
    const old = tcod("metrics", aside, "--json");
    expect(old.status, old.stderr).toBe(0);
    expect((JSON.parse(old.stdout.trim().split("\n").at(-1)!) as { runs: { dir: string; rows: number }[] }).runs).toEqual([expect.objectContaining({ dir: aside, rows: before })]);
    const csv = tcod("metrics", aside, dir, "--csv");
    expect(csv.status, csv.stderr).toBe(0);
    expect(csv.stdout.split("\n").filter((l) => l.startsWith(`${aside},`))).toHaveLength(before);
    // --tensorboard would rewrite the folder's own event files from the old rows: refused.
    const tb = tcod("metrics", aside, "--tensorboard");
    userError(tb, "TC7009");
    expect(tb.stderr).toContain(`${aside} error TC7009: --tensorboard: ${aside} holds rows a restart set aside`);
    // compare: the earlier start and the run itself, two runs of the folder's plan.
    const page = join(tmp(), "c.html");
    const c = tcod("compare", aside, dir, "--out", page, "--json", `${page}.json`);
    expect(c.status, c.stderr).toBe(0);
    expect(c.stdout).toMatch(/runs 2 \(seed/);
    expect((JSON.parse(readFileSync(`${page}.json`, "utf8")) as { methods: { runs: string[] }[] }).methods.flatMap((m) => m.runs)).toEqual([aside, dir]);
    // Only that name is taken as a file: another file is no run folder.
    writeFileSync(join(dir, "metrics.jsonl.bak"), readFileSync(aside));
    userError(tcod("metrics", join(dir, "metrics.jsonl.bak")), "TC7009");
    userError(tcod("compare", join(dir, "metrics.jsonl.bak"), "--out", page), "TC7009");
  });

  it("a damaged plan.json is refused at the line and column where its JSON breaks", () => {
    const dir = join(tmp(), "run");
    cpSync(stopped, dir, { recursive: true });
    writeFileSync(join(dir, "plan.json"), '{\n  "schema": "tcod.plan/2",\n  "name": "cut sh');
    const r = tcod("run", "--resume", dir, "-q");
    userError(r, "TC7014");
    expect(r.stderr.startsWith(`${join(dir, "plan.json")}:3:`), r.stderr).toBe(true);
    expect(r.stderr).toMatch(/plan\.json:3:\d+ error TC7014: cannot resume: .*plan\.json is damaged: not valid JSON \(Unterminated string/);
  });
});

describe("tcod run --sweep on a sweep folder it wrote before", () => {
  const SOURCE = `import { texthouse } from "std/envs"
model m { path: "x" }
let k = 2 steps
curriculum small {
  teacher: m
  student: m
  env:     texthouse()
  steps:   k
  batch:   2 tasks × 1 rollout
}
sweep grid product { k: [1 step, 2 steps] }
`;
  let project: string;
  let done: string;
  beforeAll(() => {
    project = tmp();
    writeFileSync(join(project, "package.json"), "{}");
    writeFileSync(join(project, "sweep.tcod"), SOURCE);
    done = join(project, "out");
    const r = tcod("run", join(project, "sweep.tcod"), "--sweep", "--out", done);
    expect(r.status, r.stderr + r.stdout).toBe(0);
  }, 300_000);
  const copy = (damage: (dir: string) => void): string => {
    const dir = join(tmp(), "out");
    cpSync(done, dir, { recursive: true });
    damage(dir);
    return dir;
  };

  it.each(["{}", "[]", "42", '{"points": 5}', '{"points": [null, {"name": 3}]}', "garbage", '{\n  "points": [\n'])("sweep.json %s: each point's folder says where it stands (was: a TypeError, an internal error)", (text) => {
    const dir = copy((d) => writeFileSync(join(d, "sweep.json"), text));
    const r = tcod("run", join(project, "sweep.tcod"), "--sweep", "--out", dir);
    expect(r.status, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toContain("2/2 points completed");
    // Not JSON: said, at its line and column (was: dropped unsaid).
    if (text === "garbage") expect(r.stderr).toContain(`tcod run: warning: ${join(dir, "sweep.json")}:1:1: the sweep's record is not JSON (Unexpected token 'g')`);
    if (text.startsWith("{\n")) expect(r.stderr).toContain(`tcod run: warning: ${join(dir, "sweep.json")}:3:1: the sweep's record is not JSON (Unexpected end of JSON input)`);
    expect((JSON.parse(readFileSync(join(dir, "sweep.json"), "utf8")) as { points: unknown[] }).points).toHaveLength(2);
  }, 120_000);

  it("a point whose checkpoint/ was removed starts again at step 0; the sweep says so and its rows are kept (was: overwritten unsaid)", () => {
    const dir = copy((d) => {
      rmSync(join(d, "small@k=2steps", "checkpoint"), { recursive: true });
      writeFileSync(join(d, "sweep.json"), "{}"); // no record of it completing: its folder says where it stands
    });
    const rows = readFileSync(join(dir, "small@k=2steps", "metrics.jsonl"), "utf8");
    const r = tcod("run", join(project, "sweep.tcod"), "--sweep", "--out", dir);
    expect(r.status, r.stderr + r.stdout).toBe(0);
    expect(r.stdout).toMatch(/restart \[\d\/2\] small@k=2steps {2}\(k=2 steps\): no checkpoint, so it starts again at step 0; the rows it had are kept as metrics\.jsonl\.before-restart-N and episodes\.jsonl\.before-restart-N/);
    expect(r.stdout).toContain(`(\`tcod metrics ${join(dir, "small@k=2steps", "metrics.jsonl.before-restart-N")}\` reads them)`);
    expect(r.stdout).toMatch(/resume \[\d\/2\] small@k=1step/);
    expect(r.stdout).toContain("2/2 points completed");
    expect(readFileSync(join(dir, "small@k=2steps", "metrics.jsonl.before-restart-1"), "utf8")).toBe(rows);
    // The point ran again to the same rows (but for wall times).
    const strip = (t: string) => t.trim().split("\n").map((l) => { const { time: _t, ...rest } = JSON.parse(l) as { time: unknown }; return rest; });
    expect(strip(readFileSync(join(dir, "small@k=2steps", "metrics.jsonl"), "utf8"))).toEqual(strip(rows));
  }, 120_000);

  it.each([
    ["sweep.json a folder", (d: string) => { rmSync(join(d, "sweep.json")); mkdirSync(join(d, "sweep.json")); }, "sweep.json", /sweep\.json cannot be read \(it is a folder, not a file\)/],
    ["sweep.json a loop of links", (d: string) => { rmSync(join(d, "sweep.json")); symlinkSync("sweep.json", join(d, "sweep.json")); }, "sweep.json", /sweep\.json cannot be read \(the path has a loop of symbolic links\)/],
    ["a point's plan.json a folder (was: EISDIR, an internal error)", (d: string) => { rmSync(join(d, "small@k=1step", "plan.json")); mkdirSync(join(d, "small@k=1step", "plan.json")); }, "small@k=1step/plan.json", /plan\.json cannot be read \(it is a folder, not a file\)/],
  ])("%s: TC7009 naming it", (_, damage, file, message) => {
    const dir = copy(damage);
    const r = tcod("run", join(project, "sweep.tcod"), "--sweep", "--out", dir);
    userError(r, "TC7009");
    expect(r.stderr.startsWith(`${join(dir, file)} error TC7009: `), r.stderr).toBe(true);
    expect(r.stderr).toMatch(message);
  });
});

it("RunFolderError is what readMetrics throws for a damaged row (the commands' TC7014)", () => {
  const run = runFolder([EVAL, { ...TRAIN, step: 0 }]);
  expect(() => readMetrics(join(run, "metrics.jsonl"))).toThrow(RunFolderError);
});
