#!/usr/bin/env bash
# The embedded study (issue 12): every method × seed plan of bench/study/embedded.tcod, run with the
# embedded backend on the CPU, compared with `tcod compare`, summarised into
# bench/results/study-embedded.{html,json,md} (the .md is written from study-embedded.table.md and
# the notes in bench/results/study-embedded.notes.md, when present).
#
#   bash bench/study/run-embedded.sh            # WORK=/tmp/tcod-study-embedded JOBS=3
# Runs are niced; JOBS of them at a time. Each run's wall/user/sys seconds go to RUN_DIR/cpu.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
WORK=${WORK:-/tmp/tcod-study-embedded}
JOBS=${JOBS:-3}
mkdir -p "$WORK/plans" "$WORK/runs" bench/results
node bin/tcod.mjs compile bench/study/embedded.tcod --out "$WORK/plans" >/dev/null
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)  ($(nproc) cores)" | tee "$WORK/load.txt"
run_one() {
  local plan=$1 name out t0 t1
  name=$(basename "$plan" .plan.json)
  out="$WORK/runs/$name"
  rm -rf "$out"
  t0=$(date +%s.%N)
  # bash's `times` is per shell; /proc/self/stat is not portable: measure the child with TIMEFORMAT.
  { TIMEFORMAT='{"wall": %R, "user": %U, "sys": %S}'; time nice -n 10 node bin/tcod.mjs run "$plan" --out "$out" --quiet >"$WORK/runs/$name.log" 2>&1; } 2>"$WORK/runs/$name.time"
  cp "$WORK/runs/$name.time" "$out/cpu.json"
  t1=$(date +%s.%N)
  echo "$name done in $(echo "$t1 - $t0" | bc) s (load $(cut -d' ' -f1 /proc/loadavg))"
}
export -f run_one
export WORK
# Seed-major order (every method's seed 1 first), so a study cut short still covers every method.
ls "$WORK"/plans/*.plan.json | awk -F'run_seed=' '{print $2 "\t" $0}' | sort -n -k1,1 -s | cut -f2- \
  | xargs -P "$JOBS" -I{} bash -c 'run_one "$@"' _ {}
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$WORK/load.txt"
node bin/tcod.mjs compare "$WORK"/runs/*/ --out bench/results/study-embedded.html --json "$WORK/compare.json" --level 0.25 \
  --title "texthouse study on the embedded backend: OPD, TCOD-f2b, TCOD-b2f, TurnOPD, ATOD (3 seeds each)"
node_modules/.bin/esbuild bench/study/summarize.ts --bundle --platform=node --format=esm --packages=external \
  --outfile=dist/study-summarize.mjs --log-level=error
node dist/study-summarize.mjs bench/results "$WORK"/runs/*/
cp "$WORK/load.txt" bench/results/study-embedded.load.txt
