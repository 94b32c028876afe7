/**
 * The resolved curriculum of a compiled plan, field by field, as `tcod run --print-config` and
 * `--dry-run` show it: every field of the language (docs/LANGUAGE.md) with its value after `with`,
 * overrides and the sweep point, and where the value came from (or "default").
 */
import { relative } from "node:path";
import { explain } from "../compiler/explain.js";
import { CURRICULUM_FIELDS } from "../compiler/curriculum.js";
import type { CompiledPlan } from "../compiler/index.js";

export interface ResolvedField { field: string; value: string; unit?: string; level?: string; from: string }

export function resolvedFields(c: CompiledPlan, sources: Map<string, string>): ResolvedField[] {
  const describe = (f: string, l: number, col: number) => `${relative(process.cwd(), f) || f}:${l}:${col}`;
  return Object.keys(CURRICULUM_FIELDS).map((field) => {
    const e = explain(c, [field], [], undefined, sources, describe);
    if ("error" in e) return { field, value: "?", from: e.error };
    const set = c.curriculum.fields.has(field);
    return {
      field, value: e.value, ...(e.unit && e.unit !== "number" ? { unit: e.unit } : {}), ...(e.level ? { level: e.level } : {}),
      from: set ? (e.origin[0] ?? "").replace(/\s{2,}.*$/, "") : "default",
    };
  });
}

export function formatConfig(c: CompiledPlan, fields: ResolvedField[]): string {
  const w = Math.max(...fields.map((f) => f.field.length)) + 2;
  const lines = [`// ${c.plan.name}: the resolved curriculum${c.settings.length ? ` (${c.settings.join(", ")})` : ""}`, `curriculum ${c.curriculum.name} {`];
  for (const f of fields) {
    const value = f.value + (f.unit ? `  [${f.unit}]` : "");
    lines.push(`  ${(f.field + ":").padEnd(w)}${value}    // ${f.from}${f.level && f.level !== "const" ? `, ${f.level} level` : ""}`);
  }
  lines.push("}");
  return lines.join("\n") + "\n";
}
