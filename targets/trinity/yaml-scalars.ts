/**
 * A config's plain scalars as Trinity-RFT reads them. OmegaConf.load (trinity/common/config.py
 * load_config) parses with PyYAML's SafeLoader, which is YAML 1.1 — `yes`/`no`/`on`/`off` are
 * booleans, `010` is octal (8), `0b101` binary (5), `1_000` is 1000, `1:30` base 60 (90) — as
 * OmegaConf extends it (omegaconf/_utils.py get_yaml_loader): a float without a dot (`2e-6`,
 * `1.0e6`) is a float too, and a date is a string. The yaml package's default schema is YAML 1.2's
 * core, which reads each of those otherwise, and its own YAML 1.1 schema is not PyYAML's either
 * (`y`/`n` are booleans to it, `.5e6` a number), so the tags here are PyYAML's implicit resolvers,
 * in PyYAML's order, with OmegaConf's float resolver after them and no timestamp. An explicitly
 * tagged scalar (`!!float 1`) is what SafeLoader's constructor makes of it (constructTagged). The
 * export writes with the same readings (pyyamlQuoting): a string PyYAML would read otherwise is quoted.
 */
import type { ScalarTag, Tags } from "yaml";

/** What a plain scalar is to OmegaConf.load, and in which written form where that matters. */
export type PlainReading =
  | { type: "bool"; value: boolean }
  | { type: "int"; value: number; form: "decimal" | "octal" | "binary" | "hex" | "base60" }
  | { type: "float"; value: number; form: "decimal" | "base60" }
  | { type: "null"; value: null }
  | { type: "str"; value: string }
  /** `=`: PyYAML resolves it to tag:yaml.org,2002:value, which SafeLoader cannot construct. */
  | { type: "value" }
  /** Matched as a number, but PyYAML's constructor fails on it (`0b_`: int('', 2)). */
  | { type: "broken"; as: "int" | "float" };

