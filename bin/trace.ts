/** Reads a metrics trace for `tcod explain --trace` and `tcod plot --trace`: a file, or a run folder's metrics.jsonl. */
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../plan/errors.js";
import { parseTrace, type Observation } from "../plan/feedback.js";
import { brokenLink, readTextFile } from "../plan/read-file.js";

/** A metrics trace is read whole: up to this size (a run's metrics.jsonl holds a few KB per step). */
const MAX_TRACE_BYTES = 1024 * 1024 * 1024;

export function readTrace(path: string): Observation[] {
  if (!existsSync(path) && !brokenLink(path)) throw new UsageError(`--trace ${path}: no such file or folder`, { hint: "Give a run's metrics.jsonl (or its run folder), or a synthetic JSONL trace: {\"step\": 1, \"kl\": 0.4} per line." });
  const file = !brokenLink(path) && statSync(path).isDirectory() ? join(path, "metrics.jsonl") : path;
  if (!existsSync(file) && !brokenLink(file)) throw new UsageError(`--trace ${path}: the folder has no metrics.jsonl`, { hint: "Point --trace at a run folder written by `tcod run`, or at a JSONL file." });
  let text: string;
  try {
    text = readTextFile(file, MAX_TRACE_BYTES);
  } catch (e) {
    throw new UsageError(`--trace ${path}: cannot read it: ${(e as Error).message}`, { hint: "Give a run's metrics.jsonl (or its run folder), or a synthetic JSONL trace: {\"step\": 1, \"kl\": 0.4} per line.", where: { file } });
  }
  return parseTrace(text, file, (line) => {
    process.stderr.write(`${file}:${line}: note: the last line is not a whole row yet (a run still writing, or one that was killed); the trace ends at the row before it\n`);
  });
}
