/**
 * Lockstep sampling for a set of episodes played at once: a sample request waits until every episode
 * still playing waits for one too (or has ended), and then they all go to the backend as one call.
 *
 * Why: a tcod worker answers one call at a time, and a call's cost is mostly fixed (the prefill's
 * launches, a CUDA graph's capture) for the few rows of a step. The backend's coalescer
 * (backends/openai/coalescer.ts) sends the first request of a round alone and the others together
 * when it returns; requests that come rarely and at different turns (sft's student-noise turns,
 * about one in five turns of an expert's path) drift apart and go almost one by one. Waiting for the
 * whole set makes a round exactly one call. The wait costs nothing here: the worker serves one call
 * at a time anyway, and an episode between two requests only steps its env in process. Backends that
 * batch concurrent requests themselves (vLLM, SGLang: continuous batching) do not ask for it
 * (StudentBackend.lockstepSampling).
 *
 * A request's seed is its own (the turn's), so the samples do not depend on how requests are grouped.
 */
import type { SampleRequest, SampleResult } from "./backends/backend.js";
import type { Sampler } from "./rollout.js";

interface Waiting { req: SampleRequest; resolve(r: SampleResult): void; reject(e: unknown): void }

export class Lockstep {
  private playing = 0;
  private waiting: Waiting[] = [];

  constructor(private readonly send: (reqs: SampleRequest[]) => Promise<SampleResult[]>) {}

  /** The sampler of the episodes played through `play`. */
  readonly sample: Sampler = (req) => new Promise<SampleResult>((resolve, reject) => {
    this.waiting.push({ req, resolve, reject });
    this.flushIfAllWait();
  });

  /** Plays one episode as a member of the set: its requests wait for the others' while it plays. */
  async play<T>(episode: () => Promise<T>): Promise<T> {
    this.playing++;
    try {
      return await episode();
    } finally {
      this.playing--;
      this.flushIfAllWait();
    }
  }

  private flushIfAllWait(): void {
    if (this.waiting.length === 0 || this.waiting.length < this.playing) return;
    const batch = this.waiting;
    this.waiting = [];
    this.send(batch.map((w) => w.req)).then((results) => {
      if (results.length !== batch.length) throw new Error(`backend returned ${results.length} samples for ${batch.length} requests`);
      batch.forEach((w, i) => w.resolve(results[i]!));
    }).catch((e: unknown) => { for (const w of batch) w.reject(e); });
  }
}
