/**
 * AgentGym env-server adapters from an EnvSpec (kinds alfworld, webshop, sciworld, textcraft).
 *
 * EnvSpec: server (base URL, required), taskFile (Trinity JSONL; optional), params:
 *   ranges        {split: [start, end)} server indices per split when there is no task file.
 *                 Defaults: alfworld train = [0, 2420), valid_train = [2420, 2620) (AgentGym's
 *                 mappings_train/test.json); webshop test = [0, 500), dev = [500, 1500),
 *                 train = [1500, 5596) (the reference split, 4096 train goals as Trinity's default);
 *                 sciworld / textcraft: none (AgentGym has no splits; give ranges or a task file).
 *   mappings      alfworld only: paths of the server's configs/mappings_*.json ([{item_id, task_type,
 *                 task_id}]) to turn task-file game_file paths into the server's game indices.
 *   reset_timeout_s, step_timeout_s.
 *   first_observation  alfworld only: "official" (default) shows the first observation as the
 *                 official TCOD ALFWorld workflows see it (the TextWorld intro the server drops put
 *                 back, paragraphs "\n\n" apart: observation.ts `alfworldOfficialFirst`); "server"
 *                 as the server sends it.
 *   page_text     webshop only: "text_rich" (default) shows each page as the multi-line text the
 *                 official TCOD WebShop workflows see (web_agent_site observation_mode "text_rich"),
 *                 rebuilt from the server's [SEP]-joined `text` form (observation.ts
 *                 `webshopRichText`, which says what the rebuild cannot recover); "text" shows the
 *                 server's line as it comes (AgentGym's own prompts).
 * Task-file rows: task_id (a number) is the server index; an ALFWorld game_file resolves through the
 * mappings to "<task_type>/<trial_id>", which /reset's task_type must echo.
 */
import { readFileSync } from "node:fs";
import type { EnvSpec } from "../../../plan/schema.js";
import { EnvConfigError } from "../env.js";
import { alfworldGameKey, readTaskFile, type TaskRow } from "../taskfile/index.js";
import { AGENTGYM_DEFAULT_TIMEOUTS, type AgentGymEnv, type AgentGymTimeouts } from "./adapter.js";
import {
  ALFWORLD_FIRST_OBSERVATIONS, AlfworldAgentGym, SciworldAgentGym, TextcraftAgentGym, WEBSHOP_PAGE_TEXTS, WebshopAgentGym, type AlfworldFirstObservation,
  type WebshopPageText,
} from "./envs.js";
import { AGENTGYM_MAX_BODY_BYTES, AgentGymHttp } from "./http.js";
import { capBytesFromMiB } from "../../http-body.js";
import { fileSource, rangeSource, rangesFromParams, type ResolvedRow, type SplitRanges, type TaskSource } from "./tasks.js";
import { jsonSyntaxError } from "../../../plan/json-error.js";

export type AgentGymKind = "alfworld" | "webshop" | "sciworld" | "textcraft";

export const AGENTGYM_START: Record<AgentGymKind, string> = {
  alfworld: "start it with `alfworld --host 127.0.0.1 --port 36001` (agentenv-alfworld; data via alfworld-download)",
  webshop: "start it with `webshop --host 127.0.0.1 --port 36003` (agentenv-webshop; setup.sh -d small)",
  sciworld: "start it with `sciworld --host 127.0.0.1 --port 36002` (agentenv-sciworld), or `python -m tcod_bridges.agentgym_server --port 36002`",
  textcraft: "start it with `textcraft --host 127.0.0.1 --port 36004` (agentenv-textcraft)",
};

const DEFAULT_RANGES: Record<AgentGymKind, SplitRanges> = {
  alfworld: { train: [0, 2420], valid_train: [2420, 2620] },
  webshop: { test: [0, 500], dev: [500, 1500], train: [1500, 5596] },
  sciworld: {},
  textcraft: {},
};

const CLASSES = { alfworld: AlfworldAgentGym, webshop: WebshopAgentGym, sciworld: SciworldAgentGym, textcraft: TextcraftAgentGym };

