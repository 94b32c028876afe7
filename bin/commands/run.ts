/**
 * `tcod run FILE.tcod|PLAN.json [--out RUN_DIR] [--seed N] [--resume RUN_DIR] [--set k=v]...
 *  [--curriculum NAME] [--quiet]`: compile (or load) a plan and run it; writes RUN_DIR/metrics.jsonl,
 * RUN_DIR/checkpoint/ and RUN_DIR/report.html. Exit 0 done, 1 user error or a run stopped by faults,
 * 130 interrupted (Ctrl-C; the run checkpoints first; 143 SIGTERM, 129 SIGHUP likewise), 2 internal error.
 */
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { basename, dirname, join, resolve } from "node:path";
import { Option, type Command } from "commander";
import { CompileError, compileFile, safeFileName } from "../../compiler/index.js";
import type { Plan } from "../../plan/schema.js";
import { UsageError, UserError } from "../../plan/errors.js";
import { brokenLink, notRegularFile } from "../../plan/read-file.js";
import { loadPlanJson, refuseSourceFlags } from "../plan-json.js";
import { loadExtensions } from "../../runtime/extensions.js";
import { RunFolderError } from "../../runtime/checkpoint.js";
import { acquireRunLock, checkRunLock, type RunLock } from "../../runtime/run-lock.js";
import { writeErrorOf } from "../../runtime/write-error.js";
import type { SetAside } from "../../runtime/set-aside.js";
import { checkResume, runPlan } from "../../runtime/engine.js";
import { composeRuntime } from "../compose.js";
import { readMetrics } from "../../runtime/metrics.js";
import { configDifferences } from "../../runtime/report/compare.js";
import { writeReport } from "../../runtime/report/index.js";
import { createProgress } from "../../runtime/progress.js";
import { openSinks } from "../../runtime/sinks/index.js";
import { savedRunId } from "../../runtime/sinks/wandb.js";
import { EXIT_OK, EXIT_USER } from "../exit.js";
import { ensureOutDir } from "../out-path.js";
import { collect, printDiagnostics, reportUserError } from "../report-diagnostics.js";
import { recordResume, recordRunStart } from "../provenance.js";
import { curriculumOf, pick, runMany } from "../run-many.js";
import { MAX_POINTS_FLAG, parseMaxPoints } from "../sweep.js";
import { jsonMode, result as setResult } from "../json-output.js";
import { refuseUnused, shownValue } from "../flag-rules.js";
import { formatConfig, resolvedFields } from "../print-config.js";
import { findStdlibDir, projectRootOf } from "../../compiler/modules.js";
import { exitForSignal, signalWord, STOP_SIGNALS, type StopSignal } from "../stop-signals.js";

export const EXIT_INTERRUPTED = 130;

interface RunFlags {
  out?: string; seed?: string; resume?: string; set: string[]; curriculum?: string; quiet?: boolean; tensorboard?: boolean; wandb?: string;
  sweep?: boolean; parallel?: string; dryRun?: boolean; printConfig?: boolean; json?: boolean; record?: string; maxPoints?: string;
  watchParent?: boolean;
}

