/**
 * A grammar-aware generator of tcod programs for fuzzing the compiler in-process:
 *  - `programArb`: fast-check arbitraries over a small AST (imports, lets, fns, models, curricula,
 *    sweeps; expressions with units, runtime variables, calls, if, lists, records, strings) printed
 *    to source — mostly well formed, so the checker and lowering are reached, not just the parser;
 *  - `mutate`: byte-level mutations of the repository's examples (insert, delete, duplicate, splice,
 *    flip, random bytes), for the parser's recovery and everything after it.
 * `checkContract` runs parse + check (+ lowering when it checks clean: `compileFile` does all three)
 * and throws when the compiler breaks its contract: it threw, a diagnostic without a catalogue code,
 * an internal error, or a span outside the file.
 */
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import fc from "fast-check";
import { compileFile, type CompileHost } from "../../compiler/index.js";
import { parse } from "../../grammar/index.js";
import { readSourceFile } from "../../plan/read-file.js";
import { catalogue } from "../../compiler/diagnostics/catalogue.js";
import { rng } from "../helpers/prng.js";

const UNITS = ["", " steps", " step", " turns", " turn", " tokens", " tasks", " rollouts", " episodes", " %"];
const VARS = ["step", "total_steps", "episode.expert_length", "episode.max_turns", "turn.index", "turn.kl", "turn.entropy", "turn.tokens", "episode.turns", "token.logp_student", "episode.nope"];
const FNS = ["min", "max", "clamp", "floor", "ceil", "round", "exp", "log", "sqrt", "cos", "opd", "grpo", "sft", "linear", "cosine", "f2b", "b2f", "stepwise", "weighted", "kappa", "tdur", "texthouse", "listed_format", "adam", "evaluate", "embedded", "g0", "g1", "nosuch"];
const ARG_NAMES = ["", "", "coef", "every", "max", "from", "to", "over", "split", "agent", "lr", "keep", "value", "x"];
const STRINGS = ['"train"', '"token_mean"', '"k1"', '"turn"', '"trajectory"', '""', '"a\\nb"', '"\\q"'];
const FIELDS = ["teacher", "student", "env", "steps", "batch", "horizon", "prefix", "loss", "optimizer", "staleness", "temperature", "eval", "rows", "max_turns", "seed", "checkpoint_every", "train_batch", "agent", "curriculm"];

const num = fc.oneof(fc.integer({ min: -3, max: 300 }).map(String), fc.constantFrom("0", "0.5", "1e-6", "1e999", "2.5e3", "0.0"));
const name = fc.constantFrom("a", "b", "k", "x0", "x1", ...VARS);

export const exprArb: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.tuple(num, fc.constantFrom(...UNITS)).map(([n, u]) => n + u),
    name,
    fc.constantFrom(...STRINGS, "true", "false"),
    fc.tuple(tie("e"), fc.constantFrom("+", "-", "*", "×", "/", "..", "<", "==", "and", "or"), tie("e")).map(([l, o, r]) => `${l} ${o} ${r}`),
    fc.tuple(fc.constantFrom("-", "not "), tie("e")).map(([o, x]) => o + x),
    tie("e").map((x) => `(${x})`),
    fc.tuple(tie("e"), tie("e"), tie("e")).map(([c, a, b]) => `if ${c} then ${a} else ${b}`),
    fc.tuple(fc.constantFrom(...FNS), fc.array(fc.tuple(fc.constantFrom(...ARG_NAMES), tie("e")), { maxLength: 3 }))
      .map(([f, args]) => `${f}(${args.map(([k, v]) => (k ? `${k}: ${v}` : v)).join(", ")})`),
    fc.array(tie("e"), { maxLength: 3 }).map((xs) => `[${xs.join(", ")}]`),
    fc.array(fc.tuple(fc.constantFrom("p", "q", "coef"), tie("e")), { maxLength: 2 }).map((fs) => `{ ${fs.map(([k, v]) => `${k}: ${v}`).join(", ")} }`),
  ),
})).e;