/** "<task_type>/<trial_id>" → server game index, from AgentGym's mappings_*.json files. */
export function readAlfworldMappings(paths: string[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const p of paths) {
    let rows: unknown;
    let text = "";
    try {
      text = readFileSync(p, "utf8");
      rows = JSON.parse(text);
    } catch (e) {
      const j = jsonSyntaxError(e, text);
      throw new EnvConfigError(j ? `alfworld: mappings file ${p}:${j.line}:${j.column} is not JSON (${j.message})` : `alfworld: cannot read mappings file ${p} (${(e as Error).message})`, "alfworld",
        "params.mappings lists the server's configs/mappings_train.json and configs/mappings_test.json");
    }
    if (!Array.isArray(rows)) throw new EnvConfigError(`alfworld: mappings file ${p} is not a JSON list`, "alfworld");
    for (const r of rows as { item_id?: unknown; task_type?: unknown; task_id?: unknown }[]) {
      if (typeof r.item_id !== "number" || typeof r.task_type !== "string" || typeof r.task_id !== "string") {
        throw new EnvConfigError(`alfworld: mappings file ${p} has an entry without item_id/task_type/task_id: ${JSON.stringify(r)}`, "alfworld");
      }
      out.set(`${r.task_type}/${r.task_id}`, r.item_id);
    }
  }
  return out;
}

function rowResolver(kind: AgentGymKind, params: Record<string, unknown>, path: string): (row: TaskRow) => ResolvedRow {
  let mappings: Map<string, number> | undefined;
  return (row) => {
    if (typeof row.taskId === "number" || (typeof row.taskId === "string" && /^\d+$/.test(row.taskId))) {
      return { id: String(row.taskId), index: Number(row.taskId) };
    }
    if (kind === "alfworld" && row.gameFile !== undefined) {
      const key = alfworldGameKey(row.gameFile);
      if (!key) throw new EnvConfigError(`alfworld: task file ${path}:${row.line}: game_file "${row.gameFile}" has no <task_type>/<trial_id> directories`, kind);
      if (!mappings) {
        const m = params.mappings;
        if (!Array.isArray(m) || m.length === 0 || m.some((x) => typeof x !== "string")) {
          throw new EnvConfigError(`alfworld: task file ${path} names games by game_file, but the AgentGym server takes game indices`, kind,
            "set params.mappings to the server's configs/mappings_train.json and mappings_test.json (agentenv-alfworld), or give rows a task_id");
        }
        mappings = readAlfworldMappings(m as string[]);
      }
      const index = mappings.get(key);
      if (index === undefined) {
        throw new EnvConfigError(`alfworld: task file ${path}:${row.line}: game "${key}" is not served by the AgentGym server (not in params.mappings)`, kind,
          "AgentGym serves json_2.1.1/train (2420 games) and valid_train (200); valid_seen/valid_unseen games need a server configured for them");
      }
      return { id: key, index };
    }
    throw new EnvConfigError(`${kind}: task file ${path}:${row.line} has no task_id${kind === "alfworld" ? " or game_file" : ""}`, kind,
      `${kind} rows need task_id = the server's index (${kind === "webshop" ? "session_id" : kind === "alfworld" ? "game" : "data_idx"})`);
  };
}

export function taskSource(kind: AgentGymKind, spec: EnvSpec): TaskSource {
  if (spec.taskFile) {
    const rows = readTaskFile(spec.taskFile, kind, spec.split);
    return fileSource(kind, spec.taskFile, spec.split, rows, rowResolver(kind, spec.params, spec.taskFile));
  }
  return rangeSource(kind, rangesFromParams(kind, spec.params, DEFAULT_RANGES[kind]),
    "Give params.ranges {split: [start, end)} or a task_file (JSONL rows with task_id).");
}

/** The longest request timeout, in whole seconds: 2^31 − 1 ms, the longest a timer can wait. */
const MAX_TIMEOUT_S = Math.floor((2 ** 31 - 1) / 1000);

