/**
 * TypeScript extensions at run time: the plan's bundle (NAME.plan.bundle.mjs beside NAME.plan.json,
 * built by the compiler with esbuild; `plan.extensions.bundle` names it, a file name the plan schema
 * confines to the plan's folder) is an ES module exporting `functions = { "file.ts#name": (...numbers) => number }`.
 * Each function the plan names is looked up there and wrapped so that a throw (of anything: an Error,
 * a string, undefined, an object without a string form) or a result that is not a number, or is NaN,
 * becomes an ExprError naming the function (a user error), never a crash. ±Infinity passes: the
 * expression around the call may bound it, and every value the runtime uses is checked finite
 * (curriculum-state.ts `finite`, turn-weights.ts). A call is synchronous and has no time limit: a
 * function that never returns stops the run where it is (docs/RUNTIME.md).
 */
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { UserError } from "../plan/errors.js";
import { ExprError, type ExtFns } from "../plan/expr.js";
import type { Plan } from "../plan/schema.js";

/** A plan's TypeScript extension bundle is missing or does not load (TC7010). */
export class ExtensionError extends UserError {
  readonly code = "TC7010";
}

/**
 * Writes `bundle` to RUN_DIR/<plan.extensions.bundle> (unless the file holds it already: a resume
 * rewrites nothing of its folder before the engine has checked it), imports it and returns the
 * plan's functions.
 */
export async function loadExtensions(plan: Plan, bundle: string | undefined, runDir: string): Promise<ExtFns> {
  if (!plan.extensions) return {};
  const file = plan.extensions.bundle;
  if (bundle === undefined) throw new ExtensionError(`the plan uses TypeScript extensions but its bundle ${file} is missing (compile the .tcod file again, or keep the bundle beside the plan)`);
  mkdirSync(runDir, { recursive: true });
  const path = resolve(runDir, file);
  if (!holds(path, bundle)) writeFileSync(path, bundle);
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(path).href)) as Record<string, unknown>;
  } catch (e) {
    throw new ExtensionError(`extension bundle ${path} does not load: it threw${thrown(e)} when imported`, {
      hint: "A module of the extension runs code at import time that fails; fix it (or the value it throws) and compile the .tcod file again.",
    });
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

/** Whether `path` is a file holding `text` (false where it cannot be read: it is then written, or that fails as it would). */
function holds(path: string, text: string): boolean {
  try { return statSync(path).isFile() && readFileSync(path, "utf8") === text; } catch { return false; }
}

function guarded(name: string, f: (...a: number[]) => unknown): (...a: number[]) => number {
  return (...a: number[]) => {
    let v: unknown;
    try {
      v = f(...a);
    } catch (e) {
      throw new ExprError(`TypeScript extension ${name}(${a.join(", ")}) threw${thrown(e)}`);
    }
    if (v instanceof Promise) {
      v.catch(() => undefined); // its rejection, if any, must not surface later as an unhandled one
      throw new ExprError(`TypeScript extension ${name}(${a.join(", ")}) returned a Promise, not a number`, {
        hint: "An extension function is called synchronously: make it a plain (not async) function that returns a number.",
      });
    }
    if (typeof v !== "number") throw new ExprError(`TypeScript extension ${name}(${a.join(", ")}) returned ${typeof v}, not a number`);
    if (Number.isNaN(v)) {
      throw new ExprError(`TypeScript extension ${name}(${a.join(", ")}) returned NaN`, {
        hint: "Guard the arithmetic in the function (a division by 0, a log or sqrt of a negative, a field that is undefined) so it returns a number.",
      });
    }
    return v;
  };
}

/** What an extension threw, in words after "threw", whatever it is (String() itself throws for an object without a prototype). */
export function thrown(e: unknown): string {
  let message: string;
  try {
    message = e instanceof Error ? `: ${e.name === "Error" ? "" : `${e.name}: `}${e.message}` : typeof e === "string" ? ` the string ${JSON.stringify(e)}` : ` a non-Error value: ${String(e)}`;
  } catch {
    message = ` a non-Error value (${typeof e}) that has no string form`;
  }
  return message.length > 500 ? `${message.slice(0, 500)}…` : message;
}
