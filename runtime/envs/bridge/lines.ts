/**
 * Newline-delimited lines from a stream, with a cap on a line's length: a line over `maxBytes` is not
 * buffered (its bytes are dropped up to the next newline) and `onOverflow` is called once for it, so
 * a bridge that prints a huge or endless line can neither exhaust memory nor crash the reader.
 */
import type { Readable } from "node:stream";

export function readLines(input: Readable, maxBytes: number, onLine: (line: string) => void, onOverflow: (bytes: number) => void): void {
  let parts: Buffer[] = [];
  let size = 0;
  let dropping = false;
  input.on("data", (chunk: Buffer) => {
    let start = 0;
    for (let nl = chunk.indexOf(10, start); ; nl = chunk.indexOf(10, start)) {
      const end = nl === -1 ? chunk.length : nl;
      const piece = end - start;
      if (!dropping && size + piece > maxBytes) {
        dropping = true;
        onOverflow(size + piece);
        parts = [];
        size = 0;
      }
      if (!dropping && piece > 0) { parts.push(chunk.subarray(start, end)); size += piece; }
      if (nl === -1) break;
      if (!dropping) onLine(Buffer.concat(parts, size).toString("utf8").replace(/\r$/, ""));
      parts = [];
      size = 0;
      dropping = false;
      start = nl + 1;
    }
  });
}