const typeArb = fc.constantFrom("number", "steps", "turns", "bool", "string", "per_turn<number>", "quantity", "loss", "range<steps>", "nosuchtype");
const declArb = fc.oneof(
  fc.tuple(fc.constantFrom("a", "b", "k", "x0", "x1"), fc.option(typeArb, { nil: undefined }), exprArb).map(([n, t, e]) => `let ${n}${t ? `: ${t}` : ""} = ${e}`),
  fc.tuple(fc.constantFrom("g0", "g1"), fc.array(fc.tuple(fc.constantFrom("x", "y"), typeArb), { maxLength: 2 }), fc.option(typeArb, { nil: undefined }), exprArb)
    .map(([n, ps, t, e]) => `fn ${n}(${ps.map(([p, pt]) => `${p}: ${pt}`).join(", ")})${t ? ` : ${t}` : ""} = ${e}`),
  fc.constant(`model m { path: "loglinear"  serve: embedded() }`),
  fc.tuple(fc.array(fc.tuple(fc.constantFrom(...FIELDS), exprArb), { maxLength: 4 })).map(([fs]) =>
    `curriculum c {\n  teacher: m\n  student: m\n  env: texthouse(agent: listed_format())\n  steps: 20\n${fs.map(([f, e]) => `  ${f}: ${e}`).join("\n")}\n}`),
  fc.tuple(fc.constantFrom("k", "a", "c.steps", "c.horizon", "c.nosuch"), fc.array(exprArb, { maxLength: 3 }), fc.constantFrom("product", "zip"))
    .map(([t, vs, mode]) => `sweep s ${mode} { ${t}: [${vs.join(", ")}] }`),
);

const IMPORTS = `import { opd, grpo, sft } from "std/loss"
import { linear, cosine, stepwise } from "std/schedule"
import { f2b, b2f } from "std/tcod"
import { texthouse } from "std/envs"
import { listed_format } from "std/agent"
import { kappa, tdur } from "std/atod"
`;

/** A whole program: the usual imports (sometimes), then a few declarations. */
export const programArb: fc.Arbitrary<string> = fc.tuple(fc.boolean(), fc.array(declArb, { minLength: 1, maxLength: 6 }))
  .map(([imports, decls]) => (imports ? IMPORTS : "") + decls.join("\n") + "\n");

/** The repository's examples, the seeds of byte-level mutation (`root`: the repository). */
export function exampleTexts(root = join(import.meta.dirname, "..", "..")): string[] {
  const out: string[] = [];
  for (const d of readdirSync(join(root, "examples"), { withFileTypes: true })) {
    if (!d.isDirectory()) continue;
    for (const f of readdirSync(join(root, "examples", d.name))) if (f.endsWith(".tcod")) out.push(readFileSync(join(root, "examples", d.name, f), "utf8"));
  }
  return out;
}

const BYTES = ['"', "{", "}", "(", ")", "[", "]", ",", ":", "=", ".", "..", "-", "*", "/", "\\", "\n", " ", "/*", "//", "×", "§", "\u0000", "\uFEFF", "é", "0", "9", "e", "steps", "turn", "let ", "fn ", "if ", "with ", "import ", "curriculum ", "sweep "];

/** Byte-level mutations of one of `seeds`, driven by a seeded PRNG (reproducible from the seed). */
export function mutate(seeds: readonly string[], random: () => number): string {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)]!;
  let s = pick(seeds);
  const edits = 1 + Math.floor(random() * 6);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(random() * (s.length + 1));
    const len = Math.floor(random() * 40);
    switch (Math.floor(random() * 7)) {
      case 0: s = s.slice(0, at) + pick(BYTES) + s.slice(at); break;
      case 1: s = s.slice(0, at) + s.slice(at + len); break;
      case 2: s = s.slice(0, at) + s.slice(at, at + len).repeat(2 + Math.floor(random() * 3)) + s.slice(at); break;
      case 3: { const other = pick(seeds); const from = Math.floor(random() * other.length); s = s.slice(0, at) + other.slice(from, from + len * 4) + s.slice(at); break; }
      case 4: s = s.slice(0, at) + String.fromCharCode(Math.floor(random() * 128)) + s.slice(at + 1); break;
      case 5: s = s.slice(0, at) + String.fromCharCode(...Array.from({ length: 1 + Math.floor(random() * 8) }, () => Math.floor(random() * 0x3000))) + s.slice(at); break;
      default: { const j = Math.floor(random() * s.length); s = s.slice(0, Math.min(at, j)) + s.slice(Math.max(at, j)) + s.slice(Math.min(at, j), Math.max(at, j)); }
    }
  }
  return s;
}

