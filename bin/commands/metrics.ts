/**
 * `tcod metrics RUN_DIR… [--csv] [--json] [--tensorboard]`: a run's metrics where a researcher reads
 * them. Default: a table of each scalar's first, last, best and the step of the best. `--csv`: one row
 * per metrics row (train and eval), one column per scalar (the TensorBoard names), on stdout.
 * `--tensorboard`: (re)writes TensorBoard event files in each run folder from its metrics.jsonl, for
 * runs made without them.
 *
 * A value metrics.jsonl holds as `null` (not measured at that step, or not a finite number when it was
 * written: JSON has no NaN) is never dropped without a word: the table prints it as `null` where it is
 * the first or last value, counts a scalar's nulls beside it ("null in 2 of 10 rows"), and names on
 * one line the scalars null in every row; min, max and the best step are over the numbers. `--json`
 * counts them (`nulls`), and `--csv` writes `null` in the cell (empty: the row has no such value).
 *
 * A run argument may also be the folder's metrics.jsonl, or a metrics file a restart at step 0 set
 * aside in it (`RUN_DIR/metrics.jsonl.before-restart-N`: the rows of the earlier start, shown under
 * that file's name; bin/metrics-arg.ts). A folder holding such files is told so on stderr, with the
 * command that reads them.
 *
 * Every folder named is read before anything is printed: each one that is no run folder (TC7009) or
 * whose metrics.jsonl is damaged (TC7014) is reported, in order, and the command then prints nothing
 * else and exits 1, as `tcod compare` does (`--json`: the first error, and every one under `problems`).
 */
import { existsSync, lstatSync, readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Command } from "commander";
import { partialNote, readMetrics, type MetricsRow } from "../../runtime/metrics.js";
import { rowNulls, rowScalars } from "../../runtime/sinks/scalars.js";
import { TensorBoardWriter } from "../../runtime/sinks/tensorboard.js";
import { writeErrorOf } from "../../runtime/write-error.js";
import { brokenLink } from "../../plan/read-file.js";
import { EXIT_OK, EXIT_USER } from "../exit.js";
import { formatUserError, UsageError, UserError } from "../../plan/errors.js";
import { jsonError, jsonErrors, result } from "../json-output.js";
import { metricsArg } from "../metrics-arg.js";
import { setAsideMetrics } from "../../runtime/set-aside.js";

interface Flags { csv?: boolean; json?: boolean; tensorboard?: boolean }

