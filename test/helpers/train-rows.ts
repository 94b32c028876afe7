/** How many train rows a run's metrics.jsonl holds so far (0 before it exists): tests that signal a running `tcod run` wait on it. */
import { existsSync, readFileSync } from "node:fs";

export const trainRows = (metricsFile: string): number =>
  existsSync(metricsFile) ? readFileSync(metricsFile, "utf8").split("\n").filter((l) => l.includes('"kind":"train"')).length : 0;
