/**
 * The user docs as a new user reads them: every fenced `tcod` block checks, every `tcod COMMAND --flag`
 * named is a flag of that command, every file of this repository named exists, every diagnostic code
 * named is in the catalogue, and the console output the README shows for a command is what it prints.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");
const tcod = (args: string[], cwd = ROOT) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd, encoding: "utf8" });

const subReadmes = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && e.name === "README.md")
    .map((e) => relative(ROOT, join(e.parentPath, e.name)));

/** The user-facing docs (generated ones included: their paths and codes are read like the others). */
const DOCS = [
  "README.md",
  ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`),
  ...subReadmes("examples"),
  ...subReadmes("runtime"),
  "worker/README.md",
  "bridges/README.md",
];

interface Block { doc: string; line: number; lang: string; text: string }

function blocks(doc: string): Block[] {
  const out: Block[] = [];
  const lines = readFileSync(join(ROOT, doc), "utf8").split("\n");
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*```(\w*)\s*$/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    while (++i < lines.length && !/^\s*```\s*$/.test(lines[i]!)) body.push(lines[i]!);
    out.push({ doc, line: start + 1, lang: open[1]!, text: body.join("\n") });
  }
  return out;
}

const ALL_BLOCKS = DOCS.flatMap(blocks);

/** Text outside fenced blocks, with its line numbers. */
function prose(doc: string): { line: number; text: string }[] {
  const out: { line: number; text: string }[] = [];
  let inBlock = false;
  readFileSync(join(ROOT, doc), "utf8").split("\n").forEach((text, i) => {
    if (/^\s*```/.test(text)) inBlock = !inBlock;
    else if (!inBlock) out.push({ line: i + 1, text });
  });
  return out;
}

/**
 * A curriculum the field lines of a fragment are checked in: a block that declares nothing but
 * imports and `field: value` lines (docs show a field in isolation) has each such line put here.
 */
const FIELD_HOST = (field: string) => `import { texthouse } from "std/envs"
model m { path: "oracle"  serve: embedded() }
curriculum c {
  teacher: m  student: m  env: texthouse(split: "train")  steps: 40
  ${field}
}
`;

const DECLARATION = /^(import|export|let|fn|model|curriculum|sweep)\b/;

/** The .tcod files a block is checked as: itself, or one per field line of a fragment. */
function tcodFiles(b: Block): string[] {
  const lines = b.text.split("\n").filter((l) => l.trim() !== "" && !l.trim().startsWith("//"));
  const imports = lines.filter((l) => l.startsWith("import "));
  const rest = lines.filter((l) => !l.startsWith("import "));
  if (rest.every((l) => !DECLARATION.test(l))) return rest.map((l) => imports.join("\n") + "\n" + FIELD_HOST(l.trim()));
  return [b.text + "\n"];
}

describe("fenced tcod blocks in the docs check", () => {
  const tcodBlocks = ALL_BLOCKS.filter((b) => b.lang === "tcod");
  it("there are some", () => expect(tcodBlocks.length).toBeGreaterThanOrEqual(6));

  it.each(tcodBlocks.map((b) => [`${b.doc}:${b.line}`, b] as const))("%s", (_, b) => {
    expect(b.text, "a block the user copies is whole: no `…` in it (show a fragment as field lines)").not.toContain("…");
    const dir = mkdtempSync(join(tmpdir(), "tcod-docs-"));
    // A TypeScript block headed `// NAME.ts` of the same doc is the file a snippet imports as "./NAME.ts".
    for (const ts of ALL_BLOCKS.filter((x) => x.doc === b.doc && x.lang === "ts")) {
      const name = /^\/\/ ([\w-]+\.ts)\b/.exec(ts.text)?.[1];
      if (name) writeFileSync(join(dir, name), ts.text);
    }
    mkdirSync(join(dir, "node_modules"));
    symlinkSync(ROOT, join(dir, "node_modules", "tcod")); // `import type … from "tcod/extension"`
    const files = tcodFiles(b).map((text, i) => {
      const f = join(dir, `snippet${i}.tcod`);
      writeFileSync(f, text);
      return f;
    });
    const r = tcod(["check", ...files], dir);
    expect(r.status, `${r.stderr}\n${files.map((f) => readFileSync(f, "utf8")).join("\n---\n")}`).toBe(0);
  });
});

