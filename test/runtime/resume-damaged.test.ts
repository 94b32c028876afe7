/**
 * Damaged run folders: every way a run folder's state can be broken is a RunFolderError (TC7014)
 * naming the file, never a crash; a run killed before its first checkpoint resumes from step 0; a
 * checkpoint beyond the plan is refused; leftovers of interrupted checkpoint writes are cleaned up.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { execFileSync, spawnSync } from "node:child_process";
import { beforeAll, describe, expect, it } from "vitest";
import { checkResume, runPlan } from "../../runtime/engine.js";
import { readMetrics } from "../../runtime/metrics.js";
import { RunFolderError } from "../../runtime/checkpoint.js";
import { parsePlan } from "../../plan/schema.js";
import { composeRuntime } from "../../bin/compose.js";

composeRuntime(); // the backends and envs bin/ registers for `tcod run`

const ROOT = join(import.meta.dirname, "../..");
const PLAN_FILE = join(ROOT, "test/fixtures/plans/texthouse-f2b-small.json");
const plan = parsePlan(JSON.parse(readFileSync(PLAN_FILE, "utf8")));
const tmp = () => mkdtempSync(join(tmpdir(), "tcod-damaged-"));
const metrics = (dir: string) => readMetrics(join(dir, "metrics.jsonl")).map(({ time: _t, ...rest }) => rest);
const studentFiles = (dir: string) => {
  const d = join(dir, "checkpoint", "student");
  return Object.fromEntries(readdirSync(d).sort().map((f) => [f, readFileSync(join(d, f)).toString("base64")]));
};

let full: string;
let stopped: string;

beforeAll(async () => {
  full = tmp();
  await runPlan(plan, { runDir: full });
  stopped = tmp();
  expect((await runPlan(plan, { runDir: stopped, stopAfter: 2 })).status).toBe("stopped");
});

/** A copy of the stopped run, damaged by `damage`. */
const damaged = (damage: (dir: string) => void): string => {
  const dir = join(tmp(), "run");
  cpSync(stopped, dir, { recursive: true });
  damage(dir);
  return dir;
};
const state = (dir: string) => join(dir, "checkpoint", "state.json");
const editState = (dir: string, edit: (s: Record<string, unknown>) => void) => {
  const s = JSON.parse(readFileSync(state(dir), "utf8")) as Record<string, unknown>;
  edit(s);
  writeFileSync(state(dir), JSON.stringify(s));
};

