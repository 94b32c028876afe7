import { describe, expect, it } from "vitest";
import { Lockstep } from "../../runtime/lockstep.js";
import type { SampleRequest, SampleResult } from "../../runtime/backends/backend.js";

const req = (seed: number): SampleRequest => ({ prompt: [seed], maxTokens: 4, temperature: 1, seed });
const tick = () => new Promise((r) => setImmediate(r));

/** A backend that answers each request with its seed, and records the seeds of each call. */
function recorder() {
  const calls: number[][] = [];
  const send = async (reqs: SampleRequest[]): Promise<SampleResult[]> => {
    calls.push(reqs.map((r) => r.seed));
    await tick();
    return reqs.map((r) => ({ tokens: [r.seed], logprobs: [0], finishReason: "stop" as const }));
  };
  return { calls, send };
}

describe("Lockstep", () => {
  it("sends a round when every episode still playing waits, and answers each request with its own result", async () => {
    const { calls, send } = recorder();
    const lock = new Lockstep(send);
    // Episode e asks at the turns listed for it, stepping its env (a tick) in between.
    const asks = [[10, 11, 12], [20], [], [40, 41]];
    const got = await Promise.all(asks.map((seeds) => lock.play(async () => {
      const out: number[] = [];
      for (const s of seeds) { await tick(); out.push((await lock.sample(req(s))).tokens[0]!); }
      return out;
    })));
    expect(got).toEqual(asks);
    // Round 1: all three episodes that ask; round 2: the two with a second turn; round 3: the last one.
    expect(calls.map((c) => [...c].sort((a, b) => a - b))).toEqual([[10, 20, 40], [11, 41], [12]]);
  });

  it("an episode that fails leaves the set, and the others' round still goes", async () => {
    const { calls, send } = recorder();
    const lock = new Lockstep(send);
    const failing = lock.play(async () => { await tick(); await tick(); throw new Error("env fault"); });
    const asking = lock.play(async () => (await lock.sample(req(7))).tokens[0]);
    await expect(failing).rejects.toThrow("env fault");
    expect(await asking).toBe(7);
    expect(calls).toEqual([[7]]);
  });

  it("a failed call rejects every request of its round", async () => {
    const lock = new Lockstep(async () => { throw new Error("worker down"); });
    const both = [1, 2].map((s) => lock.play(() => lock.sample(req(s))));
    for (const p of both) await expect(p).rejects.toThrow("worker down");
  });
});
