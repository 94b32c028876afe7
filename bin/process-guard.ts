/**
 * Process-wide exit and signal handling for what a run starts outside this process (worker
 * processes in their own process group, which the terminal's signals do not reach). The runtime
 * never touches `process` signal handlers itself: a backend that needs clean-up on exit receives
 * `onProcessEnd` from the composition root (compose.ts) and registers a synchronous clean-up.
 *
 * While at least one clean-up is registered: on exit they all run; on SIGTERM or SIGHUP (after
 * which Node runs no exit handlers) they all run, the handlers are removed, and the process dies of
 * the same signal. With none registered, no handler is installed (the default signal behaviour).
 * A signal that something else in the process also listens for (`tcod run`, which finishes the
 * step and checkpoints on SIGTERM/SIGHUP as on Ctrl-C) is left to that listener: it ends the
 * process with an exit, on which the clean-ups run. Acting on it here would kill the workers
 * mid-step and re-raise the signal, which `tcod run` takes as a second one (quit, no checkpoint).
 */
const cleanups = new Set<() => void>();

function runAll(): void {
  for (const c of [...cleanups]) {
    try { c(); } catch { /* one failed clean-up must not skip the others */ }
  }
}

function onSignal(sig: NodeJS.Signals): void {
  if (process.listenerCount(sig) > 1) return;   // another listener owns this stop; exit cleans up
  runAll();
  cleanups.clear();
  uninstall();
  process.kill(process.pid, sig);
}

function install(): void {
  process.on("exit", runAll);
  process.on("SIGTERM", onSignal);
  process.on("SIGHUP", onSignal);
}

function uninstall(): void {
  process.off("exit", runAll);
  process.off("SIGTERM", onSignal);
  process.off("SIGHUP", onSignal);
}

/** Runs `cleanup` when the process exits or is ended by SIGTERM/SIGHUP; the returned function unregisters it. */
export function onProcessEnd(cleanup: () => void): () => void {
  if (cleanups.size === 0) install();
  cleanups.add(cleanup);
  return () => {
    if (cleanups.delete(cleanup) && cleanups.size === 0) uninstall();
  };
}

/** How many clean-ups are registered (for tests). */
export function pendingCleanups(): number {
  return cleanups.size;
}
