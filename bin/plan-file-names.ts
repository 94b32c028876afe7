/**
 * The file and folder names of a set of plans written side by side (`tcod compile`, a sweep's plans/
 * and run folders, `plot --out`, `export`). `safeFileName` maps characters a file name cannot hold to
 * `_`, so two points may map to one name (`nm="x/y"` and `nm="x_y"` both to `c@nm=_x_y_`); written
 * one after the other, the second would overwrite the first. Every name that another shares (compared
 * without case, as macOS and Windows file systems do) gets a short hash of the exact plan name, so the
 * names are distinct; a name no other shares is today's name, so existing folders keep theirs. A
 * plan's TypeScript extension bundle is named after its plan file (`withBundleBeside`), so two such
 * plans never share one bundle either.
 */
import { createHash } from "node:crypto";
import { safeFileName } from "../compiler/index.js";
import type { Plan } from "../plan/schema.js";

/** One file name per plan name, in order; equal plan names get equal file names. */
export function planFileNames(names: readonly string[]): string[] {
  const key = (s: string) => s.toLowerCase();
  const count = new Map<string, Set<string>>();
  for (const n of names) {
    const k = key(safeFileName(n));
    if (!count.has(k)) count.set(k, new Set());
    count.get(k)!.add(n);
  }
  const out = names.map((n) => {
    const safe = safeFileName(n);
    return count.get(key(safe))!.size > 1 ? `${safe}-${hash(n, 8)}` : safe;
  });
  // A hashed name could, in theory, equal another plan's plain name: then the full hash is used.
  const owner = new Map<string, string>();
  return out.map((f, i) => {
    const prev = owner.get(key(f));
    if (prev !== undefined && prev !== names[i]) f = `${safeFileName(names[i]!)}-${hash(names[i]!, 64)}`;
    owner.set(key(f), names[i]!);
    return f;
  });
}

const hash = (s: string, n: number) => createHash("sha256").update(s).digest("hex").slice(0, n);

/** The bundle file beside the plan file FILE.plan.json: FILE.plan.bundle.mjs (plan/schema.ts's pattern takes every planFileNames name). */
export const bundleFileName = (fileName: string): string => `${fileName}.plan.bundle.mjs`;

/**
 * The plan as it is written to `fileName`.plan.json: its extension bundle, if it has one, named after
 * that file rather than after the plan's name (the compiler's `safeFileName(name)`, which two plans
 * may share).
 */
export function withBundleBeside(plan: Plan, fileName: string): Plan {
  return plan.extensions ? { ...plan, extensions: { ...plan.extensions, bundle: bundleFileName(fileName) } } : plan;
}
