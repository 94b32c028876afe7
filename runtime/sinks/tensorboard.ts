/**
 * TensorBoard event files, written as a run goes: TFRecord framing (length, masked CRC-32C of the
 * length, payload, masked CRC-32C of the payload) around `tensorflow.Event` protocol buffers holding
 * scalar summaries. The format is small and frozen (tensorflow/core/util/event.proto, summary.proto;
 * tensorflow/core/lib/io/record_writer.cc), so it is written here rather than through a TensorFlow
 * binding. A resumed run starts a new event file; TensorBoard purges the steps a restart repeats
 * ("out of order step … purging expired events"), so the logdir reads as one run.
 */
import { closeSync, fsyncSync, mkdirSync, openSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import type { Scalars } from "./scalars.js";

export class TensorBoardWriter {
  readonly path: string;
  /** -1 until the first scalars: a run refused before its first row (a damaged --resume) leaves no event file. */
  private fd = -1;
  private closed = false;
  private readonly started: number;

  constructor(private readonly dir: string, now = Date.now()) {
    // TensorBoard finds event files by the "tfevents" in their name; the rest keeps files of
    // restarts apart (seconds since the epoch, host, process).
    this.path = join(dir, `events.out.tfevents.${Math.floor(now / 1000)}.${hostname().replace(/[^\w.-]/g, "_")}.${process.pid}.tcod`);
    this.started = now;
  }

  scalars(step: number, values: Scalars, now = Date.now()): void {
    const entries = Object.entries(values);
    if (entries.length === 0) return;
    this.record(encodeEvent({ wallTime: now / 1000, step, scalars: entries }));
  }

  flush(): void {
    if (this.fd >= 0) fsyncSync(this.fd);
  }

  close(): void {
    this.closed = true;
    if (this.fd < 0) return;
    fsyncSync(this.fd);
    closeSync(this.fd);
    this.fd = -1;
  }

  private record(payload: Uint8Array): void {
    if (this.fd < 0) {
      if (this.closed) throw new Error(`TensorBoardWriter: ${this.path} is closed`);
      mkdirSync(this.dir, { recursive: true });
      this.fd = openSync(this.path, "a");
      writeSync(this.fd, tfRecord(encodeEvent({ wallTime: this.started / 1000, step: 0, fileVersion: "brain.Event:2" })));
    }
    writeSync(this.fd, tfRecord(payload));
  }
}

/** One TFRecord: uint64 length, masked crc32c(length), payload, masked crc32c(payload), little-endian. */
export function tfRecord(payload: Uint8Array): Buffer {
  const out = Buffer.alloc(12 + payload.length + 4);
  out.writeBigUInt64LE(BigInt(payload.length), 0);
  out.writeUInt32LE(maskedCrc32c(out.subarray(0, 8)), 8);
  out.set(payload, 12);
  out.writeUInt32LE(maskedCrc32c(payload), 12 + payload.length);
  return out;
}

const CRC32C_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1; // Castagnoli, reflected
    t[n] = c >>> 0;
  }
  return t;
})();

/** CRC-32C (Castagnoli), as TFRecord uses. crc32c("123456789") = 0xe3069283. */
export function crc32c(bytes: Uint8Array): number {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC32C_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

/** TFRecord's mask: rotate right by 15 and add a constant, so CRCs of CRCs stay distinct. */
export function maskedCrc32c(bytes: Uint8Array): number {
  const c = crc32c(bytes);
  return ((((c >>> 15) | (c << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

interface EventFields { wallTime: number; step: number; fileVersion?: string; scalars?: [string, number][] }

/** `Event { double wall_time = 1; int64 step = 2; string file_version = 3; Summary summary = 5; }` */
export function encodeEvent(e: EventFields): Uint8Array {
  const w = new ProtoWriter();
  w.double(1, e.wallTime);
  w.varint(2, e.step);
  if (e.fileVersion !== undefined) w.bytes(3, Buffer.from(e.fileVersion, "utf8"));
  if (e.scalars) {
    // Summary { repeated Value value = 1; }  Value { string tag = 1; float simple_value = 2; }
    const summary = new ProtoWriter();
    for (const [tag, v] of e.scalars) {
      const value = new ProtoWriter();
      value.bytes(1, Buffer.from(tag, "utf8"));
      value.float(2, v);
      summary.bytes(1, value.finish());
    }
    w.bytes(5, summary.finish());
  }
  return w.finish();
}

/** The few protobuf wire types an Event needs. */
class ProtoWriter {
  private parts: Buffer[] = [];

  double(field: number, v: number): void {
    const b = Buffer.alloc(8);
    b.writeDoubleLE(v);
    this.parts.push(key(field, 1), b);
  }

  float(field: number, v: number): void {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.parts.push(key(field, 5), b);
  }

  varint(field: number, v: number): void {
    this.parts.push(key(field, 0), varint(BigInt(Math.trunc(v))));
  }

  bytes(field: number, b: Uint8Array): void {
    this.parts.push(key(field, 2), varint(BigInt(b.length)), Buffer.from(b));
  }

  finish(): Buffer {
    return Buffer.concat(this.parts);
  }
}

function key(field: number, wireType: number): Buffer {
  return varint(BigInt((field << 3) | wireType));
}

/** Base-128 varint; negative int64 as two's complement (ten bytes), as protobuf encodes it. */
function varint(v: bigint): Buffer {
  let x = v < 0n ? v + (1n << 64n) : v;
  const out: number[] = [];
  while (x >= 0x80n) {
    out.push(Number(x & 0x7fn) | 0x80);
    x >>= 7n;
  }
  out.push(Number(x));
  return Buffer.from(out);
}
