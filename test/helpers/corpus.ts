/**
 * The repository's .tcod files, for tests that run over all of them (the parser, the formatter):
 * the examples, the stdlib, the compiler fixtures and the grammar samples.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";

export const ROOT = join(import.meta.dirname, "../..");

/** Every .tcod file under `dir`, sorted; installed packages (`node_modules`, fixtures of npm imports) are skipped. */
export function tcodFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (e.name === "node_modules") return [];
    const p = join(dir, e.name);
    return e.isDirectory() ? tcodFiles(p) : e.name.endsWith(".tcod") ? [p] : [];
  }).sort();
}

/** The folders of the corpus, relative to the repository root. */
export const CORPUS_DIRS = ["examples", "stdlib", "test/fixtures", "test/grammar/samples"] as const;

/** The corpus: every .tcod file of CORPUS_DIRS, as absolute paths. */
export function tcodCorpus(): string[] {
  return CORPUS_DIRS.flatMap((d) => tcodFiles(join(ROOT, d)));
}