export function register(program: Command): void {
  program.command("run")
    .description("Run a curriculum (.tcod) or a compiled plan (.json) on its backends; writes metrics, checkpoints and report.html to RUN_DIR.")
    .argument("[file]", ".tcod file or plan .json (optional with --resume)")
    .option("-o, --out <dir>", "run folder (default runs/<plan name>-<timestamp>)")
    .option("--seed <n>", "run seed (overrides the plan's)")
    .option("--resume <dir>", "continue the run in this folder from its checkpoint")
    .option("--set <target=value>", "override a curriculum field (.tcod) or a plan JSON path (.json); repeatable", collect, [])
    .option("--curriculum <name>", "the curriculum (or sweep point) to run when the file has several")
    .option("-q, --quiet", "no progress output")
    .option("--no-tensorboard", "do not write TensorBoard event files into the run folder")
    .option("--wandb <project>", "also log to this Weights & Biases project (needs the wandb Python package; WANDB_MODE=offline works without an account)")
    .option("--sweep", "run every curriculum and sweep point of the file, each in its own run folder under --out (default runs/FILE.sweep); run again to resume")
    .option("--parallel <n>", "with --sweep: points run at once (default 1)")
    .option("--dry-run", "list the points a run would start, with their settings and resolved fields, and the run folder, seed, parallelism and logging the flags give; run nothing")
    .option("--print-config", "print the resolved curriculum of each point (or of --curriculum NAME); run nothing")
    .option("--json", "machine-readable output: the result line (status, steps, run folder, report; the points with --dry-run/--sweep)")
    .option(...MAX_POINTS_FLAG)
    .addOption(new Option("--record <json>", "what a sweep point's run.json records (set by --sweep)").hideHelp())
    .addOption(new Option("--watch-parent", "stop as on SIGHUP when stdin (a pipe from the sweep) closes (set by --sweep)").hideHelp())
    .action(async (file: string | undefined, o: RunFlags, cmd: Command) => {
      try {
        if (o.wandb !== undefined && o.wandb.trim() === "") throw new UsageError("--wandb: give the Weights & Biases project to log to", { hint: "e.g. --wandb my-project (WANDB_MODE=offline logs without an account)" });
        refuseIgnoredFlags(file, o, cmd);
        if (file !== undefined && !(o.sweep || o.dryRun || o.printConfig)) refuseSourceFlags(cmd, file, ["curriculum", "maxPoints"]);
        if (o.sweep || o.dryRun || o.printConfig) {
          process.exitCode = await runMany(file, { ...o, ...(o.seed !== undefined ? { seed: parseSeed(o.seed) } : { seed: undefined }) });
          return;
        }
        process.exitCode = await run(file, o);
      } catch (e) {
        if (!(e instanceof UserError)) throw e;
        reportUserError(e, "tcod run");
        process.exitCode = EXIT_USER;
      }
    });
}

/** Flags that would be silently ignored with the others given: refused, so none means less than it says. */
function refuseIgnoredFlags(file: string | undefined, o: RunFlags, cmd: Command): void {
  // --print-config prints the resolved curriculum: the run's folder, seed and logging are no part of
  // it. (--dry-run shows them: it lists what the run would do, bin/run-many.ts.)
  if (o.printConfig) {
    refuseUnused(cmd, "--print-config", "prints the resolved curriculum and runs nothing (the run's folder, seed and logging are not part of it; --dry-run shows them)", ["dryRun", "sweep", "out", "seed", "wandb", "tensorboard"]);
  }
  if (o.resume !== undefined) {
    const many = o.sweep ? "--sweep" : o.dryRun ? "--dry-run" : o.printConfig ? "--print-config" : undefined;
    if (many) {
      throw new UsageError(`${many} does not take --resume`, {
        hint: many === "--sweep" ? "A sweep resumes its points by itself: run the same `tcod run FILE --sweep` command again." : `${many} reads a .tcod file: \`tcod run FILE ${many}\`; a run folder's resolved curriculum is its config.txt.`,
      });
    }
    if (o.out !== undefined) {
      throw new UsageError(`--out ${o.out} with --resume ${o.resume}: a resumed run goes on in its own folder`, { hint: `Drop --out; the run continues in ${o.resume}.` });
    }
    if (o.curriculum !== undefined && !file) {
      throw new UsageError(`--curriculum ${shownValue(o.curriculum)} with --resume alone: a run folder holds the plan of one curriculum`, { hint: `Drop --curriculum; the run continues the plan in ${join(o.resume, "plan.json")}.` });
    }
  }
  if (o.parallel !== undefined && !o.sweep) {
    throw new UsageError(`--parallel ${shownValue(o.parallel)} without --sweep: only a sweep runs points at once`, { hint: "Add --sweep to run every point of the file, N at a time, or drop --parallel." });
  }
}

async function run(file: string | undefined, o: RunFlags): Promise<number> {
  const held: { lock?: RunLock; runDir?: string } = {};
  // process.exit (a second Ctrl-C) skips `finally` blocks; the exit event still runs.
  const onExit = () => held.lock?.release();
  process.on("exit", onExit);
  try {
    return await runLocked(file, o, held);
  } catch (e) {
    // A write the machine refused (full disk, ulimit -f, …) anywhere else in the run folder
    // (episodes, TensorBoard events, the report): a coded error, not an internal one.
    const err = e as NodeJS.ErrnoException;
    if (held.runDir !== undefined && err.syscall !== undefined && WRITE_SYSCALLS.has(err.syscall)) throw writeErrorOf(e, err.path, held.runDir) ?? e;
    throw e;
  } finally {
    process.off("exit", onExit);
    held.lock?.release();
  }
}

/** File-system calls whose failure is a write the machine refused (not a spawn or a read). */
const WRITE_SYSCALLS = new Set(["write", "open", "mkdir", "rename", "fsync", "close", "ftruncate", "copyfile", "link", "symlink"]);

