/**
 * The import's tables of Trinity-RFT's config schema (targets/trinity/import.ts) against the
 * installed Trinity-RFT's own dataclasses (test/trinity/trinity_fields.py: dataclasses.fields and
 * their type hints, from Config down through every field that is a dataclass): NULLABLE, the fields
 * that take null, and DATACLASSES, their keys. The tables are the union over the releases 0.4.1 to
 * 0.6.0, so a field Optional only in another release is allowed, where docs/TRINITY.md says so; and
 * targets/trinity/fields.ts, each field's type and default (test/trinity/trinity_field_types.py).
 * Skipped without a Trinity-RFT venv (TRINITY_PYTHON; CI sets it, to 0.6.0).
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect } from "vitest";
import { FIELDS } from "../../targets/trinity/fields.js";
import { DATACLASSES, NULLABLE } from "../../targets/trinity/import.js";
import { itWithTrinity, TRINITY_PY } from "./real.js";

/**
 * Fields of NULLABLE that the installed release declares but not Optional, because another release
 * does (docs/TRINITY.md, the paragraph on null, names each by the path given here), by the release
 * whose dataclasses the test reads.
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

function installed(): { version: string; fields: Record<string, Record<string, boolean>> } {
  const r = spawnSync(TRINITY_PY, [new URL("./trinity_fields.py", import.meta.url).pathname], { encoding: "utf8" });
  expect(r.status, r.stderr.slice(-2000)).toBe(0);
  const v = spawnSync(TRINITY_PY, ["-c", "import importlib.metadata as m; print(m.version('trinity-rft'))"], { encoding: "utf8" });
  return { version: v.stdout.trim(), fields: JSON.parse(r.stdout) };
}

describe("NULLABLE and DATACLASSES against the installed Trinity-RFT's dataclasses", () => {
  itWithTrinity(["trinity.common.config"])("every field the installed release declares Optional (or Any) is in NULLABLE, and every field of NULLABLE it declares is Optional there or documented as Optional in another release", () => {
    const { version, fields } = installed();
    const elsewhere = OPTIONAL_ELSEWHERE[version] ?? {};
    const missing: string[] = [];
    const notOptional: string[] = [];
    for (const [cls, fs] of Object.entries(fields)) {
      const table = NULLABLE[cls];
      expect(table, `${cls} (Trinity-RFT ${version}) is not in NULLABLE`).toBeDefined();
      for (const [field, optional] of Object.entries(fs)) {
        if (optional && !table!.has(field)) missing.push(`${cls}.${field}`);
        if (!optional && table!.has(field) && !(`${cls}.${field}` in elsewhere)) notOptional.push(`${cls}.${field}`);
      }
    }
    expect(missing, `Optional in Trinity-RFT ${version}, missing from NULLABLE`).toEqual([]);
    expect(notOptional, `in NULLABLE, not Optional in Trinity-RFT ${version} nor documented as Optional in another release`).toEqual([]);
    // Each documented difference is still one (the field is there and not Optional), and is in the docs.
    const docs = readFileSync("docs/TRINITY.md", "utf8").replace(/\s+/g, " ");
    for (const [field, path] of Object.entries(elsewhere)) {
      const [cls, name] = field.split(".") as [string, string];
      expect(fields[cls]?.[name], `${field} in Trinity-RFT ${version}`).toBe(false);
      expect(NULLABLE[cls]!.has(name), field).toBe(true);
      expect(docs, field).toContain(`\`${path}\``);
    }
  });

  itWithTrinity(["trinity.common.config"])("every dataclass and field the installed release has is in DATACLASSES, so the import takes the keys Trinity takes", () => {
    const { version, fields } = installed();
    const unknown = Object.entries(fields).flatMap(([cls, fs]) => Object.keys(fs).filter((f) => !DATACLASSES[cls]?.keys.has(f)).map((f) => `${cls}.${f}`));
    expect(unknown, `fields of Trinity-RFT ${version} missing from DATACLASSES`).toEqual([]);
  });

  itWithTrinity(["trinity.common.config"])("FIELDS has every field's type and default as the installed release declares them (a default that differs between releases, that release's)", () => {
    const v = spawnSync(TRINITY_PY, ["-c", "import importlib.metadata as m; print(m.version('trinity-rft'))"], { encoding: "utf8" });
    const version = v.stdout.trim();
    const r = spawnSync(TRINITY_PY, [new URL("./trinity_field_types.py", import.meta.url).pathname], { encoding: "utf8" });
    expect(r.status, r.stderr.slice(-2000)).toBe(0);
    const fields: Record<string, Record<string, { type: unknown; default: { value?: unknown; section?: true; required?: true } }>> = JSON.parse(r.stdout);
    const wrong: string[] = [];
    for (const [cls, fs] of Object.entries(fields)) {
      for (const [name, want] of Object.entries(fs)) {
        const f = FIELDS[cls]?.[name];
        if (!f) { wrong.push(`${cls}.${name}: not in FIELDS`); continue; }
        if (JSON.stringify(f.type) !== JSON.stringify(want.type)) wrong.push(`${cls}.${name}: type ${JSON.stringify(f.type)}, installed ${JSON.stringify(want.type)}`);
        const d = f.default;
        const have = d.kind === "releases" ? d.values[version] : d.kind === "value" ? d.value : d.kind === "section" ? { section: true } : { required: true };
        const installed = "value" in want.default ? want.default.value : want.default;
        if (JSON.stringify(have) !== JSON.stringify(installed)) wrong.push(`${cls}.${name}: default ${JSON.stringify(have)}, installed ${JSON.stringify(installed)}`);
      }
    }
    expect(wrong, `FIELDS against Trinity-RFT ${version}`).toEqual([]);
  });
});
