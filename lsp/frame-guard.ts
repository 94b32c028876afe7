/**
 * A check on the client's frames before vscode-jsonrpc's reader takes them (`tcod lsp`, bin/commands/lsp.ts).
 * The reader believes any `Content-Length`: given 99999999999 it waits for that many bytes, gathering
 * whatever the client writes next as that body (and would allocate it all once it came). The guard
 * follows the framing (headers up to the blank line, then Content-Length bytes of body, passed through
 * unchanged) and refuses, before the reader sees it, a header announcing a body over the cap, or a
 * header section that never ends. Headers it cannot read (no Content-Length, not a number) are left to
 * the reader, which reports them itself.
 */
import { Transform, type TransformCallback } from "node:stream";
import { capBytesFromMiB, mib } from "../runtime/http-body.js";

/** The environment variable that sets the cap on one message's body, in MiB. */
export const MAX_MESSAGE_ENV = "TCOD_LSP_MAX_MESSAGE_MB";
/**
 * The default cap on one message's body: twice the 32 MiB that tcod reads of a source file, so that
 * opening a file somewhat over that limit (or one whose JSON escapes double it) still gets its "too
 * large" diagnostic rather than a restart; editors do not send more (VS Code syncs files up to 50 MB).
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;
/** The longest header section taken: LSP sends one or two short headers. */
export const MAX_HEADER_BYTES = 64 * 1024;

const END = Buffer.from("\r\n\r\n");

/** $TCOD_LSP_MAX_MESSAGE_MB in bytes (unset or empty: the default), or what is wrong with it. */
export function maxMessageBytesFrom(raw: string | undefined): number | { problem: string } {
  if (raw === undefined || raw === "") return DEFAULT_MAX_MESSAGE_BYTES;
  const cap = capBytesFromMiB(raw);
  return typeof cap === "number" ? cap : { problem: `${MAX_MESSAGE_ENV} ${cap.problem}` };
}

export class FrameGuard extends Transform {
  /** Header bytes of the frame being read (bounded by MAX_HEADER_BYTES). */
  private header = Buffer.alloc(0);
  /** Body bytes of the current frame still to pass. */
  private bodyLeft = 0;
  /** Framing the guard could not follow (left to the reader), or a refusal: pass, or drop, the rest. */
  private state: "following" | "passing" | "refused" = "following";

  /** `refuse` is told why, once; the frame and everything after it are dropped. */
  constructor(private readonly maxBody: number, private readonly refuse: (why: string) => void) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let i = 0;
    while (i < chunk.length && this.state === "following") {
      if (this.bodyLeft > 0) {
        const n = Math.min(this.bodyLeft, chunk.length - i);
        this.bodyLeft -= n;
        i += n;
        continue;
      }
      // Only as much of the chunk as could still be header is looked at (a body may follow in it).
      const before = this.header.length;
      const seen = Buffer.concat([this.header, chunk.subarray(i, i + MAX_HEADER_BYTES + END.length - before)]);
      const at = seen.indexOf(END);
      if (at < 0) {
        if (seen.length > MAX_HEADER_BYTES) {
          this.stop(`the client sent over ${mib(MAX_HEADER_BYTES)} of message headers without the blank line that ends them`);
          break;
        }
        this.header = seen;
        i = chunk.length;
        continue;
      }
      i += at + END.length - before;
      this.header = Buffer.alloc(0);
      this.frame(seen.subarray(0, at).toString("ascii"));
    }
    if (this.state === "refused") { done(); return; }
    done(null, chunk);
  }

  private frame(headers: string): void {
    const line = headers.split("\r\n").find((h) => /^content-length\s*:/i.test(h));
    // As the reader reads it (parseInt); what it cannot read, it reports.
    const length = line === undefined ? NaN : parseInt(line.slice(line.indexOf(":") + 1).trim(), 10);
    if (!(length >= 0)) { this.state = "passing"; return; }
    if (length > this.maxBody) {
      this.stop(`the client announced a message of ${length} bytes (Content-Length), over the ${mib(this.maxBody)} cap on one message (${MAX_MESSAGE_ENV})`);
      return;
    }
    this.bodyLeft = length;
  }

  private stop(why: string): void {
    this.state = "refused";
    this.refuse(why);
  }
}
