/**
 * What OmegaConf makes of a value given to a field of Trinity-RFT's config dataclasses (fields.ts
 * types), as its nodes convert it when Trinity merges the config into its schema, and Python's str()
 * of the result, which an interpolation inside a longer string puts there. Checked against Trinity's
 * own load_config in test/trinity/omegaconf-fidelity.test.ts.
 */
import { closestName } from "../../plan/did-you-mean.js";
import { ENUMS, type EnumName, type FieldType, type Json } from "./fields.js";
import { pythonFloatRepr } from "./yaml-scalars.js";

/** What Python's int(s) reads (OmegaConf's IntegerNode converts a string so): digits, a sign, '_' between digits, spaces around. */
export function pythonInt(s: string): number | undefined {
  return /^\s*[-+]?\d(?:_?\d)*\s*$/.test(s) ? Number(s.replace(/_/g, "").trim()) : undefined;
}

/** What Python's float(s) reads (OmegaConf's FloatNode converts a string so), inf and nan included. */
export function pythonFloat(s: string): number | undefined {
  const t = s.trim();
  if (/^[-+]?(?:inf|infinity)$/i.test(t)) return t.startsWith("-") ? -Infinity : Infinity;
  if (/^[-+]?nan$/i.test(t)) return NaN;
  const digits = String.raw`\d(?:_?\d)*`;
  return new RegExp(`^[-+]?(?:(?:${digits})?\\.${digits}|${digits}\\.?)(?:[eE][-+]?${digits})?$`).test(t) ? Number(t.replace(/_/g, "")) : undefined;
}

/** An enum's member names and aliases, as a message lists them: "nccl, checkpoint, memory (or online, offline)". */
export function enumChoices(name: EnumName): string {
  const e = ENUMS[name];
  const aliases = Object.keys(e.aliases);
  return `${e.members.join(", ")}${aliases.length ? ` (or ${aliases.join(", ")})` : ""}`;
}

/**
 * The member of the enum `name` that OmegaConf's EnumNode makes of the string `s`: a prefix
 * `Name.` dropped, then Trinity's CaseInsensitiveEnumMeta: an alias, then the member of that name
 * in any case (whitespace is not trimmed). Undefined when none.
 */
export function enumMember(name: EnumName, s: string): string | undefined {
  const e = ENUMS[name];
  const bare = s.startsWith(`${name}.`) ? s.slice(name.length + 1) : s;
  const lower = bare.toLowerCase();
  const m = (e.aliases as Readonly<Record<string, string>>)[lower] ?? lower;
  return (e.members as readonly string[]).includes(m) ? m : undefined;
}

/** A value a field of `type` holds, or why OmegaConf refuses to convert what it was given. */
export type Converted = { ok: true; value: Json } | { ok: false; why: string; hint: string };

/**
 * What OmegaConf's node for a field of `type` makes of `v`, a value as YAML 1.1 read it (`float`:
 * the YAML read it as a float, `16.0` and `1e2` included, which an int field refuses though it is
 * whole). A list, a dict, Any or a section is handed on as it is. Null is the caller's (Field.nullable).
 */