/** Each command's flags as `tcod COMMAND --help` lists them. */
function flagsOf(command: string): Set<string> {
  const r = tcod([...command.split(" "), "--help"]);
  expect(r.status, r.stderr).toBe(0);
  return new Set([...r.stdout.matchAll(/^\s+(?:-\w, )?(--[a-z][a-z-]*)/gm)].map((m) => m[1]!));
}

const COMMANDS = ["check", "compile", "explain", "plot", "compare", "run", "metrics", "export trinity", "import trinity", "fmt", "lsp"];
/** Flags no `--help` lists, set by tcod itself (a sweep's points: bin/sweep.ts). */
const HIDDEN = new Set(["--watch-parent"]);

describe("every flag the docs give a tcod command is one of its flags", () => {
  it("tcod COMMAND … --flag, in prose and in blocks", () => {
    const flags = new Map(COMMANDS.map((c) => [c, flagsOf(c)]));
    const bad: string[] = [];
    for (const doc of DOCS) {
      readFileSync(join(ROOT, doc), "utf8").replace(/\\\n/g, " ").split("\n").forEach((text, i) => {
        // A command runs to the end of its code span, a `#` comment, or the next command on the line.
        const spans = [...text.matchAll(/`([^`]+)`/g)].map((m) => m[1]!);
        if (/^\s*(\$ |npx |tcod |bin\/tcod |[A-Z_]+=\S* )/.test(text)) spans.push(text.replace(/\s#\s.*$/, ""));
        for (const s of spans) {
          for (const m of s.matchAll(/\btcod (export trinity|import trinity|[a-z]+)((?:(?!\btcod )[^|])*)/g)) {
            const known = flags.get(m[1]!);
            if (!known) continue;
            for (const f of m[2]!.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)) {
              if (!known.has(f[0]) && !HIDDEN.has(f[0]) && f[0] !== "--help") bad.push(`${doc}:${i + 1}: tcod ${m[1]} ${f[0]}`);
            }
          }
        }
      });
    }
    expect(bad).toEqual([]);
  });
});

describe("every flag the docs give the worker is one of its flags", () => {
  it("python -m tcod_worker …, torchrun -m tcod_worker …, TCOD_WORKER_ARGS=\"…\"", () => {
    const dir = join(ROOT, "worker/tcod_worker");
    const known = new Set(readdirSync(dir).filter((f) => f.endsWith(".py"))
      .flatMap((f) => [...readFileSync(join(dir, f), "utf8").matchAll(/add_argument\(\s*"(--[a-z][a-z-]*)"/g)].map((m) => m[1]!)));
    expect(known.has("--model")).toBe(true);
    const bad: string[] = [];
    for (const doc of DOCS) {
      // A shell line continued with `\` is one command.
      readFileSync(join(ROOT, doc), "utf8").replace(/\\\n/g, " ").split("\n").forEach((text, i) => {
        const uses = [...text.matchAll(/-m tcod_worker\b([^`#|]*)/g), ...text.matchAll(/TCOD_WORKER_ARGS="([^"]*)"/g)].map((m) => m[1]!);
        for (const u of uses) {
          for (const f of u.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)) if (!known.has(f[0])) bad.push(`${doc}:${i + 1}: tcod_worker ${f[0]}`);
        }
      });
    }
    expect(bad).toEqual([]);
  });
});

