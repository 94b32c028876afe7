#!/usr/bin/env bash
# The embedded study (issues 12 and 16): every method × seed plan of bench/study/embedded.tcod, run
# with the embedded backend on the CPU, STUDY_PARALLEL at a time, into one output folder. Needs only
# Node ≥ 20, bash and coreutils, and the CLI bundle (`npm run build` → dist/; node_modules is not
# needed to run it). Summarise the output afterwards, anywhere, with bench/study/summarize-embedded.sh.
#
#   OUT=/tmp/study STUDY_PARALLEL=16 bash bench/study/run-embedded.sh [--set LET=VALUE …]
#
# Settings (environment):
#   OUT             where the results go (default /tmp/tcod-study-embedded): study-embedded-runs.tgz,
#                   study.log, machine.json — three files
#   STUDY_WORK      scratch folder for plans/ and runs/ (default: OUT); cleared of earlier runs
#   STUDY_EXAMPLE   a .tcod to run beside the study, from its start, on a core of its own (give
#                   STUDY_PARALLEL one less than the CPUs), e.g. examples/texthouse/tcod-f2b.tcod:
#                   its wall/user/sys seconds and its evaluations go into the tarball as
#                   runs/example/ (the deadline applies to it too)
#   STUDY_PARALLEL  runs at once (default: the number of CPUs, `nproc`)
#   STUDY_METHODS   extended regex on the curriculum names (default: all six)
#   STUDY_SEEDS     seeds to run, e.g. "1 2" (default: all of the file's sweep)
#   STUDY_DEADLINE  seconds after the start (default 0: none). A run still going then gets SIGINT:
#                   it ends its step, checkpoints and stops (exit 130); runs not yet started are
#                   skipped. What they wrote is kept and summarised as it stands.
#   TCOD            how to call the CLI (default: node bin/tcod.mjs)
# `--set` overrides the file's lets (tcod compile --set), e.g. a smoke test:
#   OUT=/tmp/s STUDY_METHODS='opd_plain|tcod_f2b' STUDY_SEEDS=1 bash bench/study/run-embedded.sh \
#     --set 'budget=3 steps' --set 'half=1 step' --set 'eval_every=3 steps' --set 'eval_tasks=2 tasks'
#
# Writes to STUDY_WORK: plans/, runs/NAME/ (each run's folder: metrics.jsonl, plan.json, run.json,
# report.html, cpu.json with the run's wall/user/sys seconds; checkpoints are deleted after the run),
# runs/NAME.log; to OUT: study.log, machine.json and study-embedded-runs.tgz (runs/ without
# checkpoints, episodes and TensorBoard files: what summarize-embedded.sh reads; a few MB).
set -euo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/tcod-study-embedded}
WORK=${STUDY_WORK:-$OUT}
STUDY_EXAMPLE=${STUDY_EXAMPLE:-}
STUDY_PARALLEL=${STUDY_PARALLEL:-$(nproc)}
STUDY_METHODS=${STUDY_METHODS:-'[^/@]+'}   # matched against the whole curriculum name
STUDY_SEEDS=${STUDY_SEEDS:-}
STUDY_DEADLINE=${STUDY_DEADLINE:-0}
TCOD=${TCOD:-node bin/tcod.mjs}
START=$(date +%s)
rm -rf "$WORK/plans" "$WORK/runs" "$OUT/study-embedded-runs.tgz"
mkdir -p "$WORK/plans" "$WORK/runs" "$OUT"
source bench/study/common.sh
export STUDY_METHODS STUDY_SEEDS TCOD
mapfile -t POINTS < <(study_points bench/study/embedded.tcod "$WORK/plans" "$@")
[ ${#POINTS[@]} -gt 0 ] || { echo "study: no points (a compile error above, or STUDY_METHODS='$STUDY_METHODS' STUDY_SEEDS='$STUDY_SEEDS' match none)" >&2; exit 1; }
cores=$(nproc)
study_machine_json "$OUT" "$STUDY_PARALLEL" "$STUDY_DEADLINE" "$@"
echo "study: $(ls "$WORK"/plans/*.plan.json | wc -l) plans compiled; $STUDY_PARALLEL at a time on $cores CPUs; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/study.log"
EXAMPLE_PID=
if [ -n "$STUDY_EXAMPLE" ]; then
  echo "example $STUDY_EXAMPLE beside the study" | tee -a "$OUT/study.log"
  (
    ex="$WORK/runs/example"
    limit=(); [ "$STUDY_DEADLINE" -gt 0 ] && limit=(timeout --signal=INT --kill-after=30 "$STUDY_DEADLINE")
    { TIMEFORMAT='{"wall": %R, "user": %U, "sys": %S}'; time ${limit[@]+"${limit[@]}"} $TCOD run "$STUDY_EXAMPLE" --out "$ex" --quiet --no-tensorboard >"$WORK/runs/example.log" 2>&1 || true; } 2>"$WORK/runs/example.time"
    mkdir -p "$ex"; tail -n1 "$WORK/runs/example.time" > "$ex/cpu.json"; rm -rf "$ex/checkpoint"
    echo "example done: $(cat "$ex/cpu.json")" | tee -a "$OUT/study.log"
  ) &
  EXAMPLE_PID=$!
fi

run_one() {
  local plan=$1 name out left t0 code=0
  name=$(basename "$plan" .plan.json)
  out="$WORK/runs/$name"
  local limit=()
  if [ "$STUDY_DEADLINE" -gt 0 ]; then
    left=$((START + STUDY_DEADLINE - $(date +%s)))
    if [ "$left" -le 5 ]; then echo "skipped $name: past the deadline" | tee -a "$OUT/study.log"; return 0; fi
    limit=(timeout --signal=INT --kill-after=30 "$left")
  fi
  t0=$(date +%s)
  echo "start   $name (load $(cut -d' ' -f1 /proc/loadavg))" | tee -a "$OUT/study.log"
  # The child's own wall/user/sys seconds (bash's `time`, so no /usr/bin/time is needed).
  { TIMEFORMAT='{"wall": %R, "user": %U, "sys": %S}'; time ${limit[@]+"${limit[@]}"} $TCOD run "$plan" --out "$out" --quiet --no-tensorboard >"$WORK/runs/$name.log" 2>&1 || code=$?; } 2>"$WORK/runs/$name.time"
  mkdir -p "$out"
  tail -n1 "$WORK/runs/$name.time" > "$out/cpu.json"
  rm -rf "$out/checkpoint"
  echo "$( [ "$code" = 0 ] && echo done || echo "exit $code") $name in $(( $(date +%s) - t0 )) s: $(cat "$out/cpu.json")" | tee -a "$OUT/study.log"
}
export -f run_one
export OUT WORK START STUDY_DEADLINE TCOD

# The points in study_points' seed-major order.
for p in "${POINTS[@]}"; do echo "$WORK/plans/$p.plan.json"; done \
  | xargs -P "$STUDY_PARALLEL" -I{} bash -c 'run_one "$@"' _ {}

[ -n "$EXAMPLE_PID" ] && wait "$EXAMPLE_PID"
echo "study: finished in $(( $(date +%s) - START )) s; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$OUT/study.log"
cp "$OUT/study.log" "$OUT/machine.json" "$WORK/runs/"
tar -C "$WORK" -czf "$OUT/study-embedded-runs.tgz" --exclude=checkpoint --exclude='episodes.jsonl' --exclude='events.out.tfevents*' runs
ls -l "$OUT/study-embedded-runs.tgz"
