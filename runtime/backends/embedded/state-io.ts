/**
 * Checkpoint files of the embedded student, in a directory:
 *   embedded-student.bin   b, m_b, v_b (float64 × V each), then the live rows of W, m_W, v_W
 *                          (precision × V each, row-major, in live order), then the live row ids
 *                          (int32), then (format /2) the pointer weights p, m_p, v_p (float64 × P
 *                          each) — platform byte order, recorded in the meta;
 *   embedded-student.json  dimensions, tokenizer fingerprint, the hyper-parameters that fix what
 *                          the weights mean (`pointerScale`, `priorLogOdds`, `candidateLogOdds`),
 *                          optimiser steps, row count and the binary's sha256.
 * Each file is written to a temporary name and renamed (binary first, meta last), so a crash
 * leaves the previous checkpoint readable or a meta that refuses a mismatching binary.
 * Only rows that ever had a gradient are stored: all others are exactly zero.
 */
import { createHash } from "node:crypto";
import { readFile, rename, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { BackendError } from "../backend.js";
import { jsonSyntaxError } from "../../../plan/json-error.js";

export const STATE_FORMAT = "tcod.embedded-student/2";
/** The format before pointer weights (read as pointer weights 0). */
const STATE_FORMAT_1 = "tcod.embedded-student/1";
const BIN = "embedded-student.bin";
const META = "embedded-student.json";

export interface StudentDims {
  fingerprint: string;
  features: number;
  vocabSize: number;
  precision: "float32" | "float64";
  /** Number of pointer weights (0: off). */
  pointer: number;
  /**
   * Student hyper-parameters that change the policy a given set of weights computes (student.ts):
   * the pointer scale s (a candidate's score is s·pointer[key]), the prior log-odds of characters,
   * bytes and specials, and the candidate log-odds. Written to the meta; a checkpoint that records
   * one refuses to load into a student with another value (its weights would mean another policy).
   * Checkpoints written before they were recorded load unchecked.
   */
  pointerScale: number;
  priorLogOdds: number;
  candidateLogOdds: number;
}

export interface StudentStateMeta extends StudentDims { steps: number }

export interface StudentStateOut {
  meta: StudentStateMeta;
  rows: Int32Array;
  W: Float32Array | Float64Array;
  mW: Float32Array | Float64Array;
  vW: Float32Array | Float64Array;
  b: Float64Array;
  mb: Float64Array;
  vb: Float64Array;
  p: Float64Array;
  mp: Float64Array;
  vp: Float64Array;
}

export interface StudentStateIn {
  steps: number;
  rows: Int32Array;
  /** Live rows only, in `rows` order. */
  W: Float32Array | Float64Array;
  mW: Float32Array | Float64Array;
  vW: Float32Array | Float64Array;
  b: Float64Array;
  mb: Float64Array;
  vb: Float64Array;
  p: Float64Array;
  mp: Float64Array;
  vp: Float64Array;
}

const littleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function bytesOf(a: ArrayBufferView): Uint8Array { return new Uint8Array(a.buffer, a.byteOffset, a.byteLength); }

export async function writeStudentState(dir: string, s: StudentStateOut): Promise<void> {
  const V = s.meta.vocabSize;
  const L = s.rows.length;
  const Arr = s.meta.precision === "float32" ? Float32Array : Float64Array;
  const gather = (src: Float32Array | Float64Array) => {
    const out = new Arr(L * V);
    for (let i = 0; i < L; i++) out.set(src.subarray(s.rows[i]! * V, (s.rows[i]! + 1) * V), i * V);
    return out;
  };
  const parts = [s.b, s.mb, s.vb, gather(s.W), gather(s.mW), gather(s.vW), s.rows, s.p, s.mp, s.vp].map(bytesOf);
  const bin = Buffer.concat(parts);
  const sha256 = createHash("sha256").update(bin).digest("hex");
  await writeAtomic(join(dir, BIN), bin);
  const meta = { format: STATE_FORMAT, ...s.meta, rows: L, littleEndian, sha256 };
  await writeAtomic(join(dir, META), JSON.stringify(meta, null, 2) + "\n");
}

export async function readStudentState(dir: string, expect: StudentDims): Promise<StudentStateIn> {
  const fail = (msg: string, hint?: string) => new BackendError(`embedded student: cannot load ${dir}: ${msg}`, "embedded", false, hint);
  let meta: Record<string, unknown>;
  let text = "";
  try {
    text = await readFile(join(dir, META), "utf8");
    meta = JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    const j = jsonSyntaxError(e, text);
    throw fail(j ? `${META} is not JSON (${j.message} at line ${j.line}, column ${j.column})` : `${META} is missing or cannot be read (${(e as Error).message})`, "point at a directory written by saveState");
  }
  // Valid JSON of another shape (null, a list, a number) has no format to read.
  if (meta === null || typeof meta !== "object" || Array.isArray(meta)) throw fail(`${META} holds ${JSON.stringify(meta).slice(0, 40)}, not an object`, "point at a directory written by saveState");
  if (meta.format !== STATE_FORMAT && meta.format !== STATE_FORMAT_1) throw fail(`format is ${JSON.stringify(meta.format)}, expected ${STATE_FORMAT}`);
  const P = meta.format === STATE_FORMAT_1 ? 0 : expect.pointer;
  if (meta.format === STATE_FORMAT && meta.pointer !== expect.pointer) {
    throw fail(`pointer is ${JSON.stringify(meta.pointer)} in the checkpoint but ${expect.pointer} in this backend`, "resume with the same embedded backend settings");
  }
  if (meta.littleEndian !== littleEndian) throw fail("written on a machine of the other byte order");
  for (const k of ["pointerScale", "priorLogOdds", "candidateLogOdds"] as const) {
    if (meta[k] !== undefined && meta[k] !== expect[k]) {
      throw fail(`${k} is ${JSON.stringify(meta[k])} in the checkpoint but ${JSON.stringify(expect[k])} in this backend`,
        "resume with the student settings the checkpoint was trained with (its weights compute another policy under other values)");
    }
  }
  for (const k of ["fingerprint", "features", "vocabSize", "precision"] as const) {
    if (meta[k] !== expect[k]) {
      throw fail(`${k} is ${JSON.stringify(meta[k])} in the checkpoint but ${JSON.stringify(expect[k])} in this backend`,
        "resume with the same embedded backend settings (features, vocabulary, agent format, precision)");
    }
  }
  const L = meta.rows as number, steps = meta.steps as number;
  if (!Number.isInteger(L) || L < 0 || !Number.isInteger(steps) || steps < 0) throw fail("rows/steps in the meta are not non-negative integers");
  const buf = await readFile(join(dir, BIN)).catch((e: Error) => { throw fail(`${BIN} is missing (${e.message})`); });
  if (createHash("sha256").update(buf).digest("hex") !== meta.sha256) throw fail(`${BIN} does not match the sha256 in ${META} (torn or foreign write)`);
  const V = expect.vocabSize;
  const el = expect.precision === "float32" ? 4 : 8;
  const size = 3 * V * 8 + 3 * L * V * el + 4 * L + 3 * P * 8;
  if (buf.length !== size) throw fail(`${BIN} has ${buf.length} bytes, expected ${size}`);
  const ab = buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.length);
  const Arr = expect.precision === "float32" ? Float32Array : Float64Array;
  let off = 0;
  const f64 = () => { const a = new Float64Array(ab, off, V); off += V * 8; return a; };
  const w = () => { const a = new Arr(ab, off, L * V); off += L * V * el; return a; };
  const b = f64(), mb = f64(), vb = f64();
  const W = w(), mW = w(), vW = w();
  const rows = new Int32Array(ab, off, L);
  off += 4 * L;
  const ptr = () => { const a = new Float64Array(expect.pointer); if (P > 0) { a.set(new Float64Array(ab.slice(off, off + P * 8))); off += P * 8; } return a; };
  const p = ptr(), mp = ptr(), vp = ptr();
  for (const r of rows) if (r < 0 || r >= expect.features) throw fail(`row id ${r} is outside 0..${expect.features - 1}`);
  return { steps, rows, W, mW, vW, b, mb, vb, p, mp, vp };
}

async function writeAtomic(path: string, data: Uint8Array | string): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  await writeFile(tmp, data);
  await rename(tmp, path);
}