export function register(program: Command): void {
  program.command("metrics")
    .description("Print a run's metrics: a summary table, CSV (--csv), or JSON (--json); --tensorboard writes TensorBoard event files from metrics.jsonl. A value metrics.jsonl holds as null (not measured at that step, or NaN/±Infinity when written) is shown as null and counted, never dropped; min and max are over the numbers.")
    .argument("<runDirs...>", "run folders (each with metrics.jsonl), or a metrics file a restart set aside in one (RUN_DIR/metrics.jsonl.before-restart-N); every one that cannot be read is reported, and then nothing else is printed")
    .option("--csv", "every metrics row as CSV on stdout (`null` where the row holds null, empty where it has no such value)")
    .option("--json", "the summary as the JSON result line")
    .option("--tensorboard", "(re)write TensorBoard event files in each run folder")
    .action((dirs: string[], o: Flags) => {
      // CSV rows on stdout would break --json's contract (JSON lines, the last one the result).
      if (o.csv && o.json) { fail(new UsageError("--csv and --json are two formats of stdout; give one", { hint: "--csv for every row as CSV, --json for the summary as the JSON result line." })); return; }
      const runs: { dir: string; rows: MetricsRow[] }[] = [];
      const problems: UserError[] = [];
      for (const arg of dirs) {
        // A run folder, its metrics.jsonl, or a metrics file a restart set aside in it.
        const { dir, path, label, setAside } = metricsArg(arg);
        if (!existsSync(path) && !brokenLink(path)) {
          problems.push(new UsageError(`${dir}: ${existsSync(dir) ? "not a run folder (no metrics.jsonl)" : "no such folder"}`, { hint: "Give the --out folder of a `tcod run`, or a metrics.jsonl.before-restart-N file in one.", where: { file: dir } }));
          continue;
        }
        if (setAside && o.tensorboard) {
          problems.push(new UsageError(`--tensorboard: ${path} holds rows a restart set aside, not the run's own`, {
            hint: `--tensorboard rewrites the event files of ${dir} from its metrics.jsonl; read the set-aside rows without it (or with --csv).`, where: { file: path },
          }));
          continue;
        }
        if (!setAside && !o.json) {
          const older = setAsideMetrics(dir);
          if (older.length > 0) process.stderr.write(`tcod metrics: note: ${dir} also holds the rows of ${older.length === 1 ? "an earlier start" : `${older.length} earlier starts`} a restart at step 0 set aside (${older.join(", ")}); read them with \`tcod metrics ${join(dir, older[0]!)}\`\n`);
        }
        try {
          // Every row checked as `tcod compare` checks it (runtime/metrics.ts rowProblem).
          runs.push({ dir: label, rows: readMetrics(path, (line) => process.stderr.write(partialNote("tcod metrics", path, line))) });
        } catch (e) {
          if (!(e instanceof UserError)) throw e;
          problems.push(e); // a damaged run folder (TC7014), naming the file and line
        }
      }
      // Every folder's problem in one go, in order, as `tcod compare` reports them; nothing is printed
      // for the others (a table or CSV of some of the runs asked for would pass for all of them).
      if (problems.length > 0) {
        if (!jsonErrors(problems)) for (const p of problems) process.stderr.write(formatUserError(p, "tcod metrics") + "\n");
        process.exitCode = EXIT_USER;
        return;
      }
      if (o.tensorboard) {
        for (const r of runs) {
          const tb = new TensorBoardWriter(r.dir);
          try {
            // The event files tcod wrote before (TensorBoardWriter's names); a folder of that name is not one.
            for (const f of readdirSync(r.dir)) if (f.startsWith("events.out.tfevents.") && !lstatSync(join(r.dir, f)).isDirectory()) rmSync(join(r.dir, f));
            for (const row of r.rows) tb.scalars(row.step, rowScalars(row));
            tb.close();
          } catch (e) {
            // A run folder this user cannot write, a full disk, …: TC7015 naming the file, not an internal error.
            const err = writeErrorOf(e, (e as NodeJS.ErrnoException).path ?? tb.path, r.dir, "run `tcod metrics --tensorboard` again");
            if (!err) throw e;
            fail(err);
            return;
          }
          if (!o.json) process.stdout.write(`${r.dir}: ${r.rows.length} rows → ${tb.path}\n`);
        }
      }
      if (o.csv) {
        process.stdout.write(toCsv(runs));
      } else if (o.json) {
        result({ runs: runs.map((r) => ({ dir: r.dir, rows: r.rows.length, summary: summarise(r.rows) })) });
      } else if (!o.tensorboard) {
        for (const r of runs) process.stdout.write(summaryTable(r.dir, r.rows));
      }
      process.exitCode = EXIT_OK;
    });
}

function fail(e: UserError): void {
  if (!jsonError(e)) process.stderr.write(formatUserError(e, "tcod metrics") + "\n");
  process.exitCode = EXIT_USER;
}

/**
 * One scalar over a run's rows. `first` and `last` are the values of the first and last row that holds
 * the scalar, `null` where that row holds null; `min`, `max` and their steps are over the numbers
 * (`null` when there is none); `n` counts the numbers and `nulls` the rows holding null.
 */
export interface ScalarSummary { first: number | null; last: number | null; min: number | null; max: number | null; argmin: number | null; argmax: number | null; n: number; nulls: number }

