/**
 * The metrics sinks of a run beside metrics.jsonl (which stays the source of truth): TensorBoard
 * event files in the run folder (on by default), and Weights & Biases when asked for.
 */
import type { MetricsRow } from "../metrics.js";
import { rowScalars } from "./scalars.js";
import { TensorBoardWriter } from "./tensorboard.js";
import { WandbSink } from "./wandb.js";

export interface SinkOptions {
  runDir: string;
  /** Write TensorBoard event files into the run folder (default true). */
  tensorboard?: boolean;
  /** Log to this W&B project. */
  wandbProject?: string;
  name: string;
  config: unknown;
}

export interface MetricsSinks {
  /**
   * Call once the engine has taken the run folder (RunOptions.onStart): creates the W&B run. Before
   * it nothing is written, so a refused --resume leaves no W&B run (TensorBoard opens its event file
   * at the first row).
   */
  start(): Promise<void>;
  row(row: MetricsRow): void;
  close(): Promise<void>;
}

export async function openSinks(o: SinkOptions): Promise<MetricsSinks> {
  const tb = o.tensorboard === false ? undefined : new TensorBoardWriter(o.runDir);
  // The W&B process starts now (a Python without wandb fails before the run); its run at start().
  const wb = o.wandbProject ? await WandbSink.open({ project: o.wandbProject, runDir: o.runDir, name: o.name, config: o.config }) : undefined;
  return {
    async start() {
      await wb?.begin();
    },
    row(row) {
      const s = rowScalars(row);
      tb?.scalars(row.step, s);
      wb?.log(row.step, s);
    },
    async close() {
      tb?.close();
      await wb?.close();
    },
  };
}
