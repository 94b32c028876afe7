/**
 * What a run folder records about how it was started, so a result can be traced and redone:
 * RUN_DIR/run.json (tcod version, the command line, the overrides and sweep point in force, the seed,
 * Node, the git commit of the project and whether its tree had changes) and RUN_DIR/source/ (the
 * .tcod and .ts files the plan was compiled from, under the names the plan's `sources` gives them).
 * A resumed run appends to `resumes` and keeps the rest. run.json is replaced atomically (fs-atomic.ts).
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, normalize, resolve, sep } from "node:path";
import type { Plan } from "../plan/schema.js";
import { writeFileAtomicSync } from "../runtime/fs-atomic.js";
import { RunFolderError } from "../runtime/checkpoint.js";
import { fileReadError, MAX_RUN_FILE_BYTES, readTextFile } from "../plan/read-file.js";
import { jsonSyntaxError } from "../plan/json-error.js";
import { TCOD_VERSION } from "./version.js";

export interface RunRecord {
  tcod: string;
  node: string;
  argv: string[];
  cwd: string;
  startedAt: string;
  /** `--set` overrides and the sweep point, as `target=value`. */
  settings: string[];
  seed?: number;
  plan: string;
  git?: { commit: string; dirty: boolean; root: string };
  /** The sweep this run is a point of: its folder (relative to the run folder) and the point's name. */
  sweep?: { dir: string; point: string };
  sources: { path: string; sha256: string; saved: boolean }[];
  resumes: { at: string; argv: string[] }[];
}

/**
 * Writes run.json and source/ for a new run. A source is saved when one of `candidates` (texts the
 * caller has, e.g. a compilation's; or files to read) has the sha256 the plan records for it.
 */
export function recordRunStart(runDir: string, o: { plan: Plan; settings: string[]; seed?: number; candidates: { texts?: Iterable<string>; files?: (path: string) => string[] }; projectDir: string; sweep?: RunRecord["sweep"] }): void {
  mkdirSync(runDir, { recursive: true });
  const bySha = new Map<string, string>();
  for (const t of o.candidates.texts ?? []) bySha.set(sha256(t), t);
  const sources: RunRecord["sources"] = [];
  for (const s of o.plan.sources) {
    let text = bySha.get(s.sha256);
    for (const f of text === undefined ? o.candidates.files?.(s.path) ?? [] : []) {
      text = readIfSame(f, s.sha256);
      if (text !== undefined) break;
    }
    const target = safeSourcePath(runDir, s.path);
    if (text !== undefined && target !== undefined) {
      mkdirSync(dirname(target), { recursive: true });
      writeFileSync(target, text);
    }
    sources.push({ path: s.path, sha256: s.sha256, saved: text !== undefined && target !== undefined });
  }
  const rec: RunRecord = {
    tcod: TCOD_VERSION, node: process.version, argv: process.argv.slice(2), cwd: process.cwd(), startedAt: new Date().toISOString(),
    settings: o.settings, ...(o.seed !== undefined ? { seed: o.seed } : {}), plan: o.plan.name,
    ...gitState(o.projectDir), ...(o.sweep ? { sweep: o.sweep } : {}), sources, resumes: [],
  };
  writeFileAtomicSync(join(runDir, "run.json"), JSON.stringify(rec, null, 2) + "\n");
}

/**
 * Notes a resume in run.json (a run folder from before run.json existed gets none). Returns a warning
 * when run.json is there but holds no record to add to (the run goes on; the resume is not recorded).
 */
export function recordResume(runDir: string): string | undefined {
  const p = join(runDir, "run.json");
  if (!existsSync(p)) return undefined;
  const unrecorded = (why: string) => `${p} ${why}; this resume is not recorded in it (restore it from a copy to keep the run's record)`;
  let rec: RunRecord;
  let text = "";
  try {
    text = readTextFile(p, MAX_RUN_FILE_BYTES);
    rec = JSON.parse(text) as RunRecord;
  } catch (e) {
    // A damaged run.json is a record, not a state: the run itself does not depend on it. But a
    // folder or a pipe in its place would drop the resume's record unsaid (tcod run checks first).
    const j = jsonSyntaxError(e, text);
    if (j) return unrecorded(`is not JSON (${j.message} at line ${j.line}, column ${j.column})`);
    const r = fileReadError(e);
    if (r.kind === "folder" || r.kind === "special") {
      throw new RunFolderError(`cannot record the resume in ${p}: ${r.message}`, { where: { file: p }, hint: `Move ${p} out of the way, then resume again.` });
    }
    return unrecorded(`cannot be read (${r.message})`);
  }
  if (rec === null || typeof rec !== "object" || Array.isArray(rec)) return unrecorded("holds no run record (not a JSON object)");
  rec.resumes = [...(Array.isArray(rec.resumes) ? rec.resumes : []), { at: new Date().toISOString(), argv: process.argv.slice(2) }];
  // Replaced, not rewritten in place: a kill mid-write leaves the previous record whole.
  try {
    writeFileAtomicSync(p, JSON.stringify(rec, null, 2) + "\n");
  } catch {
    // A record, not a state: the run does not depend on it (the previous record stays whole).
    return `${p} cannot be rewritten; this resume is not recorded in it`;
  }
  return undefined;
}

/** The project's git commit and whether tracked files differ from it; nothing outside a repository. */
function gitState(dir: string): { git?: RunRecord["git"] } {
  const git = (...args: string[]) => execFileSync("git", args, { cwd: dir, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"], timeout: 10_000 }).trim();
  try {
    const root = git("rev-parse", "--show-toplevel");
    const commit = git("rev-parse", "HEAD");
    const dirty = git("status", "--porcelain", "--untracked-files=no").length > 0;
    return { git: { commit, dirty, root } };
  } catch {
    return {};
  }
}

const sha256 = (text: string) => createHash("sha256").update(text).digest("hex");

function readIfSame(path: string, sha: string): string | undefined {
  try {
    const text = readFileSync(path, "utf8");
    return sha256(text) === sha ? text : undefined;
  } catch {
    return undefined;
  }
}

/** RUN_DIR/source/<path>, refusing names that would leave it (`npm:` becomes a folder name). */
function safeSourcePath(runDir: string, path: string): string | undefined {
  const base = resolve(runDir, "source");
  const target = resolve(base, normalize(path.replace(/^npm:/, "npm/")));
  return target.startsWith(base + sep) ? target : undefined;
}