export function convert(type: FieldType, v: Json, float: boolean): Converted {
  const shown = typeof v === "string" ? JSON.stringify(v) : typeof v === "number" && float ? pythonFloatRepr(v) : typeof v === "boolean" ? (v ? "True" : "False") : JSON.stringify(v);
  const kind = Array.isArray(v) ? "a list" : v !== null && typeof v === "object" ? "a mapping" : typeof v === "boolean" ? "a boolean" : typeof v === "number" ? (float ? "a float" : "an integer") : "a string";
  const refuse = (why: string, hint: string): Converted => ({ ok: false, why: `${kind}, ${shown}: ${why}`, hint });
  if (typeof type === "object" && "enum" in type) {
    const name = type.enum;
    const choices = enumChoices(name);
    if (typeof v !== "string") {
      return refuse(`Trinity-RFT's ${name} takes a name of its members, as a string (${choices}); OmegaConf refuses ${kind} there${typeof v === "number" && !float ? " (Trinity's enum lower-cases what it is given: \"'int' object has no attribute 'lower'\")" : ""}, and Trinity refuses the config`, `Write one of ${choices}.`);
    }
    const m = enumMember(name, v);
    if (m !== undefined) return { ok: true, value: m };
    const e = ENUMS[name];
    const close = closestName(v.trim(), [...e.members, ...Object.keys(e.aliases)]);
    return refuse(`not a member of Trinity-RFT's ${name} (${choices}, in any case): OmegaConf refuses it ("Invalid value"), and Trinity refuses the config`, `${close ? `Did you mean '${close}'? ` : ""}Write one of ${choices}.`);
  }
  if (type === "int") {
    if (typeof v === "number" && !float) return { ok: true, value: v };
    if (typeof v === "string") { const n = pythonInt(v); if (n !== undefined) return { ok: true, value: n }; }
    return refuse(`Trinity-RFT's field is an int, and OmegaConf refuses it ("could not be converted to Integer"${typeof v === "string" ? ": Python's int() refuses it" : ""})`, "Write a whole number without a decimal point or exponent.");
  }
  if (type === "float") {
    if (typeof v === "number") return { ok: true, value: v };
    if (typeof v === "string") { const n = pythonFloat(v); if (n !== undefined) return { ok: true, value: n }; }
    return refuse(`Trinity-RFT's field is a float, and OmegaConf refuses it ("could not be converted to Float"${typeof v === "string" ? ": Python's float() refuses it" : ""})`, "Write a number.");
  }
  if (type === "bool") {
    if (typeof v === "boolean") return { ok: true, value: v };
    if (typeof v === "number" && !float) return { ok: true, value: v !== 0 };
    if (typeof v === "string") {
      const i = pythonInt(v);
      if (i !== undefined) return { ok: true, value: i !== 0 };
      if (/^(?:yes|y|on|true)$/i.test(v)) return { ok: true, value: true };
      if (/^(?:no|n|off|false)$/i.test(v)) return { ok: true, value: false };
    }
    return refuse("Trinity-RFT's field is a bool, and OmegaConf refuses it (\"is not a valid bool\")", "Write true or false.");
  }
  if (type === "str") {
    if (Array.isArray(v) || (v !== null && typeof v === "object")) return refuse("Trinity-RFT's field is a string, and OmegaConf refuses a list or mapping there (\"Cannot convert … to string\")", "Write a string.");
    return { ok: true, value: v };
  }
  const isList = Array.isArray(v), isDict = !isList && v !== null && typeof v === "object";
  if (type === "list" && !isList) return refuse("Trinity-RFT's field is a list, and OmegaConf refuses anything else there", "Write a list ([…]).");
  if (type === "dict" && !isDict) return refuse("Trinity-RFT's field is a mapping, and OmegaConf refuses anything else there", "Write a mapping ({…}).");
  return { ok: true, value: v };
}

/**
 * Python's str() of `v`, a value a field of `type` holds (convert's): an int's digits (`digits`
 * where the caller has them exactly, past 2^53), a float's repr (`1e-06`, `5.0`), True/False, None,
 * a string as it is, an enum member as `SyncMethod.NCCL`. Undefined for a list or mapping (Python's
 * repr of a container, which tcod does not write).
 */
export function pythonStrOf(type: FieldType, v: Json, digits?: string): string | undefined {
  if (v === null) return "None";
  if (typeof type === "object" && "enum" in type && typeof v === "string") return `${type.enum}.${v.toUpperCase()}`;
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "number") return type === "float" || !Number.isInteger(v) ? pythonFloatRepr(v) : digits ?? String(v);
  if (typeof v === "string") return v;
  return undefined;
}