const CASES: [string, (dir: string) => void, RegExp, string][] = [
  ["state.json missing", (d) => rmSync(state(d)), /state\.json is missing/, "checkpoint/state.json"],
  ["state.json empty", (d) => writeFileSync(state(d), ""), /state\.json is empty/, "checkpoint/state.json"],
  ["state.json truncated", (d) => writeFileSync(state(d), readFileSync(state(d), "utf8").slice(0, 80)), /is not JSON \(truncated/, "checkpoint/state.json"],
  ["state.json garbage", (d) => writeFileSync(state(d), Buffer.from([0, 255, 13, 7, 42, 0x80, 0x81])), /is not JSON/, "checkpoint/state.json"],
  ["state.json null", (d) => writeFileSync(state(d), "null"), /is not a checkpoint: it holds null, not an object/, "checkpoint/state.json"],
  ["state.json a list", (d) => writeFileSync(state(d), "[]"), /is not a checkpoint: it holds a list, not an object/, "checkpoint/state.json"],
  ["wrong format", (d) => editState(d, (s) => { s.format = "tcod.checkpoint/0"; }), /has format "tcod\.checkpoint\/0", expected "tcod\.checkpoint\/1"/, "checkpoint/state.json"],
  ["a field of the wrong type", (d) => editState(d, (s) => { s.iteration = "two"; }), /at \$\.iteration: .*expected number/, "checkpoint/state.json"],
  ["buffer rows of the wrong shape", (d) => editState(d, (s) => { s.buffer = { rows: [{ step: 1 }], droppedStale: 0, droppedOverflow: 0 }; }), /at \$\.buffer\.rows\[0\]\./, "checkpoint/state.json"],
  ["iteration beyond the plan", (d) => editState(d, (s) => { s.iteration = 1_000_000_000; s.learnerStep = 999_999_999; }), /says 1000000000 iterations .* the plan has 6 steps/, "checkpoint/state.json"],
  ["training ahead of exploring", (d) => editState(d, (s) => { s.learnerStep = 5; s.iteration = 2; }), /5 training steps after 2 iterations/, "checkpoint/state.json"],
  // Schema-valid but hand-edited: the staleness pipeline's state must match the iteration (plan staleness 1,
  // stopped after iteration 2: step 2 explored, not yet trained, its episodes awaiting the scorer).
  ["pending steps emptied", (d) => editState(d, (s) => { s.pending = []; }), /inconsistent: its pending steps are \[\], but after iteration 2 with staleness 1 .* \[2\]/, "checkpoint/state.json"],
  ["a pending step already trained", (d) => editState(d, (s) => { s.pending = [{ ...(s.pending as object[])[0], step: 1 }]; }), /inconsistent: its pending steps are \[1\]/, "checkpoint/state.json"],
  ["a pending step twice", (d) => editState(d, (s) => { s.pending = [...(s.pending as object[]), ...(s.pending as object[])]; }), /inconsistent: its pending steps are \[2, 2\]/, "checkpoint/state.json"],
  ["unscored episodes of a step not pending", (d) => editState(d, (s) => { (s.unscored as { step: number }).step = 5; }), /unscored episodes of step 5/, "checkpoint/state.json"],
  ["another plan's checkpoint", (d) => editState(d, (s) => { s.planName = "other"; }), /belongs to plan "other"/, "checkpoint/state.json"],
  ["state.json a FIFO (a read would block)", (d) => { rmSync(state(d)); execFileSync("mkfifo", [state(d)]); }, /state\.json cannot be read \(it is not a regular file/, "checkpoint/state.json"],
  ["state.json a folder", (d) => { rmSync(state(d)); mkdirSync(state(d)); }, /state\.json cannot be read \(it is a folder/, "checkpoint/state.json"],
  ["metrics.jsonl a FIFO", (d) => { rmSync(join(d, "metrics.jsonl")); execFileSync("mkfifo", [join(d, "metrics.jsonl")]); }, /metrics\.jsonl is not a regular file/, "metrics.jsonl"],
  ["checkpoint is a file", (d) => { rmSync(join(d, "checkpoint"), { recursive: true }); writeFileSync(join(d, "checkpoint"), "x"); }, /is a file, not a checkpoint folder/, "checkpoint"],
  ["episodes.jsonl a folder (was: EISDIR, an internal error)", (d) => { rmSync(join(d, "episodes.jsonl")); mkdirSync(join(d, "episodes.jsonl")); }, /episodes\.jsonl cannot be read \(it is a folder, not a file\)/, "episodes.jsonl"],
  ["metrics.jsonl missing", (d) => rmSync(join(d, "metrics.jsonl")), /metrics\.jsonl is missing/, "metrics.jsonl"],
  // Links that lead nowhere: there, but unreadable (existsSync says false for them, which read as "missing").
  ["metrics.jsonl a loop of links", (d) => { rmSync(join(d, "metrics.jsonl")); symlinkSync("metrics.jsonl", join(d, "metrics.jsonl")); }, /metrics\.jsonl cannot be read \(the path has a loop of symbolic links\)/, "metrics.jsonl"],
  ["state.json a loop of links", (d) => { rmSync(state(d)); symlinkSync("state.json", state(d)); }, /state\.json cannot be read \(the path has a loop of symbolic links\)/, "checkpoint/state.json"],
  // Was: taken for "no checkpoint yet", so the run started over, rewrote metrics.jsonl, then failed with ENOTDIR (an internal error).
  ["checkpoint a loop of links", (d) => { rmSync(join(d, "checkpoint"), { recursive: true }); symlinkSync("checkpoint", join(d, "checkpoint")); }, /checkpoint cannot be read \(the path has a loop of symbolic links\)/, "checkpoint"],
  ["checkpoint a link to a folder gone", (d) => { rmSync(join(d, "checkpoint"), { recursive: true }); symlinkSync(join(d, "gone"), join(d, "checkpoint")); }, /checkpoint cannot be read \(it is a symbolic link to a missing target\)/, "checkpoint"],
  // Was: ELOOP from writeFileSync, an internal error.
  ["episodes.jsonl a loop of links", (d) => { rmSync(join(d, "episodes.jsonl")); symlinkSync("episodes.jsonl", join(d, "episodes.jsonl")); }, /episodes\.jsonl cannot be read \(the path has a loop of symbolic links\)/, "episodes.jsonl"],
  ["weights meta null (was: a TypeError's words)", (d) => writeFileSync(join(d, "checkpoint", "student", "embedded-student.json"), "null"), /does not load: .*embedded-student\.json holds null, not an object/, "checkpoint/student"],
  ["metrics.jsonl truncated", (d) => writeFileSync(join(d, "metrics.jsonl"), readFileSync(join(d, "metrics.jsonl"), "utf8").slice(0, 40)), /metrics\.jsonl has 40 bytes, the checkpoint expects at least \d+ \(truncated\)/, "metrics.jsonl"],
  ["metrics.jsonl overwritten", (d) => { const p = join(d, "metrics.jsonl"); const t = readFileSync(p, "utf8"); writeFileSync(p, "#".repeat(10) + t.slice(10)); }, /metrics\.jsonl line 1 is not a metrics row/, "metrics.jsonl"],
  // Whole JSON, but not a row compare and metrics can read: a resume keeps the rows before its checkpoint, so it refuses.
  ["metrics.jsonl row 1 with a renamed key", (d) => { const p = join(d, "metrics.jsonl"); writeFileSync(p, readFileSync(p, "utf8").replace('"successRate"', '"successRatX"')); }, /metrics\.jsonl line 1 is an? (eval|train) row without a numeric `successRate`/, "metrics.jsonl"],
  ["weights corrupt", (d) => { const p = join(d, "checkpoint", "student", "embedded-student.bin"); const b = readFileSync(p); b[b.length >> 1]! ^= 0xff; writeFileSync(p, b); }, /student state in .* does not load: .*sha256/, "checkpoint/student"],
  ["weights missing", (d) => rmSync(join(d, "checkpoint", "student"), { recursive: true }), /student state in .* does not load/, "checkpoint/student"],
  ["weights meta garbage", (d) => writeFileSync(join(d, "checkpoint", "student", "embedded-student.json"), "{"), /does not load: .*not JSON/, "checkpoint/student"],
];

describe("damaged run folders", () => {
  for (const [name, damage, message, file] of CASES) {
    it(`${name}: TC7014 naming ${file}`, async () => {
      const dir = damaged(damage);
      const err = await runPlan(plan, { runDir: dir, resume: true }).then(() => undefined, (e: unknown) => e);
      expect(err).toBeInstanceOf(RunFolderError);
      const e = err as RunFolderError;
      expect(e.code).toBe("TC7014");
      expect(e.message).toMatch(message);
      expect(e.where?.file).toBe(join(dir, file));
      expect(e.hint).toBeTruthy();
    });
  }

  it("a refused resume changes no byte of metrics.jsonl (a checkpoint link that leads nowhere was taken for none: the run started over)", async () => {
    const dir = damaged((d) => { rmSync(join(d, "checkpoint"), { recursive: true }); symlinkSync("checkpoint", join(d, "checkpoint")); });
    const before = readFileSync(join(dir, "metrics.jsonl"));
    await expect(runPlan(plan, { runDir: dir, resume: true })).rejects.toBeInstanceOf(RunFolderError);
    expect(readFileSync(join(dir, "metrics.jsonl"))).toEqual(before);
  });

  it("the CLI reports a damaged folder with its code and exit 1, no stack trace, and records no resume", () => {
    for (const damage of [(d: string) => writeFileSync(state(d), "{\"format\":"), (d: string) => rmSync(join(d, "metrics.jsonl"))]) {
      const dir = damaged(damage);
      const record = JSON.stringify({ plan: plan.name, resumes: [] }, null, 2) + "\n";
      writeFileSync(join(dir, "run.json"), record);
      const r = spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", "--resume", dir, "-q"], { encoding: "utf8" });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/error TC7014: cannot resume: /);
      expect(r.stderr).not.toMatch(/\n\s+at |internal error/);
      // A refused resume is not one: run.json lists no resume, and no (empty) TensorBoard event file is left.
      expect(readFileSync(join(dir, "run.json"), "utf8")).toBe(record);
      expect(readdirSync(dir).filter((f) => f.includes("tfevents"))).toEqual([]);
    }
  });
});

describe("the student's files, checked before a resume takes the folder (checkResume)", () => {
  const refusal = (dir: string): RunFolderError => {
    try { checkResume(plan, dir); } catch (e) { expect(e).toBeInstanceOf(RunFolderError); return e as RunFolderError; }
    throw new Error("expected a refusal");
  };

  it("a checkpoint records each file of checkpoint/student with its size; intact, the check passes", () => {
    const files = (JSON.parse(readFileSync(state(stopped), "utf8")) as { student: { files: Record<string, number> } }).student.files;
    expect(Object.keys(files).sort()).toEqual(Object.keys(studentFiles(stopped)));
    for (const [f, bytes] of Object.entries(files)) expect(statSync(join(stopped, "checkpoint", "student", f)).size).toBe(bytes);
    expect(() => checkResume(plan, damaged(() => {}))).not.toThrow();
  });

  it("a file cut short, grown, missing or a folder is TC7014 naming it; a checkpoint of an older version (no list) is checked for its folder alone", () => {
    const bin = (d: string) => join(d, "checkpoint", "student", "embedded-student.bin");
    let e = refusal(damaged((d) => writeFileSync(bin(d), readFileSync(bin(d)).subarray(0, 8))));
    expect(e.message).toMatch(/embedded-student\.bin has 8 bytes, the checkpoint recorded \d+ \(truncated\)$/);
    expect(e.where?.file).toMatch(/embedded-student\.bin$/);
    expect(refusal(damaged((d) => writeFileSync(bin(d), Buffer.concat([readFileSync(bin(d)), Buffer.from([0])])))).message).toMatch(/\(overwritten\)$/);
    expect(refusal(damaged((d) => { rmSync(bin(d)); mkdirSync(bin(d)); })).message).toMatch(/embedded-student\.bin is a folder, not the file of \d+ bytes the checkpoint recorded$/);
    expect(refusal(damaged((d) => rmSync(bin(d)))).hint).toContain("put its files back as the run wrote them");
    const older = (d: string) => editState(d, (s) => { delete s.student; });
    expect(() => checkResume(plan, damaged((d) => { older(d); writeFileSync(bin(d), "x"); }))).not.toThrow(); // found by loadStudent, as before
    e = refusal(damaged((d) => { older(d); rmSync(join(d, "checkpoint", "student"), { recursive: true }); }));
    expect(e.message).toMatch(/student is missing \(the checkpoint holds no student state\)$/);
    e = refusal(damaged((d) => editState(d, (s) => { s.student = { files: { "../../metrics.jsonl": 1 } }; })));
    expect(e.message).toMatch(/state\.json lists a student file outside .*: "\.\.\/\.\.\/metrics\.jsonl"$/);
  });
});

describe("a damaged metrics row: the hint compare gives is what a resume does", () => {
  const cli = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args, ...(args[0] === "run" ? ["-q", "--no-tensorboard"] : [])], { encoding: "utf8" });
  const compare = (dir: string) => cli("compare", dir, "--out", join(dir, "..", "c.html"));

  it("a row before the checkpoint: compare says resume cannot remake it; resume refuses and changes no byte of it", () => {
    const dir = damaged((d) => { const p = join(d, "metrics.jsonl"); writeFileSync(p, readFileSync(p, "utf8").replace('"successRate"', '"successRatX"')); });
    const before = readFileSync(join(dir, "metrics.jsonl"));
    const c = compare(dir);
    expect(c.status).toBe(1);
    expect(c.stderr).toMatch(/metrics\.jsonl:1 error TC7014: .*line 1 is an? (eval|train) row without a numeric `successRate`/);
    expect(c.stderr).toContain("hint: The row is before the run's last checkpoint, which a resume keeps");
    expect(c.stderr).not.toContain("rewrites it");
    const r = cli("run", "--resume", dir);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/error TC7014: cannot resume: .*line 1 is an? (eval|train) row without a numeric `successRate`/);
    expect(readFileSync(join(dir, "metrics.jsonl"))).toEqual(before);
    // `tcod metrics` reads rows through the same check and gives the same error.
    const m = cli("metrics", dir);
    expect(m.status).toBe(1);
    expect(m.stderr.split("\n")[0]).toBe(c.stderr.split("\n")[0]);
  });

  it("a row after the checkpoint: compare says resume runs its step again, and after the resume compare reads the run", () => {
    const dir = damaged((d) => { const p = join(d, "metrics.jsonl"); writeFileSync(p, readFileSync(p, "utf8") + '{"kind":"train","step":3}\n'); });
    const c = compare(dir);
    expect(c.status).toBe(1);
    expect(c.stderr).toContain("hint: The row is after the run's last checkpoint: resuming the run (`tcod run --resume DIR`) cuts it off");
    writeFileSync(join(dir, "run.json"), JSON.stringify({ plan: plan.name, resumes: [] }));
    expect(cli("run", "--resume", dir).status).toBe(0);
    // A resume the engine took is recorded in run.json (once it has taken the folder).
    expect((JSON.parse(readFileSync(join(dir, "run.json"), "utf8")) as { resumes: { argv: string[] }[] }).resumes.map((r) => r.argv.slice(0, 2))).toEqual([["run", "--resume"]]);
    expect(compare(dir).status).toBe(0);
    expect(metrics(dir)).toEqual(metrics(full));
  });
});

