/**
 * Reads the bridge params shared by ScienceWorld and TextWorldExpress: the timeouts (seconds:
 * start_timeout_s, reset_timeout_s, step_timeout_s) and step_limit (the package's envStepLimit).
 */
import { EnvConfigError } from "../env.js";
import { DEFAULT_TIMEOUTS, type BridgeTimeouts } from "./adapter.js";

export function timeoutsFromParams(kind: string, params: Record<string, unknown>): BridgeTimeouts {
  const read = (key: string, fallbackMs: number): number => {
    const v = params[key];
    if (v === undefined) return fallbackMs;
    if (typeof v !== "number" || !(v > 0) || !Number.isFinite(v)) {
      throw new EnvConfigError(`${kind}: param ${key} must be a positive number of seconds, got ${JSON.stringify(v)}`, kind);
    }
    return v * 1000;
  };
  return {
    startMs: read("start_timeout_s", DEFAULT_TIMEOUTS.startMs),
    resetMs: read("reset_timeout_s", DEFAULT_TIMEOUTS.resetMs),
    stepMs: read("step_timeout_s", DEFAULT_TIMEOUTS.stepMs),
  };
}

/** The largest envStepLimit: both packages pass it to the JVM as a Java int. */
export const MAX_STEP_LIMIT = 2 ** 31 - 1;

/**
 * The env's step limit: param step_limit, else `fallback`. Checked here, at load, because a value the
 * JVM cannot hold would otherwise surface as a Java error at the bridge's start, blamed on Java.
 */
export function stepLimitFromParams(kind: string, params: Record<string, unknown>, fallback: number): number {
  const v = params.step_limit;
  if (v === undefined) return Math.min(fallback, MAX_STEP_LIMIT);
  if (typeof v !== "number" || !Number.isInteger(v) || v < 1 || v > MAX_STEP_LIMIT) {
    throw new EnvConfigError(`${kind}: param step_limit must be an integer from 1 to ${MAX_STEP_LIMIT}, got ${JSON.stringify(v)}`, kind,
      "step_limit caps the package's own episode length; leave it out for max(100, 2 × max_turns)");
  }
  return v;
}
