/**
 * The `--plugin-dir` of a Trinity export: the Python templates beside this file plus
 * `tcod_runtime/spec.json`, the part of the plan the plugin evaluates (expression trees as data).
 *
 * Layout (Trinity loads every top-level `*.py` of a plugin dir; `tcod_runtime/` is a package the
 * entry files import, so it is not loaded as a plugin itself):
 *   tcod_workflow.py       registers the workflow (when the plan needs one)
 *   tcod_advantage.py      registers the advantage function (when the plan needs one)
 *   tcod_runtime/core.py   expression evaluator, pacing and signals in pure Python
 *   tcod_runtime/ranges.py the range checks: spec.json's constants on load (TC7001), schedule values at run time (TC7005)
 *   tcod_runtime/range_table.py  plan/ranges.ts's table, rendered from it here (range-table.ts)
 *   tcod_runtime/spec.json
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { packageFile } from "../../../plan/package-files.js";
import { renderRangeTable } from "./range-table.js";
import type { ExprDef, ValueRef } from "../../../plan/expr.js";
import type { EpisodeSemantics } from "../../../plan/env-semantics.js";
import type { AdaptiveDepth, AdvantageTerm, Aggregate, AgentFormat } from "../../../plan/schema.js";

export interface PluginSpec {
  schema: "tcod.trinity-plugin/2";
  plan: string;
  target: "tcod-fork" | "upstream";
  exprs: Record<string, ExprDef>;
  workflow: {
    name: string;
    env: string;
    pacing: {
      maxTurns: number; totalSteps: number; truncatedReward: number;
      horizon?: ValueRef; prefix?: ValueRef; adaptive?: AdaptiveDepth;
      /** Feedback-paced: the staleness lag and how many training episodes make one step's observation. */
      feedback?: { staleness: number; episodesPerStep: number };
    };
    /** TurnOPD: what the probe episodes play, drawn as `tcod run` draws them (plan/seeds.ts
     *  `probeTaskIndices` over the probed split's rows): the run seed and that taskset. */
    probe?: { seed: number; taskset: { path: string; split: "train" | "test"; promptKey: string } };
    agent: AgentFormat;
    /** The env's episode semantics (plan/env-semantics.ts), the same data tcod's runtime reads. */
    semantics: EpisodeSemantics;
    temperature: number;
    teacherTemperature: number;
  } | undefined;
  advantage: {
    /** The trainer-side advantage function (`algorithm.advantage_fn`): loss aggregation per train batch. */
    name: string;
    /** The explorer-side experience operator (`data_processor.experience_pipeline.operators`): the
     *  advantage terms and turn weights over one whole explore step. */
    operator: string;
    /** grpo terms carry the GroupAdvantage node's normalize/eps. */
    terms: (AdvantageTerm | { kind: "grpo"; coef: ValueRef; normalize: boolean; eps: number })[];
    aggregate: Aggregate;
    turnWeights?: { expr: string };
    maxTurns: number;
    totalSteps: number;
    /** The batch key of teacher logprobs (Trinity's trainer writes `teacher_logprobs`; the adapter
     *  also accepts `teacher_log_probs`, which upstream 0.5.x's own OPD advantage expected). */
    teacherKey: "teacher_logprobs";
  } | undefined;
}

/** Relative path → file contents. */
export type PluginFiles = Record<string, string>;

const TEMPLATE_FILES = ["tcod_runtime/__init__.py", "tcod_runtime/core.py", "tcod_runtime/ranges.py", "tcod_workflow.py", "tcod_advantage.py"] as const;
type TemplateName = (typeof TEMPLATE_FILES)[number];

/** Where the templates are: targets/trinity/plugin/ of the package (source tree or installed). */
function templateDir(): string {
  const core = packageFile(join("targets", "trinity", "plugin", "tcod_runtime", "core.py"));
  if (core) return dirname(dirname(core));
  throw new Error("tcod: cannot find the Trinity plugin templates (targets/trinity/plugin) in the tcod installation; the installation is incomplete");
}

export function readTemplates(dir = templateDir()): Record<TemplateName, string> {
  return Object.fromEntries(TEMPLATE_FILES.map((f) => [f, readFileSync(join(dir, f), "utf8")])) as Record<TemplateName, string>;
}

/** The plugin's files for one spec; deterministic (spec keys sorted). */
export function generatePlugin(spec: PluginSpec, templates: Record<TemplateName, string> = readTemplates()): PluginFiles {
  const files: PluginFiles = {
    "tcod_runtime/__init__.py": templates["tcod_runtime/__init__.py"],
    "tcod_runtime/core.py": templates["tcod_runtime/core.py"],
    "tcod_runtime/ranges.py": templates["tcod_runtime/ranges.py"],
    // From plan/ranges.ts itself, so the plugin's table cannot drift from tcod's.
    "tcod_runtime/range_table.py": renderRangeTable(),
    "tcod_runtime/spec.json": JSON.stringify(sortKeys(spec), null, 2) + "\n",
  };
  if (spec.workflow) files["tcod_workflow.py"] = templates["tcod_workflow.py"];
  if (spec.advantage) files["tcod_advantage.py"] = templates["tcod_advantage.py"].replaceAll("{plan}", spec.plan);
  files["README.md"] = readme(spec);
  return files;
}

function readme(spec: PluginSpec): string {
  const lines = [
    `# Trinity-RFT plugin for tcod plan \`${spec.plan}\``,
    "",
    "Generated by `tcod export trinity`; do not edit (re-export instead). Launch with",
    "`trinity run --config CONFIG.yaml --plugin-dir THIS_DIR`.",
    "",
  ];
  if (spec.workflow) lines.push(`- workflow \`${spec.workflow.name}\` (tcod_workflow.py): the plan's pacing, agent format and teacher scoring.`);
  if (spec.advantage) lines.push(`- experience operator \`${spec.advantage.operator}\` (tcod_advantage.py): the plan's advantage terms and turn weights over each whole explore step (GRPO groups, T-DUR z-scores and softmax need every row of the step), before the buffer.`,
    `- advantage function \`${spec.advantage.name}\` (tcod_advantage.py): the plan's loss aggregation on each train batch.`);
  lines.push("- tcod_runtime/core.py: expression trees and signals in pure Python; tcod_runtime/spec.json: the plan data they evaluate.",
    "- tcod_runtime/ranges.py, range_table.py: tcod's ranges of the plan's fields (plan/ranges.ts); spec.json's constants are checked on load (TC7001), each schedule value as it is evaluated (TC7005).", "");
  return lines.join("\n");
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === "object") {
    const o: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) {
      const x = (v as Record<string, unknown>)[k];
      if (x !== undefined) o[k] = sortKeys(x);
    }
    return o;
  }
  return v;
}