describe("a damaged plan.json of a run folder", () => {
  const resume = (dir: string) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", "--resume", dir, "-q", "--no-tensorboard"], { encoding: "utf8" });
  const planFile = (d: string) => join(d, "plan.json");
  const cases: [string, (d: string) => void, RegExp][] = [
    ["not JSON", (d) => writeFileSync(planFile(d), readFileSync(planFile(d), "utf8").slice(0, 100)), /plan\.json is damaged: not valid JSON/],
    // Was: "is damaged: cannot read it is a folder, not a file", and a loop of links "is missing".
    ["a folder", (d) => { rmSync(planFile(d)); mkdirSync(planFile(d)); }, /plan\.json cannot be read \(it is a folder, not a file\)/],
    ["a loop of links", (d) => { rmSync(planFile(d)); symlinkSync("plan.json", planFile(d)); }, /plan\.json cannot be read \(the path has a loop of symbolic links\)/],
    ["not a plan", (d) => writeFileSync(planFile(d), JSON.stringify({ schema: "tcod.plan/2", name: 5 })), /plan\.json is damaged: .*\(at \$/],
    ["missing beside a checkpoint", (d) => rmSync(planFile(d)), /plan\.json is missing \(the folder holds checkpoint of a run\)/],
    // A valid plan of the same name, edited after the run wrote it (was resumed with the edit: the
    // steps before the checkpoint and after it would have run two plans).
    ["edited (a learning rate changed)", (d) => {
      const p = JSON.parse(readFileSync(planFile(d), "utf8")) as { graph: { nodes: { kind: string; params: { optimizer: { lr: number } } }[] } };
      p.graph.nodes.find((n) => n.kind === "Update")!.params.optimizer.lr *= 2;
      writeFileSync(planFile(d), JSON.stringify(p));
    }, /plan\.json was changed after the run wrote it \(its SHA-256 is not the one .*state\.json records\)/],
  ];
  for (const [name, damage, message] of cases) {
    it(`${name}: TC7014 naming plan.json, exit 1`, () => {
      const dir = damaged(damage);
      const r = resume(dir);
      expect(r.status, r.stderr).toBe(1);
      // The line and column where the JSON breaks, when it does.
      expect(r.stderr).toMatch(new RegExp(`^${join(dir, "plan.json").replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}(:\\d+:\\d+)? error TC7014: cannot resume: `));
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(/hint: /);
      expect(r.stderr).not.toMatch(/\n\s+at |internal error/);
    });
  }

  it("a plan file given with --resume that differs from the run's (not only by name): TC7009 naming what differs; the same plan resumes", () => {
    const dir = damaged(() => {});
    const edited = JSON.parse(readFileSync(PLAN_FILE, "utf8")) as { clock: { steps: number } };
    edited.clock.steps += 1;
    const other = join(tmp(), "edited.plan.json");
    writeFileSync(other, JSON.stringify(edited));
    const cli = (file: string) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", file, "--resume", dir, "-q", "--no-tensorboard"], { encoding: "utf8" });
    const r = cli(other);
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/edited\.plan\.json error TC7009: .*edited\.plan\.json compiles to plan "texthouse-f2b-small" with other settings than the run in .* was started with: they differ in clock\.steps/);
    expect(r.stderr).toMatch(/hint: A resumed run continues the plan of /);
    expect(r.stderr).not.toMatch(/\n\s+at |internal error/);
    expect(cli(PLAN_FILE).status).toBe(0);
  });

  it("a folder that holds no run at all is still not a run folder (TC7009)", () => {
    const r = resume(tmp());
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/error TC7009: --resume .*: not a run folder \(no plan\.json\)\n  hint: Give --resume the --out folder of an earlier `tcod run`/);
  });
});

