/**
 * How an agent's actions relate to what the env listed, over a set of episodes: the training rows'
 * `admissibleRate` and the eval rows' `admissibleRate` and `repeatRate` (docs/RUNTIME.md, metrics).
 */
import type { EpisodeRecord } from "./rollout.js";

/**
 * `admissibleRate`: the share of turns whose parsed action is one of the commands the env listed.
 * `repeatRate`: the share of turns that repeat the turn before's action where that one was not
 * listed (an agent stuck on a command that made nothing happen). Both 0 for no turns.
 */
export function actionRates(records: readonly EpisodeRecord[]): { admissibleRate: number; repeatRate: number } {
  let turns = 0, admissible = 0, repeats = 0;
  for (const r of records) {
    r.turns.forEach((t, i) => {
      turns++;
      if (t.action !== null && t.context.admissible.includes(t.action)) admissible++;
      const prev = r.turns[i - 1];
      if (prev && prev.action !== null && t.action === prev.action && !prev.context.admissible.includes(prev.action)) repeats++;
    });
  }
  return { admissibleRate: turns > 0 ? admissible / turns : 0, repeatRate: turns > 0 ? repeats / turns : 0 };
}
