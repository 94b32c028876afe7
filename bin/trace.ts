/** Reads a metrics trace for `tcod explain --trace` and `tcod plot --trace`: a file, or a run folder's metrics.jsonl. */
import { existsSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { UsageError } from "../plan/errors.js";
import { parseTrace, TraceError, type Observation } from "../plan/feedback.js";
import { brokenLink, readTextFile } from "../plan/read-file.js";

/** A metrics trace is read whole: up to this size (a run's metrics.jsonl holds a few KB per step). */
const MAX_TRACE_BYTES = 1024 * 1024 * 1024;

const WHAT = "Give a run's metrics.jsonl (or its run folder), or a synthetic JSONL trace: {\"step\": 1, \"kl\": 0.4} per line.";

/**
 * The trace's training rows, at least one: a trace without any (an empty file, only eval rows, a run
 * still at its start evaluation) would replay every feedback rule at its start value, read as the
 * run's when no step of it was read (TC7013).
 */
export function readTrace(path: string): Observation[] {
  if (!existsSync(path) && !brokenLink(path)) throw new UsageError(`--trace ${path}: no such file or folder`, { hint: WHAT });
  const folder = !brokenLink(path) && statSync(path).isDirectory();
  const file = folder ? join(path, "metrics.jsonl") : path;
  if (!existsSync(file) && !brokenLink(file)) {
    // A folder where a metrics file was meant (`--trace RUN/metrics.jsonl` a folder) is said to be one.
    const what = basename(path) === "metrics.jsonl" ? "a folder, not a metrics file (and no run folder: it holds no metrics.jsonl)" : "a folder with no metrics.jsonl in it";
    throw new UsageError(`--trace ${path}: ${what}`, { hint: "Point --trace at a run's metrics.jsonl, at the run folder `tcod run` wrote it in, or at a JSONL file.", where: { file: path } });
  }
  let text: string;
  try {
    text = readTextFile(file, MAX_TRACE_BYTES);
  } catch (e) {
    throw new UsageError(`--trace ${path}: cannot read ${file === path ? "it" : file}: ${(e as Error).message}`, { hint: WHAT, where: { file } });
  }
  const trace = parseTrace(text, file, (line) => {
    process.stderr.write(`${file}:${line}: note: the last line is not a whole row yet (a run still writing, or one that was killed); the trace ends at the row before it\n`);
  });
  if (trace.length === 0) {
    const why = text.trim() === "" ? "it is empty" : "it holds only evaluation rows, or a row cut short";
    throw new TraceError(`--trace ${path}: the trace has no training row to replay (${why})`, {
      where: { file }, hint: "A trace replays the steps a run trained: give the metrics.jsonl of a run that has finished at least one step, or a synthetic trace: {\"step\": 1, \"kl\": 0.4} per line.",
    });
  }
  return trace;
}
