/**
 * Files tcod ships beside its code (the stdlib, the Python worker and bridges, the Trinity plugin
 * templates, the W&B sink script): found by walking up from this module to the package root, so the
 * same lookup works from the source tree (plan/…) and from the bundle (dist/, dist/chunks/…), and
 * never depends on the current directory.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** This module's folder: `import.meta.dirname` where Node.js has it (20.11 on), without a URL to parse. */
const moduleDir = (): string => import.meta.dirname ?? dirname(fileURLToPath(import.meta.url));

/**
 * The absolute path of `relative` (e.g. "worker/tcod_worker/__init__.py") under the nearest folder
 * above `from` that holds both a package.json and that path; undefined when none does.
 */
export function packageFile(relative: string, from = moduleDir()): string | undefined {
  for (let dir = from; ; dir = dirname(dir)) {
    const candidate = join(dir, relative);
    if (existsSync(candidate) && existsSync(join(dir, "package.json"))) return candidate;
    if (dirname(dir) === dir) return undefined;
  }
}