// PyYAML 6's resolver.py, in its order (re.X patterns written without their spaces).
const BOOL = /^(?:yes|Yes|YES|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF)$/;
const FLOAT = /^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+][0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+][0-9]+)?|[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;
const INT = /^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+|[-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+)$/;
const NULL = /^(?:~|null|Null|NULL|)$/;
const VALUE = /^=$/;
// OmegaConf 2.3's float resolver, added after PyYAML's (so an int is still an int).
const OMEGACONF_FLOAT = /^(?:[-+]?[0-9]+(?:_[0-9]+)*\.[0-9_]*(?:[eE][-+]?[0-9]+)?|[-+]?[0-9]+(?:_[0-9]+)*(?:[eE][-+]?[0-9]+)|\.[0-9]+(?:_[0-9]+)*(?:[eE][-+][0-9]+)?|[-+]?[0-9]+(?:_[0-9]+)*(?::[0-5]?[0-9])+\.[0-9_]*|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$/;

/** PyYAML's construct_yaml_int. */
function constructInt(text: string): PlainReading {
  let v = text.replace(/_/g, "");
  const sign = v[0] === "-" ? -1 : 1;
  if (v[0] === "-" || v[0] === "+") v = v.slice(1);
  const parse = (digits: string, base: number, form: "decimal" | "octal" | "binary" | "hex"): PlainReading => {
    const ok = { 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]+$/ }[base]!;
    return ok.test(digits) ? { type: "int", value: sign * parseInt(digits, base), form } : { type: "broken", as: "int" };
  };
  if (v === "0") return { type: "int", value: 0, form: "decimal" };
  if (v.startsWith("0b")) return parse(v.slice(2), 2, "binary");
  if (v.startsWith("0x")) return parse(v.slice(2), 16, "hex");
  if (v[0] === "0") return parse(v, 8, "octal");
  if (v.includes(":")) return { type: "int", value: sign * sexagesimal(v.split(":").map((p) => parseInt(p, 10))), form: "base60" };
  return parse(v, 10, "decimal");
}

/** PyYAML's construct_yaml_float. */
function constructFloat(text: string): PlainReading {
  let v = text.replace(/_/g, "").toLowerCase();
  const sign = v[0] === "-" ? -1 : 1;
  if (v[0] === "-" || v[0] === "+") v = v.slice(1);
  if (v === ".inf") return { type: "float", value: sign * Infinity, form: "decimal" };
  if (v === ".nan") return { type: "float", value: NaN, form: "decimal" };
  if (v.includes(":")) return { type: "float", value: sign * sexagesimal(v.split(":").map(Number)), form: "base60" };
  const n = Number(v);
  return v === "" || v === "." || Number.isNaN(n) ? { type: "broken", as: "float" } : { type: "float", value: sign * n, form: "decimal" };
}

/** [1, 30] → 90: the last part the units, each before it 60 times the next. */
function sexagesimal(parts: number[]): number {
  return parts.reduce((acc, p) => acc * 60 + p, 0);
}

/** What OmegaConf.load makes of the plain (unquoted) scalar `text`. */
export function readPlain(text: string): PlainReading {
  if (BOOL.test(text)) return { type: "bool", value: /^(?:yes|true|on)$/i.test(text) };
  if (FLOAT.test(text)) return constructFloat(text);
  if (INT.test(text)) return constructInt(text);
  if (NULL.test(text)) return { type: "null", value: null };
  if (VALUE.test(text)) return { type: "value" };
  if (OMEGACONF_FLOAT.test(text)) return constructFloat(text);
  return { type: "str", value: text };
}

/** Python's int(s, base) (after YAML removed '_'): whitespace around, a sign, the base's prefix (int('0o17', 8)), its digits. */
function pythonInt(s: string, base: 2 | 8 | 10 | 16): number | undefined {
  const digits = { 2: "[01]+", 8: "[0-7]+", 10: "[0-9]+", 16: "[0-9a-fA-F]+" }[base];
  const prefix = { 2: "(?:0[bB])?", 8: "(?:0[oO])?", 10: "", 16: "(?:0[xX])?" }[base];
  const m = new RegExp(`^\\s*([-+]?)${prefix}(${digits})\\s*$`).exec(s);
  return m ? (m[1] === "-" ? -1 : 1) * parseInt(m[2]!, base) : undefined;
}

/** Python's float(s) (after YAML removed '_' and lowercased it): whitespace around, a sign, digits, inf, infinity, nan. */
function pythonFloat(s: string): number | undefined {
  const m = /^\s*([-+]?)(inf|infinity|nan|(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[-+]?[0-9]+)?)\s*$/.exec(s);
  if (!m) return undefined;
  const sign = m[1] === "-" ? -1 : 1;
  return m[2] === "nan" ? NaN : m[2]!.startsWith("inf") ? sign * Infinity : sign * Number(m[2]);
}

/** The standard scalar tags whose SafeLoader constructor constructTagged follows (`!!str` is the text itself). */
export type ScalarTagName = "null" | "bool" | "int" | "float";

/**
 * What PyYAML's SafeLoader constructs from the scalar `text` under an explicit tag (`!!float 1` is
 * 1.0, `!!int "3"` is 3, `!!bool yes` True, `!!null x` None), or why it cannot (a ValueError, a
 * KeyError), as its construct_yaml_* functions do it: an explicit tag skips the implicit resolvers,
 * so the text need not look like the type (`!!int " 3 "`, `!!int "0o17"` and `!!float infinity`
 * are taken, as Python's int() and float() take them).
 */
export function constructTagged(tag: ScalarTagName, text: string): PlainReading | { type: "error"; why: string } {
  if (tag === "null") return { type: "null", value: null };
  if (tag === "bool") {
    const v = ({ yes: true, no: false, true: true, false: false, on: true, off: false } as Record<string, boolean>)[text.toLowerCase()];
    return v === undefined ? { type: "error", why: "!!bool takes yes, no, true, false, on or off (any case)" } : { type: "bool", value: v };
  }
  let v = text.replace(/_/g, "");
  if (tag === "float") v = v.toLowerCase();
  if (v === "") return { type: "error", why: "the value is empty" };
  const sign = v[0] === "-" ? -1 : 1;
  if (v[0] === "-" || v[0] === "+") v = v.slice(1);
  const fail = { type: "error" as const, why: `Python's ${tag}() refuses ${JSON.stringify(text)}` };
  if (tag === "float") {
    if (v === ".inf") return { type: "float", value: sign * Infinity, form: "decimal" };
    if (v === ".nan") return { type: "float", value: NaN, form: "decimal" };
    const parts = v.split(":").map(pythonFloat);
    if (parts.some((p) => p === undefined)) return fail;
    return { type: "float", value: sign * sexagesimal(parts as number[]), form: parts.length > 1 ? "base60" : "decimal" };
  }
  const int = (n: number | undefined, form: "decimal" | "octal" | "binary" | "hex" | "base60"): PlainReading | { type: "error"; why: string } => n === undefined ? fail : { type: "int", value: sign * n, form };
  if (v === "0") return int(0, "decimal");
  if (v.startsWith("0b")) return int(pythonInt(v.slice(2), 2), "binary");
  if (v.startsWith("0x")) return int(pythonInt(v.slice(2), 16), "hex");
  if (v[0] === "0") return int(pythonInt(v, 8), "octal");
  if (v.includes(":")) {
    const parts = v.split(":").map((p) => pythonInt(p, 10));
    return int(parts.some((p) => p === undefined) ? undefined : sexagesimal(parts as number[]), "base60");
  }
  return int(pythonInt(v, 10), "decimal");
}

/** Python's repr(float) (what str() gives): the shortest digits that read back, in exponent form below 1e-4 and from 1e16 (`1e-06`, `1e+16`), else with a `.0` if whole. */
export function pythonFloatRepr(n: number): string {
  if (Number.isNaN(n)) return "nan";
  if (!Number.isFinite(n)) return n > 0 ? "inf" : "-inf";
  if (n === 0) return Object.is(n, -0) ? "-0.0" : "0.0";
  const [mantissa, exp] = Math.abs(n).toExponential().split("e") as [string, string];
  const digits = mantissa.replace(".", "");
  const e = Number(exp);
  const sign = n < 0 ? "-" : "";
  if (e < -4 || e >= 16) return `${sign}${digits[0]}${digits.length > 1 ? `.${digits.slice(1)}` : ""}e${e < 0 ? "-" : "+"}${String(Math.abs(e)).padStart(2, "0")}`;
  if (e < 0) return `${sign}0.${"0".repeat(-e - 1)}${digits}`;
  const whole = digits.slice(0, e + 1).padEnd(e + 1, "0");
  return `${sign}${whole}.${digits.slice(e + 1) || "0"}`;
}

/**
 * The string Python's str() makes of a boolean or number as YAML read it (`text` as written): what a
 * `str` field of Trinity's dataclasses holds when given one (OmegaConf's StringNode converts with
 * str(value)). `True`, `123` (an int's digits, however long), `1.0`, `1e-06`; undefined for any other reading.
 */
export function pythonStr(r: PlainReading, text: string): string | undefined {
  if (r.type === "bool") return r.value ? "True" : "False";
  if (r.type === "int") {
    const t = text.replace(/_/g, "").trim();
    return r.form === "decimal" && /^[-+]?[0-9]+$/.test(t) ? BigInt(t).toString() : String(r.value);
  }
  if (r.type === "float") return pythonFloatRepr(r.value);
  return undefined;
}

/** Which of PyYAML's resolvers a plain scalar matches first (readPlain's order); a tag per resolver. */
const RESOLVERS: [name: string, test: RegExp][] = [
  ["bool", BOOL], ["float", FLOAT], ["int", INT], ["null", NULL], ["value", VALUE], ["float", OMEGACONF_FLOAT],
];

/**
 * The `customTags` of a parse that reads plain scalars as OmegaConf.load does: the yaml package's
 * mapping, sequence and string tags, then one tag per resolver above, each resolving through
 * readPlain. What PyYAML cannot construct (`=`, `0b_`) is a YAML error, as it is to PyYAML.
 */
export function omegaconfTags(tags: Tags): Tags {
  const base = tags.filter((t) => typeof t !== "string" && ["tag:yaml.org,2002:map", "tag:yaml.org,2002:seq", "tag:yaml.org,2002:str"].includes(t.tag));
  const scalar = ([name, test]: [string, RegExp]): ScalarTag => ({
    tag: `tag:yaml.org,2002:${name}`,
    default: true,
    test,
    // Only for writing YAML, which nothing does with a config read so.
    identify: () => false,
    resolve(text, onError) {
      const r = readPlain(text);
      if (r.type === "value") { onError(VALUE_MESSAGE); return text; }
      if (r.type === "broken") { onError(`PyYAML reads ${text} as ${r.as === "int" ? "an integer" : "a float"} and cannot convert it (a ValueError): Trinity-RFT (OmegaConf.load) refuses the file; quote it to mean the string, or write the number out`); return text; }
      return r.type === "str" ? text : r.value;
    },
  });
  // An explicit tag (`!!float 1`): no default and no test, so the yaml package takes it by name only.
  const tagged = (name: ScalarTagName): ScalarTag => ({
    tag: `tag:yaml.org,2002:${name}`,
    identify: () => false,
    resolve(text, onError) {
      const r = constructTagged(name, text);
      if (r.type === "error") { onError(`PyYAML cannot construct !!${name} ${JSON.stringify(text)} (${r.why}): Trinity-RFT (OmegaConf.load) refuses the file; remove the tag, or give a value it takes`); return text; }
      return r.type === "str" || r.type === "value" || r.type === "broken" ? text : r.value;
    },
  });
  return [...base, ...(["null", "bool", "int", "float"] as const).map(tagged), ...RESOLVERS.map(scalar)];
}

export const VALUE_MESSAGE = "a plain `=` is YAML 1.1's value key to PyYAML (tag:yaml.org,2002:value), which it cannot construct: Trinity-RFT (OmegaConf.load) refuses the file; quote it ('=') to mean the string";

/**
 * Plain text PyYAML does not read back as the same string, beyond what the yaml package's own
 * YAML 1.1 schema quotes: what readPlain reads as anything but that string (`=`, OmegaConf's floats
 * such as `1e5`), `<<` (PyYAML's merge key, which SafeLoader cannot construct as a value), and a tab, NEL (U+0085), U+2028 or U+2029 anywhere (PyYAML ends a plain scalar
 * at a tab and breaks lines at the other three).
 */
const MISREAD_PLAIN = { test: (s: string): boolean => /[\t\u0085\u2028\u2029]/.test(s) || s === "<<" || readPlain(s).type !== "str" };

/**
 * A string holding NEL (U+0085), U+2028 or U+2029, written double-quoted with each of them escaped
 * (`\N`, `\L`, `\P`): PyYAML breaks lines at them, so raw in a single-quoted, plain or block
 * scalar (the yaml package writes them raw everywhere) they would fold to a space or a line feed.
 * The rest is escaped as JSON escapes it, which YAML's double quotes read alike.
 */
const LINE_BREAKING: ScalarTag = {
  tag: "tag:yaml.org,2002:str",
  default: true,
  identify: (v) => typeof v === "string" && /[\u0085\u2028\u2029]/.test(v),
  resolve: (s) => s,
  stringify: (item) => `"${JSON.stringify(String(item.value)).slice(1, -1).replace(/\u0085/g, "\\N").replace(/\u2028/g, "\\L").replace(/\u2029/g, "\\P")}"`,
};

/**
 * The `customTags` of a stringify that writes YAML Trinity's loader reads back as written: the
 * given tags but the merge key's (which would write the string `<<` as a merge key), after
 * LINE_BREAKING and before one that matches (`test`) every plain string PyYAML would misread. The
 * yaml package quotes a string that some default tag but str would match; that tag itself never
 * writes anything (identify is false) and is never used to read.
 */
export function pyyamlQuoting(tags: Tags): Tags {
  return [
    LINE_BREAKING,
    ...tags.filter((t) => typeof t === "string" || t.tag !== "tag:yaml.org,2002:merge"),
    { tag: "tag:yaml.org,2002:pyyaml-misread", default: true, test: MISREAD_PLAIN as RegExp, identify: () => false, resolve: (s: string) => s } as ScalarTag,
  ];
}
