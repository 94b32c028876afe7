/**
 * `tcod compare RUN_DIR… [--out FILE.html] [--json FILE] [--level X]`: overlays runs on one page
 * (runtime/report/compare.ts): success per eval set against step and wall time, per-turn KL,
 * tokens, the schedules in force, and a table of final and best figures with seeds aggregated.
 * A run without a training step (an empty metrics.jsonl) is left out of all of it, with a warning on
 * stderr, a note on the page and `leftOut` in the JSON; with no run left, TC7009.
 */
import { shownValue } from "../flag-rules.js";
import { existsSync, realpathSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import type { Command } from "commander";
import { partialNote, readMetrics } from "../../runtime/metrics.js";
import { configDifferences, configOf, groupRuns, renderCompare, runsByMethod, splitUntrained, summarize, type RunData } from "../../runtime/report/compare.js";
import { RunFolderError } from "../../runtime/checkpoint.js";
import { UsageError, UserError } from "../../plan/errors.js";
import { deepestPath, MAX_PLAN_JSON_DEPTH } from "../../plan/schema.js";
import { brokenLink, fileReadError, MAX_RUN_FILE_BYTES, readTextFile } from "../../plan/read-file.js";
import { jsonSyntaxError } from "../../plan/json-error.js";
import { EXIT_OK } from "../exit.js";
import { metricsArg } from "../metrics-arg.js";
import { ensureOutFile, writeOutFile } from "../out-path.js";
import { reportUserError } from "../report-diagnostics.js";

interface CompareFlags { out: string; json?: string; level: string; title?: string }

const RUN_HINT = "Pass the folders `tcod run --out DIR` wrote (each holds plan.json and metrics.jsonl).";

/**
 * A run folder's plan and metrics. A path that is not a run folder is a bad command line (TC7009);
 * a run folder whose plan or metrics do not read is a damaged run folder (TC7014), naming the file
 * (and the line of metrics.jsonl).
 */
export function readRun(arg: string): RunData {
  let st;
  try { st = statSync(arg); } catch (e) {
    throw new UsageError(fileReadError(e).kind === "missing" ? "no such folder" : `cannot read it (${fileReadError(e).message})`, { where: { file: arg }, hint: RUN_HINT });
  }
  // A run folder, its metrics.jsonl (as `tcod metrics` and `--trace` take it), or a metrics file a
  // restart set aside in it: a run of its own, under the folder's plan.json (bin/metrics-arg.ts).
  const { dir, path: metricsPath, label } = metricsArg(arg);
  // A file is taken only under one of those names (then metricsArg reads it, not a file in it).
  if (st.isFile() ? metricsPath !== arg : !st.isDirectory()) throw new UsageError("not a run folder (it is a file)", { where: { file: arg }, hint: RUN_HINT });
  const planPath = join(dir, "plan.json");
  // A link that leads nowhere is there, and unreadable: read below, it says so (existsSync says false).
  const has = [planPath, metricsPath].map((p) => existsSync(p) || brokenLink(p) !== undefined);
  if (!has[0] && !has[1]) throw new UsageError("not a run folder (it has no plan.json and no metrics.jsonl)", { where: { file: dir }, hint: RUN_HINT });
  if (!has[0] || !has[1]) {
    const missing = has[0] ? metricsPath : planPath;
    throw new RunFolderError(`a damaged run folder: ${dir} has no ${basename(missing)}`, { where: { file: missing }, hint: "Restore the file, or run the curriculum again in a new --out folder." });
  }
  const damaged = "The run's plan was edited or damaged; restore it, or run the curriculum again in a new --out folder.";
  let text: string;
  try {
    text = readTextFile(planPath, MAX_RUN_FILE_BYTES);
  } catch (e) {
    throw new RunFolderError(`the run's plan cannot be read (${fileReadError(e).message})`, { where: { file: planPath }, hint: damaged });
  }
  let plan: RunData["plan"];
  try {
    plan = JSON.parse(text) as RunData["plan"];
  } catch (e) {
    const j = jsonSyntaxError(e, text);
    if (!j) throw e;
    throw new RunFolderError(`the run's plan is not JSON (${j.message})`, { where: { file: planPath, line: j.line, column: j.column }, hint: damaged });
  }
  if (typeof plan?.name !== "string" || typeof plan?.clock?.seed !== "number") {
    throw new RunFolderError("the run's plan is not a tcod plan (it has no name or clock.seed)", { where: { file: planPath }, hint: damaged });
  }
  // The configuration of a run (configOf) recurses over the whole plan: a hand-made one nested
  // thousands deep would run the stack out. Refused here, naming where.
  const deep = deepestPath(plan);
  if (deep.depth > MAX_PLAN_JSON_DEPTH) {
    throw new RunFolderError(`the run's plan is nested ${deep.depth.toLocaleString("en-US")} levels deep; a plan tcod writes nests at most ${MAX_PLAN_JSON_DEPTH.toLocaleString("en-US")}`, { where: { file: planPath, path: deep.path }, hint: damaged });
  }
  // Every row checked as compare reads it (runtime/metrics.ts rowProblem): a damaged one is TC7014 at its line.
  const rows = readMetrics(metricsPath, (line) => process.stderr.write(partialNote("tcod compare", metricsPath, line)));
  return { dir: label, plan, rows };
}

/**
 * The folders named, each once: a folder given twice (`run1 run1`, `run1 ./run1/`, a link to it, or
 * its metrics.jsonl) would count as two seeds. The later names are dropped with a note on stderr,
 * not refused, as overlapping shell globs (`runs/a* runs/*-s1`) name one folder twice.
 */
function once(dirs: string[]): string[] {
  const seen = new Map<string, string>();
  return dirs.filter((d) => {
    let key: string;
    try {
      key = realpathSync(d);
      if (basename(key) === "metrics.jsonl" && statSync(key).isFile()) key = dirname(key);
    } catch {
      return true; // a path that does not resolve: readRun names the problem
    }
    const first = seen.get(key);
    if (first === undefined) { seen.set(key, d); return true; }
    process.stderr.write(`tcod compare: note: ${d} is the run folder ${first} again; it is counted once\n`);
    return false;
  });
}

export function register(program: Command): void {
  program.command("compare")
    .description("Overlay runs on one HTML page: success per eval set against step and wall time, per-turn KL, tokens, schedules; a table of final and best figures, seeds aggregated.")
    .argument("<run_dirs...>", "run folders (tcod run --out DIR), or a metrics file a restart set aside in one (RUN_DIR/metrics.jsonl.before-restart-N: the earlier start's rows, under the folder's plan.json); a folder named twice (or through a link) counts once, with a note on stderr; a run without a training step (an empty metrics.jsonl) is left out of the figures and means, with a warning on stderr and a note on the page")
    .option("-o, --out <file>", "the HTML page to write", "compare.html")
    .option("--json <file>", "also write the table as JSON")
    .option("--level <x>", "success level for the time-to-level column", "0.5")
    .option("--title <text>", "page title")
    .action((dirs: string[], o: CompareFlags) => {
      // A decimal number: Number() would also take 0x1 (and "" as 0).
      const level = /^\s*(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/.test(o.level) ? Number(o.level) : NaN;
      if (!(level >= 0 && level <= 1)) throw new UsageError(`--level ${shownValue(o.level)}: expected a success rate in [0, 1]`, { hint: "e.g. --level 0.5 (the time-to-level column: the first step at that success)" });
      if (o.title !== undefined && o.title.trim() === "") throw new UsageError(`--title ${shownValue(o.title)}: the title is empty`, { hint: "Give the page a title, e.g. --title \"f2b vs b2f\", or drop --title for the default one." });
      const read: RunData[] = [];
      const problems: UserError[] = [];
      for (const d of once(dirs)) {
        try {
          read.push(readRun(d));
        } catch (e) {
          if (!(e instanceof UserError)) throw e;
          problems.push(e);
        }
      }
      // Every folder's problem in one go, in order; the last one ends the command.
      if (problems.length > 0) {
        for (const p of problems.slice(0, -1)) reportUserError(p, "tcod compare");
        throw problems[problems.length - 1]!;
      }
      // A run without a training step (an empty metrics.jsonl) is left out of every figure, with a note.
      const { kept: runs, leftOut } = splitUntrained(read);
      for (const l of leftOut) process.stderr.write(`tcod compare: warning: ${l.dir} is left out: ${l.why}\n`);
      if (runs.length === 0) {
        throw new UsageError(`nothing to compare: ${read.length === 1 ? "the run has no training step" : `none of the ${read.length} runs has a training step`}`, {
          where: { file: read[0]!.dir }, hint: "Compare runs that have trained at least one step (resume a stopped one with `tcod run --resume DIR`).",
        });
      }
      ensureOutFile(o.out, "--out", "compare.html");
      if (o.json) ensureOutFile(o.json, "--json", "compare.json");
      const groups = groupRuns(runs);
      writeOutFile(o.out, renderCompare(runs, { level, groups, leftOut, ...(o.title !== undefined ? { title: o.title } : {}) }));
      const summaries = [...groups].map(([m, rs]) => summarize(m, rs, level));
      if (o.json) {
        writeOutFile(o.json, JSON.stringify({ level, methods: summaries, ...(leftOut.length ? { leftOut } : {}) }, null, 2) + "\n", "--json");
      }
      // Runs of one name that are not seeds of one configuration: say in what they differ.
      for (const [m, rs] of runsByMethod(runs)) {
        const d = configDifferences(rs);
        if (d.length === 0) continue;
        const n = new Set(rs.map((r) => configOf(r.plan))).size;
        process.stdout.write(`${m}: ${n} configurations, not seeds of one (the plans differ in ${d.slice(0, 4).join(", ")}${d.length > 4 ? ` and ${d.length - 4} more` : ""}); each is its own row\n`);
      }
      for (const s of summaries) {
        const evals = Object.entries(s.evals).map(([n, e]) => `${n} ${e.final.mean.toFixed(3)}${e.final.n > 1 ? `±${e.final.std.toFixed(3)}` : ""}`).join("  ");
        // The seeds themselves, not their count: two runs of one seed (e.g. one differing only in its
        // worker's flags, which the plan does not hold) are replicates, not two seeds.
        process.stdout.write(`${s.method.padEnd(32)} runs ${s.seeds.length} (seed ${s.seeds.join(", ")})  steps ${s.steps}  ${evals}\n`);
      }
      process.stdout.write(`→ ${o.out}\n`);
      process.exitCode = EXIT_OK;
    });
}