const TOP = new Set(readdirSync(ROOT));
/** Paths the docs name that a checkout makes, not holds (installs and builds). */
const MADE = [/^node_modules\//, /(^|\/)\.venv(\/|$)/, /^editors\/vscode\/tcod\.vsix$/, /^dist\//];

/** `a{b,c}d` → `abd`, `acd`. */
function braces(s: string): string[] {
  const m = /\{([^{}]*)\}/.exec(s);
  if (!m) return [s];
  return m[1]!.split(",").flatMap((o) => braces(s.slice(0, m.index) + o + s.slice(m.index + m[0].length)));
}

/** A path exists from the doc's folder or the repository root; a `*` stands for any name there, `.js` for the `.ts` it is built from. */
function exists(doc: string, p: string): boolean {
  const glob = p.indexOf("*");
  const q = glob >= 0 ? p.slice(0, p.lastIndexOf("/", glob) + 1) : p;
  return [join(ROOT, dirname(doc)), ROOT].some((base) => existsSync(join(base, q)) || existsSync(join(base, q.replace(/\.js$/, ".ts"))));
}

describe("every file of this repository the docs name exists", () => {
  it("links and code spans", () => {
    const bad: string[] = [];
    // docs/REFERENCES.md names files of other repositories (its sources).
    for (const doc of DOCS.filter((d) => d !== "docs/REFERENCES.md")) {
      for (const { line, text } of prose(doc)) {
        const links = [...text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!).filter((l) => !/^[a-z]+:/.test(l));
        for (const l of links) if (!existsSync(join(ROOT, dirname(doc), l))) bad.push(`${doc}:${line}: link ${l}`);
        // In a code span every word that starts with a folder of this repository; in plain prose those
        // that name a file (an extension) or a folder (a trailing `/`).
        const spans = [...text.matchAll(/`([^`]+)`/g)].flatMap((m) => m[1]!.split(/\s+/));
        const bare = text.replace(/`[^`]*`/g, " ").split(/\s+/).filter((w) => /\.\w+[)"'.,;:]*$|\/[)"'.,;:]*$/.test(w));
        for (const word of [...spans, ...bare]) {
          const p = word.replace(/^[("'\[]+|[)"'.,;:\]]+$/g, "").replace(/:\d+(:\d+)?$/, "");
          if (!/^[\w.-]+\/[\w./{},*@-]*$/.test(p) || !TOP.has(p.split("/")[0]!)) continue;
          for (const q of braces(p)) if (!MADE.some((r) => r.test(q)) && !exists(doc, q)) bad.push(`${doc}:${line}: ${q}`);
        }
      }
    }
    expect(bad).toEqual([]);
  });
});

describe("every diagnostic code the docs name is in the catalogue", () => {
  it("TCnnnn", () => {
    const catalogue = new Set([...readFileSync(join(ROOT, "docs/diagnostics.md"), "utf8").matchAll(/^(?:### |\| )(TC\d{4})\b/gm)].map((m) => m[1]!));
    const bad = DOCS.flatMap((doc) => [...readFileSync(join(ROOT, doc), "utf8").matchAll(/\bTC\d{4}\b/g)].map((m) => m[0]).filter((c) => !catalogue.has(c)).map((c) => `${doc}: ${c}`));
    expect(bad).toEqual([]);
  });
});

describe("console blocks of the README print what they show", () => {
  // Commands that read the sources only (a run's are measured in bench/results/): each line shown is
  // printed, in order; a line ending in `…` is a prefix, a line `…` alone stands for lines left out.
  const runnable = ALL_BLOCKS.filter((b) => b.doc === "README.md" && b.lang === "console")
    .flatMap((b) => b.text.split(/^(?=\$ )/m))
    .filter((c) => /^\$ npx tcod (explain|check|plot) /.test(c) && !c.includes("--trace"));
  it("there are some", () => expect(runnable.length).toBeGreaterThanOrEqual(1));

  it.each(runnable.map((c) => [c.split("\n")[0]!, c] as const))("%s", (_, c) => {
    const [command, ...shown] = c.trimEnd().split("\n");
    const r = tcod(command!.replace(/^\$ npx tcod /, "").split(/\s+/));
    expect(r.status, r.stderr).toBe(0);
    const printed = r.stdout.split("\n");
    let at = 0;
    for (const line of shown) {
      if (line.trim() === "…") continue;
      const want = line.endsWith("…") ? line.slice(0, -1) : line;
      const found = printed.findIndex((p, i) => i >= at && (line.endsWith("…") ? p.startsWith(want) : p === want));
      expect(found, `not printed (after line ${at}): ${line}\n${r.stdout}`).toBeGreaterThanOrEqual(0);
      // A line left out between two shown lines must be marked with a `…` line.
      if (found > at && at > 0) expect(shown[shown.indexOf(line) - 1]?.trim(), `lines left out before: ${line}`).toBe("…");
      at = found + 1;
    }
  });
});
