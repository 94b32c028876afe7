/**
 * A metrics row as named scalars: the one mapping every metrics sink (TensorBoard, Weights & Biases,
 * `tcod metrics --csv`) uses, so a number has the same name wherever a researcher looks. Train rows
 * become `train/<field>` (nested fields joined with `/`, per-turn KL as `train/kl/turn_<i>`); eval
 * rows `eval/<set>/<field>`. Wall times are `time/<phase>`. Non-finite and null values are left out.
 */
import type { MetricsRow } from "../metrics.js";

export type Scalars = Record<string, number>;

export function rowScalars(row: MetricsRow): Scalars {
  const out: Scalars = {};
  const put = (tag: string, v: unknown): void => {
    if (typeof v === "number" && Number.isFinite(v)) out[tag] = v;
  };
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
  return out;
}

/** `successRate` → `success_rate`. */
export function snake(s: string): string {
  return s.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase();
}