/**
 * The run; `held.lock` is set once it has taken the run folder: after everything that refuses the run
 * has been checked, before anything is written in the folder.
 */
async function runLocked(file: string | undefined, o: RunFlags, held: { lock?: RunLock; runDir?: string }): Promise<number> {
  const takeFolder = (dir: string) => {
    held.runDir = dir;
    held.lock = acquireRunLock(dir, (m) => process.stderr.write(`tcod run: note: ${m}\n`));
  };
  const seed = o.seed === undefined ? undefined : parseSeed(o.seed);
  // Read before any folder is made: a bad one leaves nothing behind.
  const rec = o.record ? parseRecord(o.record) : undefined;
  let plan: Plan;
  let bundle: string | undefined;
  let runDir: string;
  if (o.resume) {
    runDir = o.resume;
    if (o.set.length) throw new UsageError("--set cannot change a run being resumed", { hint: `A resumed run continues the plan of ${join(runDir, "plan.json")}: drop --set, or start the changed run in a new --out folder.` });
    const saved = join(runDir, "plan.json");
    const resumeHint = "Give --resume the --out folder of an earlier `tcod run` (it holds plan.json, metrics.jsonl and checkpoint/).";
    if (!existsSync(runDir)) throw new UsageError(`--resume ${runDir}: no such folder`, { hint: resumeHint });
    if (!statSync(runDir).isDirectory()) throw new UsageError(`--resume ${runDir}: not a folder`, { hint: resumeHint });
    if (!existsSync(saved) && !brokenLink(saved)) {
      // A folder with a run's state but no plan.json is a damaged run folder; one with neither is not a run folder.
      const state = ["checkpoint", "metrics.jsonl", "run.json"].find((f) => existsSync(join(runDir, f)));
      if (state !== undefined) {
        throw new RunFolderError(`cannot resume: ${saved} is missing (the folder holds ${state} of a run)`, {
          where: { file: saved }, hint: "Without the run's plan it cannot continue; start the run again in a new --out folder.",
        });
      }
      throw new UsageError(`--resume ${runDir}: not a run folder (no plan.json)`, { hint: resumeHint });
    }
    // Everything a resume refuses is checked before it takes the folder's lock (whose file would
    // change the folder's mtime): a refused resume leaves the folder as it was.
    // The run's records a resume reads or rewrites: a folder or a pipe in their place would fail
    // the report after the run (config.txt) or drop the resume's record unsaid (run.json).
    for (const name of ["run.json", "config.txt"]) {
      const f = join(runDir, name);
      const notFile = notRegularFile(f);
      if (notFile) {
        throw new RunFolderError(`cannot resume: ${f} cannot be read (${notFile.message})`, {
          where: { file: f }, hint: `Move ${f} out of the way (${name === "run.json" ? "it records how the run was started and resumed" : "it holds the resolved curriculum the report shows"}), then resume again.`,
        });
      }
    }
    plan = loadRunPlan(saved);
    if (file) {
      const given = loadPlan(file, o).plan;
      if (given.name !== plan.name) {
        throw new UsageError(`${file} compiles to plan "${given.name}", but ${runDir} holds a run of "${plan.name}"`, {
          hint: `Resume with \`tcod run --resume ${runDir}\` alone (it continues the run's own plan.json), or run ${file} in a new --out folder.`,
        });
      }
      // Same name, other content (the file edited since, or another --set): the run would go on with
      // its own plan.json and the file's changes would be dropped unsaid. Seeds and serving URLs may differ.
      const differ = configDifferences([{ dir: file, plan: given, rows: [] }, { dir: runDir, plan, rows: [] }]);
      if (differ.length > 0) {
        throw new UsageError(`${file} compiles to plan "${plan.name}" with other settings than the run in ${runDir} was started with: they differ in ${differ.slice(0, 4).join(", ")}${differ.length > 4 ? ` and ${differ.length - 4} more` : ""}`, {
          where: { file }, hint: `A resumed run continues the plan of ${join(runDir, "plan.json")}: resume with \`tcod run --resume ${runDir}\` alone, or run the changed plan in a new --out folder.`,
        });
      }
    }
    const b = plan.extensions ? join(runDir, plan.extensions.bundle) : undefined;
    if (b && existsSync(b)) bundle = readFileSync(b, "utf8");
    // The run's W&B id is checked before anything is written (the sinks open after the bundle is
    // loaded): a resume it refuses leaves the folder as it was.
    if (o.wandb) savedRunId(runDir);
    // The checkpoint, metrics and samples the engine would refuse, and a run holding the folder.
    checkResume(plan, runDir, seed);
    checkRunLock(runDir);
    takeFolder(runDir);
    // run.json records the resume once the engine has taken the folder (onStart, below): a resume
    // refused for a damaged checkpoint or metrics.jsonl is not one.
  } else {
    if (!file) throw new UsageError("no file to run", { hint: "Give a .tcod file or a plan .json to run, or --resume RUN_DIR to continue a run." });
    let loaded: Loaded;
    ({ plan, bundle, ...loaded } = loadPlan(file, o));
    runDir = o.out ?? join("runs", `${safeFileName(plan.name)}-${timestamp()}`);
    // Checked before the folder is made or probed and its lock taken (a refusal writes nothing in
    // it), and again once the lock is taken: of two runs started on one folder, one goes on.
    checkRunLock(runDir);
    refuseHeldFolder(runDir);
    ensureOutDir(runDir);
    takeFolder(runDir);
    refuseHeldFolder(runDir);
    const root = rec?.sourceRoot ?? projectRootOf(resolve(file));
    recordRunStart(runDir, {
      plan, settings: rec?.settings ?? loaded.settings, ...(seed !== undefined ? { seed } : {}), projectDir: root, ...(rec?.sweep ? { sweep: rec.sweep } : {}),
      candidates: { texts: loaded.texts, files: (p) => (p.startsWith("std/") ? [join(findStdlibDir(), p.slice(4))] : [join(root, p), resolve(p)]) },
    });
    if (loaded.config) writeFileSync(join(runDir, "config.txt"), loaded.config);
  }
  const ext = await loadExtensions(plan, bundle, runDir);

  const progress = createProgress({ quiet: !!o.quiet || jsonMode() });
  const abort = new AbortController();
  // Ctrl-C (SIGINT), and SIGTERM/SIGHUP — what schedulers (SLURM, Kubernetes, systemd, `timeout`)
  // and a closed terminal send — finish the current step and checkpoint; a second one quits at once.
  // The exit status is 128 + the first signal's number, as a shell reports a process it stopped.
  let stoppedBy: StopSignal | undefined;
  const onSignal = (sig: StopSignal) => {
    if (stoppedBy === undefined) {
      stoppedBy = sig;
      progress.log(`\n${signalWord(sig)}: finishing the current step, then checkpointing (Ctrl-C or another signal to quit without a checkpoint)`);
      abort.abort();
    } else process.exit(exitForSignal(stoppedBy));
  };
  for (const sig of STOP_SIGNALS) process.on(sig, onSignal);
  const unwatch = o.watchParent ? watchParent(() => {
    if (stoppedBy !== undefined) return;
    stoppedBy = "SIGHUP";
    // On stderr, not the progress stream (stdout, which a sweep does not keep): the point's stderr.log
    // then says why this attempt stopped, though the sweep is not there to write its footer.
    process.stderr.write("tcod run: note: the sweep that started this point is gone: finishing the current step, then checkpointing\n");
    abort.abort();
  }) : undefined;
  mkdirSync(runDir, { recursive: true });
  const sinks = await openSinks({
    runDir, name: plan.name, config: plan, ...(o.tensorboard === false ? { tensorboard: false } : {}), ...(o.wandb ? { wandbProject: o.wandb } : {}),
  });
  composeRuntime();
  let result;
  let setAside: readonly SetAside[] = [];
  // The damaged lines of episodes.jsonl the resume kept, and warned of: the report, which leaves
  // the same lines out, does not warn of them a second time.
  let damagedTold = 0;
  try {
    result = await runPlan(plan, {
      runDir, ...(seed !== undefined ? { seed } : {}), resume: !!o.resume, signal: abort.signal, ext,
      // What a run records of itself — run.json's resume, the W&B run — starts once the engine has
      // taken the folder: a resume it refuses (a damaged checkpoint or metrics row) leaves none.
      onStart: async (i) => {
        const unrecorded = o.resume ? recordResume(runDir) : undefined;
        if (unrecorded) process.stderr.write(`tcod run: warning: ${unrecorded}\n`);
        await sinks.start();
        progress.start(i);
      },
      onRow: (r) => { progress.row(r); sinks.row(r); },
      // A resume without a checkpoint starts over at step 0: the rows of the earlier start are kept, and said so.
      onSetAside: (moved) => {
        setAside = moved;
        const why = o.resume ? `${runDir} has no checkpoint, so the run starts again at step 0` : `${runDir} already held an earlier run's rows`;
        const metrics = moved.find((m) => basename(m.from) === "metrics.jsonl");
        const read = metrics ? `; read them with \`tcod metrics ${metrics.to}\`` : "";
        process.stderr.write(`tcod run: note: ${why}; the rows written before are kept, not overwritten: ${moved.map((m) => `${m.from} → ${basename(m.to)}`).join(", ")}${read}\n`);
      },
      onWarning: (w) => process.stderr.write(`tcod run: warning ${w}\n`),
      onFileNote: (kind, message, damaged) => {
        if (damaged) damagedTold = damaged.length;
        tellFile(kind, message);
      },
    });
  } finally {
    for (const sig of STOP_SIGNALS) process.off(sig, onSignal);
    unwatch?.();
    progress.stop();
    await sinks.close();
  }
  const report = writeReport(runDir, plan, readMetrics(result.metricsPath), { status: result.status }, (kind, message, damaged) => {
    // The lines the resume kept are the file's only damaged ones (the run appends whole samples).
    if (damaged?.length !== damagedTold || damagedTold === 0) tellFile(kind, message);
  });
  setResult({ plan: plan.name, status: result.status, steps: result.step, runDir, report, ...("message" in result && result.message ? { message: result.message } : {}), ...(result.code ? { code: result.code } : {}), ...(result.hint ? { hint: result.hint } : {}), ...(setAside.length ? { setAside } : {}) });
  const out = jsonMode() ? { write: (_: string) => true } : process.stdout;
  switch (result.status) {
    case "completed":
      out.write(`done: ${result.step} steps in ${runDir}\nreport: ${report}\n`);
      return EXIT_OK;
    case "interrupted":
      out.write(`${result.message}\nreport: ${report}\n`);
      return exitForSignal(stoppedBy ?? "SIGINT");
    case "stopped":
      out.write(`${result.message}\nreport: ${report}\n`);
      return EXIT_OK;
    case "failed":
      if (!jsonMode()) process.stderr.write(`tcod run${result.code ? ` error ${result.code}` : ": error"}: ${result.message}\n${result.hint ? `  hint: ${result.hint}\n` : ""}`);
      out.write(`report: ${report}\n`);
      return EXIT_USER;
  }
}

