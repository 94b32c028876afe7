/**
 * A metrics row as named scalars: the one mapping every metrics sink (TensorBoard, Weights & Biases,
 * `tcod metrics --csv`) uses, so a number has the same name wherever a researcher looks. Train rows
 * become `train/<field>` (nested fields joined with `/`, per-turn KL as `train/kl/turn_<i>`); eval
 * rows `eval/<set>/<field>`. Wall times are `time/<phase>`. Non-finite and null values are left out
 * of `rowScalars` (a sink logs numbers); `rowNulls` names them, for `tcod metrics`, which shows them.
 */
import type { MetricsRow } from "../metrics.js";

export type Scalars = Record<string, number>;

export function rowScalars(row: MetricsRow): Scalars {
  const out: Scalars = {};
  eachScalar(row, (tag, v) => { if (typeof v === "number" && Number.isFinite(v)) out[tag] = v; });
  return out;
}

/**
 * The tags, named as `rowScalars` names them, whose value the row holds but not as a finite number:
 * `null` in metrics.jsonl (a value the step did not measure — `blendWeight` without a progressive
 * aggregate, `adaptiveCap` without adaptive depth, the KL of a turn no episode reached — or a number
 * that was NaN or ±Infinity when written: JSON has neither), or a non-finite number in memory.
 */
export function rowNulls(row: MetricsRow): string[] {
  const out: string[] = [];
  eachScalar(row, (tag, v) => { if (v === null || (typeof v === "number" && !Number.isFinite(v))) out.push(tag); });
  return out;
}

/** Every scalar slot of a row with its tag and its value as the row holds it. */
function eachScalar(row: MetricsRow, put: (tag: string, v: unknown) => void): void {
  if (row.kind === "eval") {
    const prefix = `eval/${row.name}`;
    put(`${prefix}/success_rate`, row.successRate);
    put(`${prefix}/mean_reward`, row.meanReward);
    put(`${prefix}/mean_turns`, row.meanTurns);
    put(`${prefix}/episodes`, row.episodes);
    put(`${prefix}/admissible_rate`, row.admissibleRate);
    put(`${prefix}/repeat_rate`, row.repeatRate);
  } else {
    const skip = new Set(["kind", "step", "time", "kl", "tokens", "coefs"]);
    for (const [k, v] of Object.entries(row)) if (!skip.has(k)) put(`train/${snake(k)}`, v);
    put("train/kl/mean", row.kl.mean);
    row.kl.perTurn.forEach((v, i) => put(`train/kl/turn_${i}`, v));
    put("train/tokens/prompt", row.tokens.prompt);
    put("train/tokens/response", row.tokens.response);
    for (const [k, v] of Object.entries(row.coefs)) put(`train/coef/${k}`, v);
    // Feedback rules in force: `train/feedback/stage_1`, `train/feedback/ema_1`, … (`stage#1` → `stage_1`).
    if (row.feedback) for (const [k, v] of Object.entries(row.feedback.values)) put(`train/feedback/${k.replace("#", "_")}`, v);
  }
  for (const [k, v] of Object.entries(row.time ?? {})) put(`time/${snake(k)}`, v);
}

/** `successRate` → `success_rate`. */
export function snake(s: string): string {
  return s.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}
