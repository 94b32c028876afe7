/**
 * What a run argument of `tcod metrics` and `tcod compare` names: a run folder (its metrics.jsonl),
 * the folder's metrics.jsonl itself (as `--trace` takes it), or a metrics file a restart at step 0
 * set aside in it (`metrics.jsonl.before-restart-N`, runtime/set-aside.ts): the rows of the earlier
 * start, read as a run of their own under the folder's plan.json. Only those names are taken as
 * files; any other path is a folder to look in, so no name from the command line is joined to a path.
 */
import { statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { SET_ASIDE_METRICS } from "../runtime/set-aside.js";

export interface MetricsArg {
  /** The run folder (its plan.json, event files, …). */
  dir: string;
  /** The metrics file read. */
  path: string;
  /** How output names the run: the folder, or the set-aside file's own path. */
  label: string;
  /** Whether `path` holds rows a restart set aside (not the folder's own run). */
  setAside: boolean;
}

export function metricsArg(arg: string): MetricsArg {
  const name = basename(arg);
  let file = false;
  try { file = statSync(arg).isFile(); } catch { /* missing: a folder to look in, which says so */ }
  if (file && name === "metrics.jsonl") return { dir: dirname(arg), path: arg, label: dirname(arg), setAside: false };
  if (file && SET_ASIDE_METRICS.test(name)) return { dir: dirname(arg), path: arg, label: arg, setAside: true };
  return { dir: arg, path: join(arg, "metrics.jsonl"), label: arg, setAside: false };
}
