/**
 * Fuzzing in CI: 10,000 inputs with a fixed seed — 5,000 generated programs (fast-check over the AST,
 * printed to source) and 5,000 byte-level mutations of the examples — through parse + check + lower,
 * in-process. Every input must end in a result or coded diagnostics with spans inside the file; the
 * compiler never throws. (The 10^6-input run with timings is bench/fuzz.bench.ts.)
 */
import fc from "fast-check";
import { describe, it } from "vitest";
import { rng } from "../helpers/prng.js";
import { checkContract, exampleTexts, mutate, programArb, scratch } from "./generator.js";

const SEED = 20261130;
/** 10,000 in all by default; FUZZ_CI_N (per half) for a quicker local run. */
const HALF = Number(process.env.FUZZ_CI_N ?? 5000);

describe("fuzz: parse + check + lower", { timeout: 600_000 }, () => {
  it("5,000 generated programs keep the contract", () => {
    const file = scratch();
    fc.assert(fc.property(programArb, (text) => { checkContract(file, text); }), { numRuns: HALF, seed: SEED });
  });

  it("5,000 mutations of the examples keep the contract", () => {
    const file = scratch();
    const seeds = exampleTexts();
    const random = rng(SEED);
    for (let i = 0; i < HALF; i++) {
      const text = mutate(seeds, random);
      try { checkContract(file, text); } catch (e) { throw new Error(`mutant ${i} (seed ${SEED}):\n${text}\n---\n${(e as Error).message}`); }
    }
  });
});