export function summarise(rows: MetricsRow[]): Record<string, ScalarSummary> {
  const out: Record<string, ScalarSummary> = {};
  const slot = (tag: string, v: number | null): ScalarSummary => {
    const s = out[tag];
    if (s) { s.last = v; return s; }
    return (out[tag] = { first: v, last: v, min: null, max: null, argmin: null, argmax: null, n: 0, nulls: 0 });
  };
  for (const row of rows) {
    const nums = rowScalars(row);
    const nulls = new Set(rowNulls(row));
    // In the row's own order of tags, numbers and nulls alike (rowScalars' order, then the nulls).
    for (const tag of [...Object.keys(nums), ...nulls]) {
      if (tag.startsWith("time/")) continue;
      if (nulls.has(tag)) { slot(tag, null).nulls++; continue; }
      const v = nums[tag]!;
      const s = slot(tag, v);
      s.n++;
      if (s.min === null || v < s.min) { s.min = v; s.argmin = row.step; }
      if (s.max === null || v > s.max) { s.max = v; s.argmax = row.step; }
    }
  }
  return out;
}

function summaryTable(dir: string, rows: MetricsRow[]): string {
  const s = summarise(rows);
  const all = Object.keys(s).filter((t) => !/\/kl\/turn_\d+$/.test(t)).sort();
  const tags = all.filter((t) => s[t]!.n > 0);
  const allNull = all.filter((t) => s[t]!.n === 0);
  const w = Math.max(6, ...tags.map((t) => t.length));
  const f = (x: number | null) => (x === null ? "null" : Number.isInteger(x) ? String(x) : Math.abs(x) >= 1e4 || Math.abs(x) < 1e-3 ? x.toExponential(3) : x.toFixed(4));
  const lines = [`${dir} (${rows.length} rows)`, `  ${"scalar".padEnd(w)}  ${"first".padStart(10)}  ${"last".padStart(10)}  ${"min".padStart(10)}  ${"max".padStart(10)}  at step (max)`];
  for (const t of tags) {
    const x = s[t]!;
    const nulls = x.nulls > 0 ? `  (null in ${x.nulls} of ${x.n + x.nulls} rows)` : "";
    lines.push(`  ${t.padEnd(w)}  ${f(x.first).padStart(10)}  ${f(x.last).padStart(10)}  ${f(x.min).padStart(10)}  ${f(x.max).padStart(10)}  ${x.argmax}${nulls}`);
  }
  if (allNull.length > 0) lines.push(`  null in every row that has it: ${allNull.map((t) => `${t} (${s[t]!.nulls} rows)`).join(", ")}`);
  if (all.some((t) => s[t]!.nulls > 0)) lines.push("  (null: a value not measured at that step, or NaN/±Infinity when it was written; min, max and the step of the max are over the numbers)");
  return lines.join("\n") + "\n";
}

/** RFC 4180 CSV: columns run, kind, eval set, step, then every scalar tag (sorted); `null` where a row holds null, empty where it has none. */
export function toCsv(runs: { dir: string; rows: MetricsRow[] }[]): string {
  const table = runs.flatMap((r) => r.rows.map((row) => ({ dir: r.dir, row, s: rowScalars(row), nulls: new Set(rowNulls(row)) })));
  const tags = [...new Set(table.flatMap((t) => [...Object.keys(t.s), ...t.nulls]))].sort();
  const cell = (v: string) => (/[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  const lines = [["run", "kind", "set", "step", ...tags].map(cell).join(",")];
  for (const t of table) {
    const set = t.row.kind === "eval" ? t.row.name : "";
    lines.push([t.dir, t.row.kind, set, String(t.row.step), ...tags.map((g) => (g in t.s ? String(t.s[g]) : t.nulls.has(g) ? "null" : ""))].map(cell).join(","));
  }
  return lines.join("\n") + "\n";
}
