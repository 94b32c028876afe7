// Paired A/B of `compileFile` (what `tcod check FILE` runs) between two checkouts, in one process: each
// round compiles FILE with build A, then with build B (a full GC before each), and the ratio B/A of
// the two CPU times is that round's result; the median of the rounds is the answer. Both builds see
// the same machine load at nearly the same moment, so on a shared machine this resolves changes of a
// few percent that separate processes (bench/check-size.bench.mjs with AGAINST=DIR) cannot. Start-up
// is not included (each build is warmed up by one compile of FILE first).
//
// Each checkout's compiler is bundled (esbuild, from this checkout) into DIR/dist/bench/compile-ab.mjs,
// Chevrotain included: two builds importing one Chevrotain would share its functions' type feedback,
// and slow each other down.
//   nice -n 10 node --expose-gc bench/check-size-ab.mjs FILE ROUNDS DIR_A DIR_B
// FILE: e.g. a file bench/check-size.bench.mjs generates (1 MB: 8 rounds take about a minute; 10 MB
// needs --max-old-space-size=4000).
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { build } from "esbuild";

const [file, rounds = "8", dirA, dirB] = process.argv.slice(2);
if (!file || !dirA || !dirB || typeof gc !== "function") {
  console.error("usage: node --expose-gc bench/check-size-ab.mjs FILE ROUNDS DIR_A DIR_B");
  process.exit(2);
}

async function bundle(dir) {
  const outfile = join(resolve(dir), "dist/bench/compile-ab.mjs");
  await build({
    stdin: { contents: 'export { compileFile } from "./compiler/index.ts";', resolveDir: resolve(dir), loader: "ts" },
    outfile, bundle: true, platform: "node", format: "esm", target: "node20", logLevel: "warning",
    external: ["ts-morph", "esbuild", "playwright-core"],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  return import(pathToFileURL(outfile).href);
}

const builds = [await bundle(dirA), await bundle(dirB)];
for (const m of builds) if (!m.compileFile(file).ok) throw new Error(`${file} does not check`);
const cpu = [[], []];
const wall = [[], []];
for (let r = 0; r < Number(rounds); r++) {
  builds.forEach((m, i) => {
    gc();
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    m.compileFile(file);
    const c = process.cpuUsage(c0);
    wall[i].push((performance.now() - t0) / 1000);
    cpu[i].push((c.user + c.system) / 1e6);
  });
}
const median = (xs) => [...xs].sort((x, y) => x - y)[xs.length >> 1];
const ratios = cpu[1].map((x, k) => x / cpu[0][k]);
const f = (xs) => xs.map((x) => x.toFixed(2)).join(" ");
console.log(`A ${dirA}: CPU s ${f(cpu[0])}; wall s ${f(wall[0])}`);
console.log(`B ${dirB}: CPU s ${f(cpu[1])}; wall s ${f(wall[1])}`);
console.log(`B/A CPU per round ${f(ratios)}; median ${median(ratios).toFixed(3)}`);
