/**
 * What a run that starts at step 0 in a folder already holding rows does with them: a resume of a
 * folder without a checkpoint (killed before its first one, or `checkpoint/` removed) starts the run
 * again, and would otherwise rewrite metrics.jsonl and episodes.jsonl from nothing, losing rows no
 * checkpoint accounts for. They are renamed, not deleted: RUN_DIR/metrics.jsonl.before-restart-N and
 * RUN_DIR/episodes.jsonl.before-restart-N, one N per restart (the smallest free for both), so the
 * run's readers (`tcod metrics`, `tcod compare`, the report) see only the new run's rows and the old
 * ones stay where a person can read them: `tcod metrics` and `tcod compare` read a set-aside metrics
 * file named as the argument itself (`tcod metrics RUN_DIR/metrics.jsonl.before-restart-1`).
 */
import { lstatSync, readdirSync, renameSync, statSync } from "node:fs";
import { join } from "node:path";
import { fsyncDir } from "./fs-atomic.js";
import { writeErrorOf } from "./write-error.js";

/** The files a start at step 0 would rewrite from nothing. */
export const RESTART_FILES = ["metrics.jsonl", "episodes.jsonl"] as const;

/** The name of a metrics file set aside by a restart: metrics.jsonl.before-restart-N, N ≥ 1. */
export const SET_ASIDE_METRICS = /^metrics\.jsonl\.before-restart-[1-9][0-9]*$/;

/** The set-aside metrics files of a run folder, by N (none where it cannot be listed). */
export function setAsideMetrics(runDir: string): string[] {
  let names: string[];
  try { names = readdirSync(runDir); } catch { return []; }
  const n = (f: string) => Number(f.slice(f.lastIndexOf("-") + 1));
  return names.filter((f) => SET_ASIDE_METRICS.test(f)).sort((a, b) => n(a) - n(b));
}

/** A file moved aside: where it was and where it is now. */
export interface SetAside { from: string; to: string }

/**
 * The files of `runDir` a start at step 0 keeps aside: those of RESTART_FILES that are regular
 * files that are not empty (an empty one, as a run killed before its first row leaves it, holds
 * nothing to keep). Read-only: the sweep asks it before it starts a point again.
 */
export function rowsToKeep(runDir: string): string[] {
  return RESTART_FILES.map((f) => join(runDir, f)).filter((p) => {
    try {
      const st = statSync(p);
      return st.isFile() && st.size > 0;
    } catch {
      return false; // missing, or a link that leads nowhere: nothing to move (the writer reports what it cannot open)
    }
  });
}

/**
 * Renames the files rowsToKeep names to NAME.before-restart-N, N the smallest number free for every
 * one of them; returns what it moved (nothing: an empty list). A rename the machine refuses is TC7015.
 */
export function setAsideForRestart(runDir: string): SetAside[] {
  const keep = rowsToKeep(runDir);
  if (keep.length === 0) return [];
  let n = 1;
  while (RESTART_FILES.some((f) => taken(join(runDir, `${f}.before-restart-${n}`)))) n++;
  const moved = keep.map((from) => ({ from, to: `${from}.before-restart-${n}` }));
  for (const m of moved) {
    try {
      renameSync(m.from, m.to);
    } catch (e) {
      throw writeErrorOf(e, m.to, runDir) ?? e;
    }
  }
  fsyncDir(runDir);
  return moved;
}

/** Whether anything, a link that leads nowhere included, holds the name `path`. */
function taken(path: string): boolean {
  try { lstatSync(path); return true; } catch { return false; }
}
