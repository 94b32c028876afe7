/**
 * Fault handling for one unit of remote work (an episode, a teacher call): an EnvError or
 * BackendError drops the attempt, counts it, waits with exponential backoff and retries; after
 * `maxRetries` retries the run stops cleanly (RunFault). An EnvError that retrying cannot mend (an env
 * server's redirect or 4xx answer) stops the run the same way at once: it is the env's failure, not a
 * bug of tcod's, so it gets the checkpoint and the message, not an internal error. Other errors are
 * bugs or bad input and propagate unchanged.
 */
import { ENV_FAULT_HINT, EnvError } from "../envs/env.js";
import { BackendError } from "../backends/backend.js";
import { RunFault, type RunContext } from "./context.js";

export function isRetryable(e: unknown): e is EnvError | BackendError {
  return (e instanceof EnvError || e instanceof BackendError) && e.retryable;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function withRetries<T>(ctx: RunContext, what: string, fn: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn();
    } catch (e) {
      if (e instanceof EnvError && !e.retryable) {
        ctx.counters.droppedFailed++;
        throw new RunFault(`${what} failed (env ${e.env}: ${e.message}); retrying cannot mend this`, e, "TC7016", e.hint ?? ENV_FAULT_HINT);
      }
      if (!isRetryable(e)) throw e;
      ctx.counters.droppedFailed++;
      if (attempt >= ctx.faults.maxRetries) {
        const source = e instanceof EnvError ? `env ${e.env}` : `backend ${e.server}`;
        throw new RunFault(`${what} failed ${attempt + 1} times (${source}: ${e.message}); giving up after ${ctx.faults.maxRetries} retries`, e,
          e instanceof EnvError ? "TC7016" : e.code, e instanceof EnvError ? e.hint ?? ENV_FAULT_HINT : e.hint);
      }
      if (ctx.faults.backoffMs > 0) await sleep(ctx.faults.backoffMs * 2 ** attempt);
    }
  }
}
