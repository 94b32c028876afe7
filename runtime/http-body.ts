/**
 * An HTTP answer body read under a byte cap, for every client of a remote peer (the inference client,
 * the AgentGym client; sync-http.ts repeats the loop inside its worker thread). `Response.text()`
 * buffers whatever arrives: a runaway or hostile server could make the process hold gigabytes, and a
 * body past V8's longest string (about 512 MiB) fails as a network error. Here the bytes are counted
 * as they arrive and the read is abandoned, connection closed, once they pass the cap; a declared
 * Content-Length above it is refused before a byte is read.
 */
import { constants } from "node:buffer";

/** The largest cap: the longest string V8 can build (2^29 − 24 code units on 64-bit), as bytes of UTF-8 text. */
export const MAX_BODY_CAP_BYTES = constants.MAX_STRING_LENGTH;

const MIB = 1024 * 1024;

/** The body passed the cap; `declared` when its Content-Length said so before it was read. */
export class BodyTooLarge extends Error {
  constructor(readonly cap: number, readonly declared?: number) {
    super(declared !== undefined
      ? `declared a ${mib(declared)} answer (Content-Length), more than the ${mib(cap)} cap; it was not read`
      : `answered more than the ${mib(cap)} cap; the rest was not read`);
    this.name = "BodyTooLarge";
  }
}

/**
 * The body as UTF-8 text, or a BodyTooLarge once it passes `cap` bytes. `abort` closes the
 * connection (the fetch's AbortController), so the server stops sending and nothing more is buffered.
 */
export async function readBodyCapped(res: Response, cap: number, abort: () => void): Promise<string> {
  return (await readBodyBytesCapped(res, cap, abort)).toString("utf8");
}

/** The body as bytes, under the same cap (for a caller that decodes them itself, e.g. strictly). */
export async function readBodyBytesCapped(res: Response, cap: number, abort: () => void): Promise<Buffer> {
  const declared = Number(res.headers.get("content-length") ?? NaN);
  if (Number.isFinite(declared) && declared > cap) {
    abort();
    throw new BodyTooLarge(cap, declared);
  }
  if (!res.body) return Buffer.alloc(0);
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > cap) {
      abort();
      await reader.cancel().catch(() => undefined);
      throw new BodyTooLarge(cap);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks, size);
}

/**
 * A cap given in MiB (an environment variable's text or a param's number) as bytes, or what is wrong
 * with it: a positive number no larger than MAX_BODY_CAP_BYTES (a longer body cannot be read as text).
 */
export function capBytesFromMiB(v: unknown): number | { problem: string } {
  const n = typeof v === "number" ? v : typeof v === "string" && /^\s*\d+(\.\d+)?\s*$/.test(v) ? Number(v) : NaN;
  const most = Math.floor(MAX_BODY_CAP_BYTES / MIB);
  if (!(n > 0)) return { problem: `must be a positive number of MiB, got ${JSON.stringify(v)}` };
  if (n > most) return { problem: `must be at most ${most} MiB (the longest text JavaScript can hold), got ${n}` };
  return Math.max(1, Math.floor(n * MIB));
}

/** A size for messages: MiB with one decimal, or bytes under one MiB. */
export function mib(bytes: number): string {
  return bytes < MIB ? `${bytes} bytes` : `${Math.round((bytes / MIB) * 10) / 10} MiB`;
}