describe("a folder in the place of a run folder's record or lock (was: EISDIR internal errors, or a resume left unrecorded)", () => {
  const resume = (dir: string) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", "--resume", dir, "-q", "--no-tensorboard"], { encoding: "utf8" });
  const cases: [string, string, RegExp][] = [
    ["config.txt", "TC7014", /cannot resume: .*config\.txt cannot be read \(it is a folder, not a file\)/],
    ["run.json", "TC7014", /cannot resume: .*run\.json cannot be read \(it is a folder, not a file\)/],
    ["run.lock", "TC7015", /cannot take .*run\.lock, the run folder's lock: it is a folder, not a file/],
  ];
  for (const [name, code, message] of cases) {
    it(`${name} a folder: ${code} naming it, exit 1, nothing run`, () => {
      const dir = damaged((d) => { rmSync(join(d, name), { force: true }); mkdirSync(join(d, name)); });
      const before = readFileSync(join(dir, "metrics.jsonl"));
      const r = resume(dir);
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr.startsWith(`${join(dir, name)} error ${code}: `), r.stderr).toBe(true);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(/hint: Move .* out of the way/);
      expect(r.stderr).not.toMatch(/\n\s+at |internal error/);
      expect(readFileSync(join(dir, "metrics.jsonl"))).toEqual(before);
    });
  }
});