/** A new run's --out folder that already holds a run (its metrics.jsonl): refused, never overwritten. */
function refuseHeldFolder(runDir: string): void {
  if (existsSync(join(runDir, "metrics.jsonl"))) {
    // --resume needs the run's plan.json: without one, the folder's metrics are not a run it can continue.
    if (!existsSync(join(runDir, "plan.json"))) {
      throw new UsageError(`${runDir} holds a metrics.jsonl but no plan.json, so it is not a run --resume can continue; it is left as it is`, {
        where: { file: join(runDir, "metrics.jsonl") }, hint: `Choose another --out, or move ${join(runDir, "metrics.jsonl")} away to run in ${runDir}.`,
      });
    }
    throw new UsageError(`${runDir} already holds a run; continue it with --resume ${runDir} or choose another --out`, { hint: "A run folder holds one run; its metrics.jsonl is never overwritten." });
  }
}

/** What a reader of a run folder's file says of lines it kept as they were or left out. */
const tellFile = (kind: "warning" | "note", message: string): void => { process.stderr.write(`tcod run: ${kind}: ${message}\n`); };

/** A run seed: an integer a plan can hold exactly (a JSON number without rounding: |n| ≤ 2^53 − 1). */
function parseSeed(s: string): number {
  if (!/^\s*-?\d+\s*$/.test(s)) throw new UsageError(`--seed ${shownValue(s)}: expected an integer`, { hint: "e.g. --seed 7" });
  const n = Number(s);
  if (!Number.isSafeInteger(n)) {
    throw new UsageError(`--seed ${s.trim()}: out of range; a seed is an integer from -9007199254740991 to 9007199254740991 (±(2^53 − 1))`, { hint: "Use a smaller seed, e.g. --seed 7; larger ones would be rounded." });
  }
  return n;
}