function timeouts(kind: string, params: Record<string, unknown>): AgentGymTimeouts {
  const read = (key: string, fallback: number) => {
    const v = params[key];
    if (v === undefined) return fallback;
    if (typeof v !== "number" || !(v > 0)) throw new EnvConfigError(`${kind}: param ${key} must be a positive number of seconds, got ${JSON.stringify(v)}`, kind);
    // A timer holds at most 2^31 − 1 ms; past it a request failed with an internal RangeError.
    if (v > MAX_TIMEOUT_S) {
      throw new EnvConfigError(`${kind}: param ${key} must be at most ${MAX_TIMEOUT_S} seconds (about 24 days, the longest timer), got ${v}`, kind,
        "a timeout is how long one request may take; give the longest a /reset or /step of this server may need");
    }
    return v * 1000;
  };
  return { resetMs: read("reset_timeout_s", AGENTGYM_DEFAULT_TIMEOUTS.resetMs), stepMs: read("step_timeout_s", AGENTGYM_DEFAULT_TIMEOUTS.stepMs) };
}

/** params.max_body_mb in bytes (absent: AGENTGYM_MAX_BODY_BYTES). */
function maxBody(kind: string, params: Record<string, unknown>): number | undefined {
  const v = params.max_body_mb;
  if (v === undefined) return undefined;
  const cap = typeof v === "number" ? capBytesFromMiB(v) : { problem: `must be a positive number of MiB, got ${JSON.stringify(v)}` };
  if (typeof cap === "number") return cap;
  throw new EnvConfigError(`${kind}: param max_body_mb ${cap.problem}`, kind,
    `The largest answer, in MiB, read from the env server (default ${AGENTGYM_MAX_BODY_BYTES / 1048576}).`);
}

export function agentGymFromSpec(kind: AgentGymKind, spec: EnvSpec): AgentGymEnv {
  if (!spec.server) {
    throw new EnvConfigError(`${kind} needs the URL of its AgentGym server (server: "http://127.0.0.1:PORT")`, kind, AGENTGYM_START[kind]);
  }
  const t = timeouts(kind, spec.params);
  const http = new AgentGymHttp({ kind, server: spec.server, timeoutMs: t.stepMs, startHint: AGENTGYM_START[kind], maxBodyBytes: maxBody(kind, spec.params) });
  const env = new CLASSES[kind](kind, http, taskSource(kind, spec), t);
  if (env instanceof AlfworldAgentGym) {
    const v = paramOneOf(kind, spec.params, "first_observation", ALFWORLD_FIRST_OBSERVATIONS,
      "\"official\" (the default) shows the first observation as the official TCOD ALFWorld workflows see it; \"server\" as the AgentGym server sends it");
    if (v !== undefined) env.firstObservation = v;
  }
  if (env instanceof WebshopAgentGym) {
    const v = paramOneOf(kind, spec.params, "page_text", WEBSHOP_PAGE_TEXTS,
      "\"text_rich\" (the default) shows the multi-line page the official TCOD WebShop workflows see; \"text\" the server's [SEP]-joined line");
    if (v !== undefined) env.pageText = v;
  }
  return env;
}

/** An env param that must be one of `allowed` (undefined when absent); a coded EnvConfigError otherwise. */
function paramOneOf<T extends string>(kind: AgentGymKind, params: EnvSpec["params"], name: string, allowed: readonly T[], hint: string): T | undefined {
  const v = params[name];
  if (v === undefined) return undefined;
  if (!(allowed as readonly unknown[]).includes(v)) {
    throw new EnvConfigError(`${kind}: param ${name} must be ${allowed.map((x) => `"${x}"`).join(" or ")}, got ${JSON.stringify(v)}`, kind, hint);
  }
  return v as T;
}

export { AgentGymEnv, AGENTGYM_DEFAULT_TIMEOUTS } from "./adapter.js";
export { AgentGymHttp, ServerReportedError } from "./http.js";
export { AlfworldAgentGym, SciworldAgentGym, TextcraftAgentGym, WebshopAgentGym } from "./envs.js";
export * from "./observation.js";
