/**
 * Blocking JSON POSTs for the few places the contract is synchronous (`Tokenizer.encode/decode` —
 * the rollout renders observations between awaits). A worker thread does the fetch; the caller
 * blocks on an Atomics.wait and reads the answer with receiveMessageOnPort (the synckit technique).
 * Used sparingly and behind a cache: it stalls the event loop for one round trip.
 */
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";

const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", async ({ flag, port, url, headers, body, timeoutMs }) => {
  let answer;
  try {
    const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.timeout(timeoutMs), redirect: "manual" });
    answer = { status: res.status, text: await res.text(), location: res.headers.get("location") ?? undefined };
  } catch (e) {
    const timeout = e && (e.name === "TimeoutError");
    answer = { error: timeout ? "timeout" : "unreachable", detail: String((e && e.cause && (e.cause.code || e.cause.message)) || (e && e.message) || e) };
  }
  port.postMessage(answer);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
`;

export type SyncAnswer = { status: number; text: string; location?: string } | { error: "timeout" | "unreachable"; detail: string };

export class SyncPoster {
  private worker: Worker | undefined;

  constructor(private readonly headers: Record<string, string>, private readonly timeoutMs: number) {}

  post(url: string, body: unknown): SyncAnswer {
    this.worker ??= new Worker(WORKER_SOURCE, { eval: true });
    this.worker.unref(); // never keeps the process alive on its own
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const { port1, port2 } = new MessageChannel();
    this.worker.postMessage({ flag, port: port2, url, headers: this.headers, body, timeoutMs: this.timeoutMs }, [port2 as MessagePort]);
    // The worker's own timeout bounds the wait; the extra second only covers thread start-up.
    const waited = Atomics.wait(flag, 0, 0, this.timeoutMs + 1000);
    const msg = receiveMessageOnPort(port1);
    port1.close();
    if (waited === "timed-out" || !msg) return { error: "timeout", detail: `no answer within ${this.timeoutMs} ms` };
    return msg.message as SyncAnswer;
  }

  async close(): Promise<void> {
    await this.worker?.terminate();
    this.worker = undefined;
  }
}