function timestamp(): string {
  return new Date().toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
}

/** What a run records of how its plan was made: the settings in force and the source texts. */
interface Loaded { settings: string[]; texts: string[]; /** The resolved curriculum (`--print-config`), for a .tcod run. */ config?: string }

function loadPlan(file: string, o: RunFlags): { plan: Plan; bundle?: string } & Loaded {
  if (!existsSync(file) && !brokenLink(file)) throw new UsageError("no such file", { where: { file }, hint: "Give the .tcod file to run, or a plan .json that `tcod compile` wrote." });
  if (file.endsWith(".json")) {
    const plan = loadPlanJson(file, o.set);
    const b = plan.extensions ? join(dirname(file), plan.extensions.bundle) : undefined;
    const loaded = { settings: o.set, texts: [] };
    return b && existsSync(b) ? { plan, bundle: readFileSync(b, "utf8"), ...loaded } : { plan, ...loaded };
  }
  const r = compileFile(file, { overrides: o.set, ...curriculumOf(file, o.curriculum), ...parseMaxPoints(o.maxPoints) });
  printDiagnostics(r, false);
  if (!r.ok) throw new CompileError(file, r, true);
  const plans = pick(r, o.curriculum, file);
  if (plans.length > 1) {
    throw new UsageError(`${file} compiles to ${plans.length} plans (${plans.map((p) => p.plan.name).join(", ")}); choose one with --curriculum NAME, or run them all with --sweep`);
  }
  const c = plans[0]!;
  const loaded = { settings: c.settings, texts: [...r.sources.values()], config: formatConfig(c, resolvedFields(c, r.sources)) };
  return c.bundle ? { plan: c.plan, bundle: c.bundle, ...loaded } : { plan: c.plan, ...loaded };
}

