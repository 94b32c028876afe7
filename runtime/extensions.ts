/**
 * TypeScript extensions at run time: the plan's bundle (NAME.plan.bundle.mjs, written by the
 * compiler with esbuild) is an ES module exporting `functions = { "file.ts#name": (...numbers) => number }`.
 * Each function the plan names is looked up there and wrapped so that a throw or a result that is
 * not a number becomes an ExprError naming the function (a user error), never a crash.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { UserError } from "../plan/errors.js";
import { ExprError, type ExtFns } from "../plan/expr.js";
import type { Plan } from "../plan/schema.js";

/** A plan's TypeScript extension bundle is missing or does not load (TC7010). */
export class ExtensionError extends UserError {
  readonly code = "TC7010";
}

/** Writes `bundle` to RUN_DIR/<plan.extensions.bundle>, imports it and returns the plan's functions. */
export async function loadExtensions(plan: Plan, bundle: string | undefined, runDir: string): Promise<ExtFns> {
  if (!plan.extensions) return {};
  const file = plan.extensions.bundle;
  if (bundle === undefined) throw new ExtensionError(`the plan uses TypeScript extensions but its bundle ${file} is missing (compile the .tcod file again, or keep the bundle beside the plan)`);
  mkdirSync(runDir, { recursive: true });
  const path = resolve(runDir, file);
  writeFileSync(path, bundle);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (e) {
    throw new ExtensionError(`extension bundle ${path} does not load: ${(e as Error).message}`);
  }
  const table = mod["functions"];
  if (table === null || typeof table !== "object") throw new ExtensionError(`extension bundle ${path} does not export a \`functions\` table; compile the .tcod file again`);
  const fns: ExtFns = {};
  for (const name of Object.keys(plan.extensions.functions)) {
    const f = Object.hasOwn(table, name) ? (table as Record<string, unknown>)[name] : undefined;
    if (typeof f !== "function") throw new ExtensionError(`extension bundle ${path} has no function ${name}; compile the .tcod file again`);
    fns[name] = guarded(name, f as (...a: number[]) => unknown);
  }
  return fns;
}

function guarded(name: string, f: (...a: number[]) => unknown): (...a: number[]) => number {
  return (...a: number[]) => {
    let v: unknown;
    try {
      v = f(...a);
    } catch (e) {
      throw new ExprError(`TypeScript extension ${name}(${a.join(", ")}) threw: ${e instanceof Error ? e.message : String(e)}`);
    }
    if (typeof v !== "number") throw new ExprError(`TypeScript extension ${name}(${a.join(", ")}) returned ${typeof v}, not a number`);
    return v;
  };
}
