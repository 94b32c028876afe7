/**
 * Blocking JSON POSTs for the few places the contract is synchronous (`Tokenizer.encode/decode` —
 * the rollout renders observations between awaits). A worker thread does the fetch; the caller
 * blocks on an Atomics.wait and reads the answer with receiveMessageOnPort (the synckit technique).
 * Used sparingly and behind a cache: it stalls the event loop for one round trip.
 */
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from "node:worker_threads";

// The body is read under the byte cap as runtime/http-body.ts does (this source runs in a thread of
// its own and cannot import it): counted as it arrives, the connection closed once past the cap.
const WORKER_SOURCE = `
const { parentPort } = require("node:worker_threads");
parentPort.on("message", async ({ flag, port, url, headers, body, timeoutMs, maxBodyBytes }) => {
  let answer;
  const stop = new AbortController();
  try {
    const res = await fetch(url, { method: "POST", headers, body: JSON.stringify(body), signal: AbortSignal.any([AbortSignal.timeout(timeoutMs), stop.signal]), redirect: "manual" });
    const declared = Number(res.headers.get("content-length") ?? NaN);
    if (Number.isFinite(declared) && declared > maxBodyBytes) {
      stop.abort();
      answer = { error: "too-large", status: res.status, cap: maxBodyBytes, declared };
    } else {
      const chunks = [];
      let size = 0;
      const reader = res.body ? res.body.getReader() : undefined;
      for (;;) {
        if (!reader) break;
        const { done, value } = await reader.read();
        if (done) break;
        size += value.byteLength;
        if (size > maxBodyBytes) {
          stop.abort();
          await reader.cancel().catch(() => undefined);
          answer = { error: "too-large", status: res.status, cap: maxBodyBytes };
          break;
        }
        chunks.push(value);
      }
      answer ??= { status: res.status, text: Buffer.concat(chunks, size).toString("utf8"), location: res.headers.get("location") ?? undefined };
    }
  } catch (e) {
    const timeout = e && (e.name === "TimeoutError");
    answer = { error: timeout ? "timeout" : "unreachable", detail: String((e && e.cause && (e.cause.code || e.cause.message)) || (e && e.message) || e) };
  }
  port.postMessage(answer);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
});
`;

export type SyncAnswer =
  | { status: number; text: string; location?: string }
  | { error: "timeout" | "unreachable"; detail: string }
  /** The body passed `cap` bytes (`declared`: its Content-Length said so; it was not read). */
  | { error: "too-large"; status: number; cap: number; declared?: number };

export class SyncPoster {
  private worker: Worker | undefined;

  constructor(private readonly headers: Record<string, string>, private readonly timeoutMs: number, private readonly maxBodyBytes: number) {}

  post(url: string, body: unknown): SyncAnswer {
    this.worker ??= new Worker(WORKER_SOURCE, { eval: true });
    this.worker.unref(); // never keeps the process alive on its own
    const flag = new Int32Array(new SharedArrayBuffer(4));
    const { port1, port2 } = new MessageChannel();
    this.worker.postMessage({ flag, port: port2, url, headers: this.headers, body, timeoutMs: this.timeoutMs, maxBodyBytes: this.maxBodyBytes }, [port2 as MessagePort]);
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