/** Inputs per chunk of the long fuzz run (bench/fuzz.bench.ts). */
export const CHUNK = 1000;

/** The seed of chunk c's mutation PRNG: the run's seed and c mixed, so neighbouring chunks share no stream. */
const mutationSeed = (seed: number, c: number) => (Math.imul(seed ^ 0x5bd1e995, 0x9e3779b1) ^ Math.imul(c + 1, 0x85ebca6b)) >>> 0;

export interface FuzzInput { text: string; generated: boolean }

/**
 * The inputs of chunk `c` of a run of `n` inputs with `seed`: CHUNK of them (fewer in the last),
 * alternately a generated program (fast-check, seed + c) and a mutation of `examples` (a PRNG seeded
 * from seed and c). They depend on (seed, n, c) alone, so chunks can run in any order and in any
 * number of processes and the union is always the same n inputs.
 */
export function chunkInputs(seed: number, n: number, c: number, examples: readonly string[]): FuzzInput[] {
  const size = Math.max(0, Math.min(CHUNK, n - c * CHUNK));
  const programs = fc.sample(programArb, { numRuns: Math.ceil(size / 2), seed: seed + c });
  const random = rng(mutationSeed(seed, c));
  const out: FuzzInput[] = [];
  for (let i = 0; i < size; i++) {
    const generated = i % 2 === 0;
    out.push({ text: generated ? programs[i / 2]! : mutate(examples, random), generated });
  }
  return out;
}

const CODES = new Set(Object.keys(catalogue));

/** One scratch project for the run; each input overwrites its file. */
export function scratch(): string {
  const dir = mkdtempSync(join(tmpdir(), "tcod-fuzz-"));
  writeFileSync(join(dir, "package.json"), "{}");
  return join(dir, "input.tcod");
}

export interface Outcome { ms: number; diagnostics: number; ok: boolean }

/**
 * The input from memory, other files from disk; the stdlib is parsed and its bodies checked once per
 * process (as an editor's host does), so the time goes to the input, not to re-reading std/.
 */
function fuzzHost(file: string, text: string): CompileHost {
  return {
    read: (p) => (p === file ? { text } : readSourceFile(p)),
    parse: (t, f, badBytes) => {
      if (f === file) return parse(t, f, badBytes);
      const hit = libParses.get(f);
      if (hit && hit.text === t) return hit.result;
      const result = parse(t, f, badBytes);
      libParses.set(f, { text: t, result });
      return result;
    },
    checkModule: (p) => {
      if (p === file || checkedLibs.has(p)) return p === file;
      checkedLibs.add(p);
      return true;
    },
  };
}
const libParses = new Map<string, { text: string; result: ReturnType<typeof parse> }>();
const checkedLibs = new Set<string>();

/** Compiles `text` (parse, check, lower) and throws when the compiler breaks its contract. */
export function checkContract(file: string, text: string): Outcome {
  const t0 = performance.now();
  let r: ReturnType<typeof compileFile>;
  try {
    r = compileFile(file, { host: fuzzHost(file, text) });
  } catch (e) {
    throw new Error(`compiler threw: ${(e as Error).stack ?? String(e)}`);
  }
  const ms = performance.now() - t0;
  for (const x of r.diagnostics) {
    if (!CODES.has(x.code)) throw new Error(`diagnostic without a catalogue code: ${JSON.stringify(x)}`);
    if (x.code === "TC9001") throw new Error(`internal error: ${x.message}`);
    const src = r.sources.get(x.span.file);
    const inFile = x.span.file.startsWith("<--set") || (src !== undefined && x.span.start.offset >= 0 && x.span.end.offset <= src.length && x.span.start.offset <= x.span.end.offset && x.span.start.line >= 1 && x.span.start.column >= 1);
    if (!inFile) throw new Error(`diagnostic ${x.code} with a span outside its file: ${JSON.stringify(x.span)}`);
  }
  return { ms, diagnostics: r.diagnostics.length, ok: r.ok };
}
