// Bundles the CLI with esbuild: importing chevrotain through its package entry costs ~400 ms, bundled
// ~15 ms. Code splitting keeps start-up small: each command loads its phase (compiler, runtime) on
// demand. ts-morph (TypeScript extensions only) stays external and is loaded only when used.
import { build } from "esbuild";
import { existsSync, renameSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

// Build beside dist/ and swap it in, so a CLI started meanwhile (a parallel test run) never sees a
// half-written or emptied dist/.
const tmp = `dist.tmp-${process.pid}`;

// The parser's lookahead paths and re-sync follow sets depend on the grammar alone: compute them
// here, once, and bake them into the bundle (grammar/precomputed.ts) instead of at every start.
const tablesEntry = `${tmp}-tables.mjs`;
await build({
  stdin: { contents: 'export { computeGrammarTables } from "./grammar/parser.ts";', resolveDir: ".", loader: "ts" },
  outfile: tablesEntry, bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "warning",
  define: { "process.env.TCOD_SKIP_GRAMMAR_VALIDATION": '"0"' },
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
});
let grammarTables;
try {
  grammarTables = (await import(pathToFileURL(tablesEntry).href)).computeGrammarTables();
} finally {
  rmSync(tablesEntry, { force: true });
}

await build({
  entryPoints: { tcod: "bin/cli-main.ts" },
  outdir: tmp,
  bundle: true,
  splitting: true,
  minify: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: "linked",
  chunkNames: "chunks/[name]-[hash]",
  external: ["ts-morph", "esbuild", "playwright-core"],
  // The grammar is validated by the tests (unbundled); the shipped CLI skips Chevrotain's validations.
  define: { "process.env.TCOD_SKIP_GRAMMAR_VALIDATION": '"1"', TCOD_GRAMMAR_TABLES: JSON.stringify(grammarTables) },
  banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  logLevel: "warning",
});


// `tcod check` from a V8 start-up snapshot (bin/snapshot-main.ts, started by bin/tcod): a CommonJS
// bundle with nothing external but what an extension needs, run once by `--build-snapshot`. The blob
// only works with the Node.js that built it, under the V8 flags it was built with: dist/check.blob.node
// records which Node.js, its version and the flags (bin/tcod checks; bin/snapshot-cache.ts has the same).
if (process.env.TCOD_NO_SNAPSHOT !== "1") {
  // The flags, and the package's hash seed, as bin/snapshot-cache.ts makes them (it says why): the
  // previous build's seed (dist/check.seed) carried into the new dist/, else one drawn there.
  const flagsEntry = `${tmp}-flags.mjs`;
  await build({
    stdin: { contents: 'export { packageHashSeed, snapshotFlags } from "./bin/snapshot-cache.ts";', resolveDir: ".", loader: "ts" },
    outfile: flagsEntry, bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "warning",
  });
  const { execFileSync } = await import("node:child_process");
  const { copyFileSync, mkdirSync, writeFileSync } = await import("node:fs");
  let SNAPSHOT_FLAGS;
  try {
    const { packageHashSeed, snapshotFlags } = await import(pathToFileURL(flagsEntry).href);
    if (existsSync("dist/check.seed")) copyFileSync("dist/check.seed", `${tmp}/check.seed`);
    SNAPSHOT_FLAGS = snapshotFlags(packageHashSeed(tmp));
  } finally {
    rmSync(flagsEntry, { force: true });
  }
  mkdirSync(`${tmp}/snapshot`, { recursive: true });
  // The Chevrotain parser (grammar/recovering.ts: syntax errors and recovery) stays out of the
  // snapshot's heap: valid files take the fast parser (grammar/fast.ts), and the first file that
  // does not is parsed by dist/snapshot/recovering.cjs, required then. In the snapshot bundle,
  // grammar/index.ts's import of it is a stub that requires it on first call.
  const recoveringOnDemand = {
    name: "recovering-on-demand",
    setup(b) {
      b.onResolve({ filter: /^\.\/recovering\.js$/ }, (args) =>
        /grammar[\\/]index\.ts$/.test(args.importer) ? { path: "recovering", namespace: "recovering-on-demand" } : undefined);
      b.onLoad({ filter: /.*/, namespace: "recovering-on-demand" }, () => ({
        loader: "js",
        contents: `import { createRequire } from "node:module";
let loaded;
const load = () => (loaded ??= createRequire(globalThis.__tcodModuleUrl)("./recovering.cjs"));
export const parseRecovering = (...args) => load().parseRecovering(...args);
export const parseExpressionRecovering = (...args) => load().parseExpressionRecovering(...args);
`,
      }));
    },
  };
  await build({
    entryPoints: ["grammar/recovering.ts"], outfile: `${tmp}/snapshot/recovering.cjs`,
    bundle: true, minify: true, platform: "node", format: "cjs", target: "node20", logLevel: "warning",
    define: { "process.env.TCOD_SKIP_GRAMMAR_VALIDATION": '"1"', TCOD_GRAMMAR_TABLES: JSON.stringify(grammarTables) },
  });
  await build({
    entryPoints: ["bin/snapshot-main.ts"], outfile: `${tmp}/snapshot/check.cjs`,
    bundle: true, minify: true, platform: "node", format: "cjs", target: "node20", logLevel: "warning",
    external: ["ts-morph", "esbuild", "playwright-core"],
    plugins: [recoveringOnDemand],
    define: {
      "process.env.TCOD_SKIP_GRAMMAR_VALIDATION": '"1"', TCOD_GRAMMAR_TABLES: JSON.stringify(grammarTables),
      "import.meta.url": "globalThis.__tcodModuleUrl", "import.meta.dirname": "globalThis.__tcodModuleDir",
    },
  });
  // bin/snapshot-trim.ts, run here and by bin/snapshot-cache.ts where the package is installed.
  await build({
    entryPoints: ["bin/snapshot-trim.ts"], outfile: `${tmp}/snapshot/trim.cjs`,
    bundle: true, minify: true, platform: "node", format: "cjs", target: "node20", logLevel: "warning",
  });
  const blob = `${tmp}/check.blob`;
  // Node warns that node:module and node:child_process (loaded, not used, by the check path) are "not
  // yet fully verified" in snapshots: test/cli/snapshot.test.ts verifies the check. Shown on failure.
  try {
    execFileSync(process.execPath, [...SNAPSHOT_FLAGS, "--snapshot-blob", blob, "--build-snapshot", `${tmp}/snapshot/check.cjs`], { stdio: "pipe" });
  } catch (e) {
    process.stderr.write(`${e.stderr ?? ""}${e.stdout ?? ""}`);
    throw e;
  }
  // Node.js's code for its own modules, kept in every blob, is dropped but for what a check loads.
  createRequire(import.meta.url)(`../${tmp}/snapshot/trim.cjs`).trimBlob(blob, SNAPSHOT_FLAGS);
  writeFileSync(`${tmp}/check.blob.node`, `${process.execPath}\n${process.version}\n${SNAPSHOT_FLAGS.join(" ")}\n`);
}

// The swap, last: a dist/ is whole when it appears, its blob and the flags that run it included (a
// parallel build swaps in its own whole dist/, never half of one).
const old = `dist.old-${process.pid}`;
if (existsSync("dist")) renameSync("dist", old);
renameSync(tmp, "dist");
rmSync(old, { recursive: true, force: true });
