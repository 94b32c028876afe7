/**
 * targets/trinity/fields.ts, the import's one table of Trinity-RFT's config schema, against the
 * installed Trinity-RFT's own dataclasses (test/trinity/trinity_field_types.py: dataclasses.fields and
 * their type hints, from Config down through every field that is a dataclass or a list or mapping of
 * them): the keys (DATACLASSES, derived from it), the fields that take null (`nullable`), the
 * dataclass of a list's or mapping's items (DATACLASSES' nesting), and each field's type and default.
 * The table is the union over the releases 0.4.1 to 0.6.0, so a field Optional only in another
 * release is allowed, where docs/TRINITY.md says so. Skipped without a Trinity-RFT venv
 * (TRINITY_PYTHON; CI sets it, to 0.6.0).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect } from "vitest";
import { DATACLASSES, FIELDS } from "../../targets/trinity/fields.js";
import { itWithTrinity, TRINITY_PY } from "./real.js";

/**
 * Fields that take null in fields.ts that the installed release declares but not Optional, because
 * another release does (docs/TRINITY.md, the paragraph on null, names each by the path given here),
 * by the release whose dataclasses the test reads.
 */
const OPTIONAL_ELSEWHERE: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "0.6.0": {
    "ClusterConfig.node_num": "cluster.node_num",
    "ClusterConfig.gpu_per_node": "gpu_per_node",
    "DataProcessorConfig.experience_pipeline": "data_processor.experience_pipeline",
    "TrainerConfig.max_checkpoints_to_keep": "trainer.max_checkpoints_to_keep",
    "InferenceModelConfig.lora_kwargs": "lora_kwargs",
  },
};

interface InstalledField { type: unknown; default: { value?: unknown; section?: true; required?: true }; optional: boolean; items: string | null; itemType: string | null }

function installed(): { version: string; fields: Record<string, Record<string, InstalledField>> } {
  const r = spawnSync(TRINITY_PY, [new URL("./trinity_field_types.py", import.meta.url).pathname], { encoding: "utf8" });
  expect(r.status, r.stderr.slice(-2000)).toBe(0);
  const v = spawnSync(TRINITY_PY, ["-c", "import importlib.metadata as m; print(m.version('trinity-rft'))"], { encoding: "utf8" });
  return { version: v.stdout.trim(), fields: JSON.parse(r.stdout) };
}

describe("fields.ts against the installed Trinity-RFT's dataclasses", () => {
  itWithTrinity(["trinity.common.config"])("every field the installed release declares Optional (or Any) takes null, and every field that takes null is Optional there or documented as Optional in another release", () => {
    const { version, fields } = installed();
    const elsewhere = OPTIONAL_ELSEWHERE[version] ?? {};
    const missing: string[] = [];
    const notOptional: string[] = [];
    for (const [cls, fs] of Object.entries(fields)) {
      expect(FIELDS[cls], `${cls} (Trinity-RFT ${version}) is not in FIELDS`).toBeDefined();
      for (const [field, { optional }] of Object.entries(fs)) {
        const nullable = FIELDS[cls]![field]?.nullable;
        if (optional && nullable === false) missing.push(`${cls}.${field}`);
        if (!optional && nullable && !(`${cls}.${field}` in elsewhere)) notOptional.push(`${cls}.${field}`);
      }
    }
    expect(missing, `Optional in Trinity-RFT ${version}, not nullable in fields.ts`).toEqual([]);
    expect(notOptional, `nullable in fields.ts, not Optional in Trinity-RFT ${version} nor documented as Optional in another release`).toEqual([]);
    // Each documented difference is still one (the field is there and not Optional), and is in the docs.
    const docs = readFileSync("docs/TRINITY.md", "utf8").replace(/\s+/g, " ");
    for (const [field, path] of Object.entries(elsewhere)) {
      const [cls, name] = field.split(".") as [string, string];
      expect(fields[cls]?.[name]?.optional, `${field} in Trinity-RFT ${version}`).toBe(false);
      expect(FIELDS[cls]![name]!.nullable, field).toBe(true);
      expect(docs, field).toContain(`\`${path}\``);
    }
  });

  itWithTrinity(["trinity.common.config"])("every dataclass and field the installed release has is in DATACLASSES, with the same nesting, so the import takes the keys Trinity takes and looks where Trinity looks", () => {
    const { version, fields } = installed();
    const unknown = Object.entries(fields).flatMap(([cls, fs]) => Object.keys(fs).filter((f) => !DATACLASSES[cls]?.keys.has(f)).map((f) => `${cls}.${f}`));
    expect(unknown, `fields of Trinity-RFT ${version} missing from DATACLASSES`).toEqual([]);
    const nesting = (cls: string, f: string, want: InstalledField): string | undefined => {
      const inner = typeof want.type === "object" && want.type !== null && "section" in want.type ? ["one", (want.type as { section: string }).section]
        : want.items !== null ? [want.type === "list" ? "list" : "map", want.items] : undefined;
      const have = DATACLASSES[cls]!.nested.find(([field]) => field === f);
      return JSON.stringify(have?.slice(1)) === JSON.stringify(inner) ? undefined : `${cls}.${f}: ${JSON.stringify(have?.slice(1))}, installed ${JSON.stringify(inner)}`;
    };
    const wrong = Object.entries(fields).flatMap(([cls, fs]) => Object.entries(fs).flatMap(([f, want]) => nesting(cls, f, want) ?? []));
    expect(wrong, `DATACLASSES' nesting against Trinity-RFT ${version}`).toEqual([]);
  });

  itWithTrinity(["trinity.common.config"])("FIELDS has every field's type and default as the installed release declares them (a default that differs between releases, that release's)", () => {
    const { version, fields } = installed();
    const wrong: string[] = [];
    for (const [cls, fs] of Object.entries(fields)) {
      for (const [name, want] of Object.entries(fs)) {
        const f = FIELDS[cls]?.[name];
        if (!f) { wrong.push(`${cls}.${name}: not in FIELDS`); continue; }
        if (JSON.stringify(f.type) !== JSON.stringify(want.type)) wrong.push(`${cls}.${name}: type ${JSON.stringify(f.type)}, installed ${JSON.stringify(want.type)}`);
        if ((f.items ?? null) !== want.items) wrong.push(`${cls}.${name}: items ${f.items}, installed ${want.items}`);
        if ((f.itemType ?? null) !== want.itemType) wrong.push(`${cls}.${name}: item type ${f.itemType}, installed ${want.itemType}`);
        const d = f.default;
        const have = d.kind === "releases" ? d.values[version] : d.kind === "value" ? d.value : d.kind === "section" ? { section: true } : { required: true };
        const installed = "value" in want.default ? want.default.value : want.default;
        if (JSON.stringify(have) !== JSON.stringify(installed)) wrong.push(`${cls}.${name}: default ${JSON.stringify(have)}, installed ${JSON.stringify(installed)}`);
      }
    }
    expect(wrong, `FIELDS against Trinity-RFT ${version}`).toEqual([]);
  });
});