describe("episodes.jsonl lines that are not samples (was: kept or dropped by a resume, and skipped by the report, without a word)", () => {
  it("the resume keeps a damaged line with a warning naming the file and line and drops a cut-off last line with a note; the report, which leaves the same lines out, does not warn again (was: twice)", () => {
    const path = (d: string) => join(d, "episodes.jsonl");
    const dir = damaged((d) => {
      const [first, ...rest] = readFileSync(path(d), "utf8").split("\n");
      writeFileSync(path(d), [first, "garbage", '{"step": "two"}', ...rest.filter(Boolean)].join("\n") + '\n{"step": 3, "tu');
    });
    const r = spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", "--resume", dir, "-q", "--no-tensorboard"], { encoding: "utf8" });
    expect(r.status, r.stderr).toBe(0);
    const file = path(dir);
    expect(r.stderr.split("\n").filter(Boolean)).toEqual([
      `tcod run: warning: ${file}:2:1: not a sample episode tcod wrote (line 2 is not JSON (Unexpected token 'g' at column 1)); 2 lines in all (2, 3); the resume keeps such lines as they are and the report leaves them out`,
      expect.stringMatching(new RegExp(`^tcod run: note: ${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:\\d+: the last line is not a whole sample \\(a run killed while writing it\\); it is left out$`)),
    ]);
    expect(readFileSync(file, "utf8").split("\n").slice(1, 3)).toEqual(["garbage", '{"step": "two"}']);
    expect(readFileSync(join(dir, "report.html"), "utf8")).toContain("2 lines of episodes.jsonl are not a sample episode and are left out (line 2 is not JSON");
  });
});

