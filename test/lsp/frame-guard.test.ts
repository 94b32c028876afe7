/**
 * The frame guard in front of the JSON-RPC reader (lsp/frame-guard.ts): frames pass through
 * unchanged however the stream is cut; a Content-Length over the cap, or headers that never end,
 * are refused as soon as the header is read.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_MAX_MESSAGE_BYTES, FrameGuard, MAX_HEADER_BYTES, maxMessageBytesFrom } from "../../lsp/frame-guard.js";

const frame = (body: string) => `Content-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n${body}`;

/** Feeds `chunks` through a guard; what came out, and why it refused (if it did). */
async function through(cap: number, chunks: (string | Buffer)[]): Promise<{ out: string; refused: string[] }> {
  const refused: string[] = [];
  const g = new FrameGuard(cap, (why) => refused.push(why));
  const out: Buffer[] = [];
  g.on("data", (b: Buffer) => out.push(b));
  for (const c of chunks) g.write(typeof c === "string" ? Buffer.from(c) : c);
  g.end();
  await new Promise((r) => g.on("end", r));
  return { out: Buffer.concat(out).toString(), refused };
}

describe("the frame guard", () => {
  const stream = frame('{"jsonrpc":"2.0","method":"x","params":{"t":"é\\r\\n\\r\\nContent-Length: 99999999999"}}') + frame("{}") + frame('{"a":1}');

  it("passes frames through unchanged, cut anywhere (a body that looks like a header is a body)", async () => {
    expect(await through(1024, [stream])).toEqual({ out: stream, refused: [] });
    const bytes = Buffer.from(stream);
    expect(await through(1024, [...bytes].map((b) => Buffer.from([b])))).toEqual({ out: stream, refused: [] });
    for (const at of [3, 20, 70, 90, 150]) expect(await through(1024, [bytes.subarray(0, at), bytes.subarray(at)])).toEqual({ out: stream, refused: [] });
  });

  it("refuses a Content-Length over the cap at once, even with the header cut in two", async () => {
    const r = await through(DEFAULT_MAX_MESSAGE_BYTES, [frame("{}"), "Content-Len", "gth: 99999999999\r", "\n\r\n{"]);
    expect(r.refused).toEqual(["the client announced a message of 99999999999 bytes (Content-Length), over the 64 MiB cap on one message (TCOD_LSP_MAX_MESSAGE_MB)"]);
    // Nothing from the chunk that completes the header on: the reader never gets the frame.
    expect(r.out).toBe(frame("{}") + "Content-Length: 99999999999\r");
    expect((await through(10, [frame("12345678901")])).refused.length).toBe(1);
    expect((await through(11, [frame("12345678901")])).refused).toEqual([]);
  });

  it("refuses headers that never end", async () => {
    const r = await through(1024, ["Content-Length: 2\r\n", "X: " + "y".repeat(MAX_HEADER_BYTES)]);
    expect(r.refused[0]).toMatch(/over 65536 bytes of message headers without the blank line/);
  });

  it("leaves headers it cannot read to the reader (it reports them)", async () => {
    for (const bad of ["Content-Length: abc\r\n\r\n{}", "Content-Length: -5\r\n\r\n{}", "X: 1\r\n\r\n{}"]) {
      expect(await through(1024, [bad + frame("{}")])).toEqual({ out: bad + frame("{}"), refused: [] });
    }
  });
});

describe("TCOD_LSP_MAX_MESSAGE_MB", () => {
  it("sets the cap in MiB; unset, 64 MiB; not a size, a problem naming it", () => {
    expect(maxMessageBytesFrom(undefined)).toBe(64 * 1024 * 1024);
    expect(maxMessageBytesFrom("")).toBe(64 * 1024 * 1024);
    expect(maxMessageBytesFrom("0.5")).toBe(512 * 1024);
    expect(maxMessageBytesFrom("lots")).toEqual({ problem: 'TCOD_LSP_MAX_MESSAGE_MB must be a positive number of MiB, got "lots"' });
    expect(maxMessageBytesFrom("0")).toHaveProperty("problem");
  });
});