/**
 * A sweep point's watchdog (`--watch-parent`, which the sweep passes with a pipe as the point's
 * stdin): the sweep never writes to that pipe, and the kernel closes its write end whenever the sweep
 * ends, SIGKILL included (which the sweep cannot catch to stop its points). Its end of file calls
 * `gone` — the point stops as on SIGHUP: it finishes its step, checkpoints and exits 129. The point's
 * stderr is its run folder's stderr.log (bin/point-log.ts), which outlives the sweep, so what it says
 * while winding down is kept; a write to it that the machine refuses (a full disk), or to the pipe the
 * sweep gives instead when it could not open the log and which breaks when the sweep dies, is dropped
 * rather than ending the run (the run's own writes report a full disk). The stdin stream is unref'd,
 * so it never keeps a finished run alive. Returns the function that stops watching.
 */
function watchParent(gone: () => void): () => void {
  const stdin = process.stdin;
  process.stderr.on("error", () => {});
  process.stdout.on("error", () => {});
  const onEnd = () => gone();
  stdin.on("end", onEnd);
  stdin.on("error", onEnd);
  stdin.on("data", () => {});
  stdin.resume();
  (stdin as unknown as { unref?: () => void }).unref?.();
  return () => {
    stdin.off("end", onEnd);
    stdin.off("error", onEnd);
    stdin.pause();
    stdin.destroy();
  };
}

/** The hidden --record flag a sweep passes to each point's run. */
function parseRecord(text: string): { settings?: string[]; sweep?: { dir: string; point: string }; sourceRoot?: string } {
  try {
    return JSON.parse(text) as ReturnType<typeof parseRecord>;
  } catch {
    throw new UsageError(`--record: not JSON (${text.slice(0, 60)})`, { hint: "--record is what `tcod run --sweep` passes to each point it starts; drop it." });
  }
}

/**
 * The plan.json of a run folder being resumed. tcod wrote it, so one that does not read or validate
 * is a damaged run folder (TC7014 naming the file), not a bad command line.
 */
function loadRunPlan(file: string): Plan {
  try {
    return loadPlanJson(file, []);
  } catch (e) {
    if (!(e instanceof UserError)) throw e;
    const first = e.problems()[0];
    const message = first?.message ?? e.message;
    const hint = "The run's plan was edited or damaged; restore it, or start the run again in a new --out folder.";
    // A plan.json that cannot be read at all (a folder, a link that leads nowhere): said as such.
    const unread = `cannot read ${file}: `;
    if (message.startsWith(unread)) throw new RunFolderError(`cannot resume: ${file} cannot be read (${message.slice(unread.length)})`, { where: { file }, hint });
    const what = message.startsWith(`${file}: `) ? message.slice(file.length + 2) : message;
    const at = first?.where?.line !== undefined ? { line: first.where.line, ...(first.where.column !== undefined ? { column: first.where.column } : {}) } : {};
    throw new RunFolderError(`cannot resume: ${file} is damaged: ${what}${first?.where?.path ? ` (at ${first.where.path})` : ""}`, { where: { file, ...at }, hint });
  }
}