describe("what the checkpoint schema does not name", () => {
  it("passes through unchanged (state a part of the runtime adds, such as the feedback tracker's)", async () => {
    const { findCheckpoint } = await import("../../runtime/checkpoint.js");
    const dir = damaged((d) => editState(d, (s) => { (s.curriculum as Record<string, unknown>).feedback = { seen: 2, values: { a: [1, 2] } }; s.extra = { x: 1 }; }));
    const ck = findCheckpoint(dir) as unknown as { curriculum: { feedback: unknown }; extra: unknown };
    expect(ck.curriculum.feedback).toEqual({ seen: 2, values: { a: [1, 2] } });
    expect(ck.extra).toEqual({ x: 1 });
  });
});

describe("resume without a checkpoint, and interrupted writes", () => {
  it("a run killed before its first checkpoint resumes from step 0", async () => {
    const dir = damaged((d) => {
      rmSync(join(d, "checkpoint"), { recursive: true });
      mkdirSync(join(d, "checkpoint.tmp-424242"));  // a first write cut short
      writeFileSync(join(d, "metrics.jsonl"), '{"kind":"eval","step":0}\n{"kind":"tra');
    });
    expect((await runPlan(plan, { runDir: dir, resume: true })).status).toBe("completed");
    expect(metrics(dir)).toEqual(metrics(full));
    expect(studentFiles(dir)).toEqual(studentFiles(full));
    expect(readdirSync(dir).filter((f) => f.startsWith("checkpoint."))).toEqual([]);
    // The rows of the start that was cut short are kept beside, not overwritten.
    expect(readFileSync(join(dir, "metrics.jsonl.before-restart-1"), "utf8")).toBe('{"kind":"eval","step":0}\n{"kind":"tra');
  });

  it("a run whose checkpoint/ was removed starts again at step 0 and keeps the rows it had (was: metrics.jsonl and episodes.jsonl rewritten, the rows lost unsaid)", async () => {
    const dir = damaged((d) => rmSync(join(d, "checkpoint"), { recursive: true }));
    const before = { metrics: readFileSync(join(dir, "metrics.jsonl"), "utf8"), episodes: readFileSync(join(dir, "episodes.jsonl"), "utf8") };
    expect(before.metrics.length).toBeGreaterThan(0);
    expect(before.episodes.length).toBeGreaterThan(0);
    const told: string[][] = [];
    const onSetAside = (moved: readonly { from: string; to: string }[]) => told.push(moved.map((m) => `${m.from} → ${m.to}`));
    expect((await runPlan(plan, { runDir: dir, resume: true, onSetAside })).status).toBe("completed");
    expect(metrics(dir)).toEqual(metrics(full));
    expect(readFileSync(join(dir, "metrics.jsonl.before-restart-1"), "utf8")).toBe(before.metrics);
    expect(readFileSync(join(dir, "episodes.jsonl.before-restart-1"), "utf8")).toBe(before.episodes);
    expect(told).toEqual([[
      `${join(dir, "metrics.jsonl")} → ${join(dir, "metrics.jsonl.before-restart-1")}`,
      `${join(dir, "episodes.jsonl")} → ${join(dir, "episodes.jsonl.before-restart-1")}`,
    ]]);
    // Again: the next free number, the first kept files untouched.
    const second = readFileSync(join(dir, "metrics.jsonl"), "utf8");
    rmSync(join(dir, "checkpoint"), { recursive: true });
    expect((await runPlan(plan, { runDir: dir, resume: true, onSetAside })).status).toBe("completed");
    expect(readFileSync(join(dir, "metrics.jsonl.before-restart-2"), "utf8")).toBe(second);
    expect(readFileSync(join(dir, "metrics.jsonl.before-restart-1"), "utf8")).toBe(before.metrics);
    expect(told).toHaveLength(2);
  });

  it("a new run in a folder holding an episodes.jsonl (and no metrics.jsonl) keeps it aside too (was: overwritten)", async () => {
    const dir = tmp();
    writeFileSync(join(dir, "episodes.jsonl"), '{"step": 1, "turns": []}\n');
    const told: string[] = [];
    expect((await runPlan(plan, { runDir: dir, onSetAside: (m) => told.push(...m.map((x) => x.to)) })).status).toBe("completed");
    expect(told).toEqual([join(dir, "episodes.jsonl.before-restart-1")]);
    expect(readFileSync(join(dir, "episodes.jsonl.before-restart-1"), "utf8")).toBe('{"step": 1, "turns": []}\n');
  });

  it("a resume without a checkpoint whose metrics.jsonl is empty keeps nothing aside", async () => {
    const dir = damaged((d) => { rmSync(join(d, "checkpoint"), { recursive: true }); writeFileSync(join(d, "metrics.jsonl"), ""); rmSync(join(d, "episodes.jsonl")); });
    let called = false;
    expect((await runPlan(plan, { runDir: dir, resume: true, onSetAside: () => { called = true; } })).status).toBe("completed");
    expect(called).toBe(false);
    expect(readdirSync(dir).filter((f) => f.includes("before-restart"))).toEqual([]);
  });

  it("the seed a run started with is kept in plan.json, so a resume without a checkpoint keeps it", async () => {
    const a = tmp(), b = tmp();
    await runPlan(plan, { runDir: a, seed: 99 });
    await runPlan(plan, { runDir: b, seed: 99, stopAfter: 1 });
    expect((JSON.parse(readFileSync(join(b, "plan.json"), "utf8")) as { clock: { seed: number } }).clock.seed).toBe(99);
    rmSync(join(b, "checkpoint"), { recursive: true });
    const saved = parsePlan(JSON.parse(readFileSync(join(b, "plan.json"), "utf8")));
    await runPlan(saved, { runDir: b, resume: true });
    expect(metrics(b)).toEqual(metrics(a));
  });

  it("a crash between the renames with stale leftovers of earlier crashes resumes from the newest checkpoint", async () => {
    const dir = damaged((d) => {
      // An older checkpoint left behind by an earlier crash, under a pid that sorts after the newest.
      renameSync(join(d, "checkpoint"), join(d, "checkpoint.old-100"));
      cpSync(join(d, "checkpoint.old-100"), join(d, "checkpoint.old-99"), { recursive: true });
      const s = JSON.parse(readFileSync(join(d, "checkpoint.old-99", "state.json"), "utf8")) as { iteration: number };
      s.iteration = 1;
      writeFileSync(join(d, "checkpoint.old-99", "state.json"), JSON.stringify(s));
      mkdirSync(join(d, "checkpoint.tmp-7"));
    });
    expect((await runPlan(plan, { runDir: dir, resume: true })).status).toBe("completed");
    expect(metrics(dir)).toEqual(metrics(full));
    expect(existsSync(join(dir, "checkpoint.old-99"))).toBe(false);
    expect(readdirSync(dir).filter((f) => f.startsWith("checkpoint."))).toEqual([]);
  });
});

