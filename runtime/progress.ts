/**
 * Run progress: a cli-progress bar with ETA on a terminal, one plain line per step otherwise
 * (logs, CI). `quiet` prints nothing but the final lines the CLI writes itself.
 */
import cliProgress from "cli-progress";
import type { MetricsRow } from "./metrics.js";

export interface Progress {
  start(info: { steps: number; startStep: number; runDir: string }): void;
  row(row: MetricsRow): void;
  /** A message that must not be garbled by the bar. */
  log(line: string): void;
  stop(): void;
}

const f3 = (v: number) => v.toFixed(3);

export function createProgress(opts: { quiet?: boolean; stream?: NodeJS.WriteStream } = {}): Progress {
  const stream = opts.stream ?? process.stdout;
  if (opts.quiet) return { start() {}, row() {}, log: (l) => stream.write(l + "\n"), stop() {} };
  const evals = new Map<string, number>();
  const evalText = () => [...evals].map(([n, v]) => `${n} ${f3(v)}`).join(" ") || "—";
  if (stream.isTTY) {
    const bar = new cliProgress.SingleBar({
      stream,
      format: " {bar} {value}/{total} steps | ETA {eta_formatted} | train success {succ} | eval {ev} | KL {kl} | H {h} p {p}",
      barsize: 24, hideCursor: true, etaBuffer: 20, clearOnComplete: false,
    }, cliProgress.Presets.shades_classic);
    let started = false;
    const payload = { succ: "—", ev: "—", kl: "—", h: "—", p: "—" };
    return {
      start(info) { bar.start(info.steps, info.startStep, payload); started = true; },
      row(r) {
        if (r.kind === "eval") { evals.set(r.name, r.successRate); bar.update({ ev: evalText() }); return; }
        bar.update(r.step, { succ: f3(r.successRate), ev: evalText(), kl: f3(r.kl.mean), h: r.horizon.toFixed(1), p: r.prefix.toFixed(1) });
      },
      log(l) { if (started) { bar.stop(); stream.write(l + "\n"); bar.start(bar.getTotal(), (bar as unknown as { value: number }).value, payload); } else stream.write(l + "\n"); },
      stop() { if (started) bar.stop(); started = false; },
    };
  }
  let total = 0;
  return {
    start(info) { total = info.steps; stream.write(`run ${info.runDir}: ${info.startStep > 0 ? `resuming after step ${info.startStep} of ${total}` : `${total} steps`}\n`); },
    row(r) {
      if (r.kind === "eval") { stream.write(`eval ${r.name} @ step ${r.step}: success ${f3(r.successRate)} reward ${f3(r.meanReward)} turns ${r.meanTurns.toFixed(1)}${r.admissibleRate !== undefined ? `  admissible ${f3(r.admissibleRate)}` : ""}${r.repeatRate !== undefined ? `  repeats ${f3(r.repeatRate)}` : ""}\n`); return; }
      const secs = Object.values(r.time).reduce((a, b) => a + b, 0);
      // A step without student episodes (`× 0 rollouts`, sft alone) has nothing but its demonstrations to show.
      const episodes = r.episodes > 0
        ? `  success ${f3(r.successRate)}  reward ${f3(r.meanReward)}  admissible ${f3(r.admissibleRate)}  KL ${f3(r.kl.mean)}  horizon ${r.horizon.toFixed(1)}  prefix ${r.prefix.toFixed(1)}  turns ${r.turns}`
        : "  no student episodes";
      stream.write(`step ${r.step}/${total}${episodes}${r.demoNll !== undefined ? `  demo NLL ${f3(r.demoNll)}` : ""}  ${secs.toFixed(2)}s${r.droppedFailed ? `  dropped ${r.droppedFailed}` : ""}\n`);
    },
    log: (l) => stream.write(l + "\n"),
    stop() {},
  };
}
