/**
 * The signals that stop a run or a sweep cleanly (each run finishes its step and checkpoints), and
 * the exit status that reports which one did: 128 + the signal's number (POSIX), as a shell
 * reports a process a signal stopped — 130 Ctrl-C (SIGINT), 143 SIGTERM, 129 SIGHUP.
 * SIGTERM is what schedulers (SLURM, Kubernetes, systemd, `timeout`) send; SIGHUP, a closed terminal.
 */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
export type StopSignal = (typeof STOP_SIGNALS)[number];

const SIGNAL_NUMBER: Record<StopSignal, number> = { SIGHUP: 1, SIGINT: 2, SIGTERM: 15 };

export const exitForSignal = (sig: StopSignal): number => 128 + SIGNAL_NUMBER[sig];

/** How a stop is announced: "interrupt" for Ctrl-C, the signal's name otherwise. */
export const signalWord = (sig: StopSignal): string => (sig === "SIGINT" ? "interrupt" : sig);