describe("--wandb and a refused resume", () => {
  const REFUSED: [string, (d: string) => void][] = [
    ["a damaged metrics row", (d) => { const p = join(d, "metrics.jsonl"); writeFileSync(p, readFileSync(p, "utf8").replace('"successRate"', '"successRatX"')); }],
    ["another plan's checkpoint", (d) => editState(d, (s) => { s.planName = "other"; })],
  ];
  const resume = (dir: string, env: Record<string, string>) =>
    spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), "run", "--resume", dir, "-q", "--wandb", "tcod-test"], { encoding: "utf8", env: { ...process.env, ...env }, timeout: 90_000 });

  // A stand-in for the sink's Python (TCOD_PYTHON): it answers as wandb_sink.py does and logs every
  // line it is sent, so the order is checked without the wandb package.
  const fakePython = (log: string): string => {
    const py = join(tmp(), "python");
    writeFileSync(py, `#!/bin/sh\necho loaded\nwhile IFS= read -r line; do printf '%s\\n' "$line" >> '${log}'; case "$line" in *'"init"'*) echo ready;; esac; done\n`, { mode: 0o755 });
    return py;
  };

  for (const [name, damage] of REFUSED) {
    it(`${name}: the W&B run is never begun (no init sent, no wandb-id)`, () => {
      const dir = damaged(damage);
      const log = join(tmp(), "sink.log");
      const r = resume(dir, { TCOD_PYTHON: fakePython(log) });
      expect(r.status, r.stderr).toBe(1);
      expect(r.stderr).toMatch(/error TC7014: cannot resume: /);
      expect(existsSync(log) ? readFileSync(log, "utf8") : "").toBe("");
      expect(existsSync(join(dir, "wandb-id"))).toBe(false);
    });
  }

  it("a resume the engine takes begins the W&B run, then logs its rows and finishes it", () => {
    const dir = damaged(() => {});
    const log = join(tmp(), "sink.log");
    const r = resume(dir, { TCOD_PYTHON: fakePython(log) });
    expect(r.status, r.stderr).toBe(0);
    const sent = readFileSync(log, "utf8").trim().split("\n").map((l) => Object.keys(JSON.parse(l) as object)[0]);
    expect(sent[0]).toBe("init");
    expect(sent.at(-1)).toBe("finish");
    expect(sent.filter((k) => k === "step").length).toBeGreaterThan(0);
    expect(readFileSync(join(dir, "wandb-id"), "utf8").trim()).toMatch(/^[0-9a-f]{12}$/);
  });

  // With the real package (test/metrics/ci-install.sh; CI installs it, elsewhere skipped without it).
  const PY = process.env.TCOD_METRICS_PYTHON ?? join(ROOT, ".venv-metrics/bin/python");
  const hasWandb = spawnSync(PY, ["-c", "import wandb"], { stdio: "pipe", timeout: 120_000 }).status === 0;
  if (!hasWandb && process.env.CI) throw new Error(`CI must run the W&B resume test: ${PY} cannot import wandb; run bash test/metrics/ci-install.sh`);
  it.skipIf(!hasWandb)("with wandb offline: a refused resume leaves no wandb/ folder and no wandb-id", () => {
    const dir = damaged(REFUSED[0]![1]);
    const r = resume(dir, { TCOD_PYTHON: PY, WANDB_MODE: "offline", WANDB_SILENT: "true" });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/error TC7014: cannot resume: /);
    expect(readdirSync(dir).filter((f) => f === "wandb" || f === "wandb-id")).toEqual([]);
  }, 120_000);
});
