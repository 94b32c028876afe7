#!/usr/bin/env bash
# pick-copies.sh WORK TEACHER "STEPS…" THRESHOLD: prints the kept copies of teacher-TEACHER
# ($WORK/kept/TEACHER@STEP) in the order a student should use them: first those whose valid_seen
# success at that step is ≥ THRESHOLD, earliest first (the least sharp teacher that meets it), then
# the rest, best first. One "STEP SUCCESS" line each; a copy without an evaluation at its step is left out.
# Used between device calls of bench/h200/learn.sh, where the call cannot wait for a person to choose.
set -euo pipefail
WORK=$1 T=$2 STEPS=$3 MIN=$4
node -e '
const fs = require("fs");
const [work, t, steps, min] = process.argv.slice(1);
const seen = new Map();
for (const l of fs.readFileSync(`${work}/teacher-${t}/metrics.jsonl`, "utf8").split("\n")) {
  if (!l) continue;
  const r = JSON.parse(l);
  if (r.kind === "eval" && r.name === "valid_seen") seen.set(r.step, r.successRate);
}
const copies = steps.split(/\s+/).filter(Boolean).map(Number)
  .filter((k) => seen.has(k) && fs.existsSync(`${work}/kept/${t}@${k}/student`))
  .map((k) => ({ k, s: seen.get(k) }));
const good = copies.filter((c) => c.s >= Number(min)).sort((a, b) => a.k - b.k);
const rest = copies.filter((c) => c.s < Number(min)).sort((a, b) => b.s - a.s);
for (const c of [...good, ...rest]) console.log(`${c.k} ${c.s}`);
' "$WORK" "$T" "$STEPS" "$MIN"
