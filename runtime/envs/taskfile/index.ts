/**
 * Trinity-style task files (EnvSpec.taskFile): JSONL, one task per line, as TCOD's tasksets ship them
 * (docs/REFERENCES.md#tcod-tasks):
 *   ALFWorld  {"game_file": ".../json_2.1.1/train/<task_type>/<trial_id>/game.tw-pddl", "target": "", "actions": [...]}
 *   WebShop   {"task_id": 1503, "target": ""}            (+ optional "actions" for b2f)
 *   any       {"task_desc": "...", ...}                   (Trinity's prompt key; ScienceWorld puts JSON here)
 * `actions` (when present and a list of strings) becomes TaskRef.actions, the b2f prefix source.
 * Blank lines are skipped; anything else that is not a JSON object is an error naming the line.
 * A task_file that is a directory (the official WebShop/ScienceWorld layout) is read as Trinity reads
 * it: the files of the env split's Trinity split (plan/taskset.ts), concatenated.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { EnvConfigError } from "../env.js";
import { directorySplitFiles, trinitySplit } from "../../../plan/taskset.js";
import { jsonSyntaxError } from "../../../plan/json-error.js";

export interface TaskRow {
  /** 1-based line number in the file (for messages). */
  line: number;
  /** The file the row came from, when the task_file is a directory. */
  file?: string;
  gameFile?: string;
  taskId?: number | string;
  taskDesc?: string;
  actions?: string[];
  /** The whole row, for adapters that read more keys. */
  raw: Record<string, unknown>;
}

export function parseTaskFile(text: string, path: string, kind: string): TaskRow[] {
  const rows: TaskRow[] = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const src = lines[i]!.trim();
    if (src === "") continue;
    const where = `${path}:${i + 1}`;
    let raw: unknown;
    try {
      raw = JSON.parse(src);
    } catch (e) {
      // The column in the line as the file holds it (before the trim).
      const j = jsonSyntaxError(e, src, { line: i + 1, column: lines[i]!.length - lines[i]!.trimStart().length + 1 });
      if (!j) throw e;
      throw new EnvConfigError(`${kind}: task file ${path}:${j.line}:${j.column} is not valid JSON (${j.message})`, kind,
        "a task file is JSONL: one JSON object per line");
    }
    if (raw === null || typeof raw !== "object" || Array.isArray(raw)) {
      throw new EnvConfigError(`${kind}: task file ${where} is not a JSON object`, kind, "each line must be an object such as {\"game_file\": …, \"actions\": […]}");
    }
    const r = raw as Record<string, unknown>;
    const row: TaskRow = { line: i + 1, raw: r };
    if (r.game_file !== undefined) {
      if (typeof r.game_file !== "string") throw bad(kind, where, "game_file", "a string path");
      row.gameFile = r.game_file;
    }
    if (r.task_id !== undefined) {
      if (typeof r.task_id !== "number" && typeof r.task_id !== "string") throw bad(kind, where, "task_id", "a number or string");
      row.taskId = r.task_id;
    }
    if (r.task_desc !== undefined) {
      if (typeof r.task_desc !== "string") throw bad(kind, where, "task_desc", "a string");
      row.taskDesc = r.task_desc;
    }
    if (r.actions !== undefined && r.actions !== null) {
      if (!Array.isArray(r.actions) || r.actions.some((a) => typeof a !== "string")) throw bad(kind, where, "actions", "a list of action strings");
      row.actions = r.actions as string[];
    }
    if (row.gameFile === undefined && row.taskId === undefined && row.taskDesc === undefined) {
      throw new EnvConfigError(`${kind}: task file ${where} has none of game_file, task_id, task_desc`, kind,
        "ALFWorld rows need game_file (or task_id = AgentGym game index), WebShop rows task_id");
    }
    rows.push(row);
  }
  if (rows.length === 0) throw new EnvConfigError(`${kind}: task file ${path} has no tasks`, kind);
  return rows;
}

function bad(kind: string, where: string, key: string, what: string): EnvConfigError {
  return new EnvConfigError(`${kind}: task file ${where}: "${key}" must be ${what}`, kind);
}

/**
 * The rows of a task file, or of a directory taskset's files for the env split `split` (Trinity's
 * `train` for tcod's train split, its `test` for any other: plan/taskset.ts).
 */
export function readTaskFile(path: string, kind: string, split = "train"): TaskRow[] {
  let isDir = false;
  try {
    isDir = statSync(path).isDirectory();
  } catch (e) {
    throw new EnvConfigError(`${kind}: cannot read task file ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, kind,
      "task_file is a path to a Trinity-style JSONL taskset (or a directory of them), relative to the working directory");
  }
  if (!isDir) return parseTaskFile(readText(path, kind), path, kind);
  const pick = directorySplitFiles(listFiles(path), trinitySplit(split));
  if ("error" in pick) throw new EnvConfigError(`${kind}: task directory ${path}: ${pick.error}`, kind, pick.hint);
  const rows: TaskRow[] = [];
  for (const rel of pick.files) {
    const file = join(path, rel);
    rows.push(...parseTaskFile(readText(file, kind), file, kind).map((r) => ({ ...r, file })));
  }
  return rows;
}

function readText(path: string, kind: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch (e) {
    throw new EnvConfigError(`${kind}: cannot read task file ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`, kind,
      "task_file is a path to a Trinity-style JSONL taskset (or a directory of them), relative to the working directory");
  }
}

/** Every file under `dir`, as relative paths with `/`. */
function listFiles(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const ent of readdirSync(d, { withFileTypes: true })) {
      const full = join(d, ent.name);
      if (ent.isDirectory()) walk(full);
      else if (ent.isFile()) out.push(relative(dir, full).split("\\").join("/"));
    }
  };
  walk(dir);
  return out;
}

/**
 * The "<task_type>/<trial_id>" key of an ALFWorld game file — the same two directories AgentGym's
 * /reset reports as `task_type`, and the key of its mappings_*.json entries.
 */
export function alfworldGameKey(gameFile: string): string | undefined {
  const parts = gameFile.split("/").filter((p) => p !== "");
  if (parts.length < 3) return undefined;
  return `${parts[parts.length - 3]}/${parts[parts.length - 2]}`;
}
