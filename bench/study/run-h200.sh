#!/usr/bin/env bash
# The H200 study (issue 12 item 6): every method × seed point of bench/study/h200.tcod, distilled
# from one teacher into one student initialisation, in device calls of at most 10 minutes. Run from
# the repo root with node ≥ 20 on PATH and dist/ built; a python with torch + transformers runs the
# workers ($TCOD_PYTHON, default python3). Summarise afterwards, anywhere, with
# bench/study/summarize-h200.sh.
#
#   OUT=$OUT/study WORK=runs/study-h200 STUDY_DEADLINE=540 bash bench/study/run-h200.sh [--set LET=VALUE …]
#
# Phase 1, once (skipped when WORK holds both checkpoints): bench/h200/learn.sh PHASES=1 trains the
#   teacher (teacher-X: TEACHER_RECIPE, learn.sh's TEACHERS form) and the student initialisation
#   (student-init: INIT_RECIPE) side by side, with a deadline of P1_S seconds, evaluated greedily on
#   every task of each split at their last step.
# Phase 2: the points (STUDY_METHODS × STUDY_SEEDS), STUDY_PARALLEL at a time, each with a worker of
#   its own on its own port (PORT0 + the point's index). A point whose folder holds a checkpoint is
#   resumed, a finished one skipped; STUDY_DEADLINE seconds after this script started the runs still
#   going get SIGINT (they end their step, checkpoint and stop), and points not yet started wait for
#   the next call. A second call on the same machine (still warm: WORK is kept) continues the study.
#
# Settings (environment):
#   OUT             results (default /tmp/tcod-study-h200): study-h200-runs.tgz, study.log, machine.json
#                   (the tgz's runs/calls.jsonl holds every call's machine.json)
#   WORK            run folders with weights (default runs/study-h200, ignored by git)
#   TEACHER_RECIPE  default "X:bench/h200/teacher-12x768.json:32:0.0006:1000:0:admissible"
#   INIT_RECIPE     default "examples/texthouse/gpu/student.json:32:0.001:300"
#   P1_S            phase 1's deadline in seconds (default 420)
#   STUDY_PARALLEL  points at once on the GPU (default 5)
#   STUDY_METHODS   extended regex on the curriculum names (default: all five)
#   STUDY_SEEDS     seeds, e.g. "1 2" (default: the file's sweep, 1 2 3)
#   STUDY_DEADLINE  seconds after the start (default 0: none)
#   CKPT            checkpoint every … steps (default 10)
#   PORT0           first port minus one (default 8600)
# `--set` overrides the file's lets for every point, e.g. a CPU smoke test with tiny models:
#   DEV=cpu TEACHER_RECIPE="X:/tmp/tiny.json:4:0.001:3" INIT_RECIPE="/tmp/tiny.json:4:0.001:3" STUDY_SEEDS=1 \
#     bash bench/study/run-h200.sh --set 'budget=2 steps' --set 'eval_every=2 steps'
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/tcod-study-h200}
WORK=${WORK:-runs/study-h200}
mkdir -p "$OUT" "$WORK/runs" && OUT=$(cd "$OUT" && pwd) && WORK=$(cd "$WORK" && pwd)
TEACHER_RECIPE=${TEACHER_RECIPE:-"X:bench/h200/teacher-12x768.json:32:0.0006:1000:0:admissible"}
INIT_RECIPE=${INIT_RECIPE:-"examples/texthouse/gpu/student.json:32:0.001:300"}
STUDY_PARALLEL=${STUDY_PARALLEL:-5}
STUDY_METHODS=${STUDY_METHODS:-'[^/@]+'}
STUDY_SEEDS=${STUDY_SEEDS:-}
STUDY_DEADLINE=${STUDY_DEADLINE:-0}
CKPT=${CKPT:-10}
PORT0=${PORT0:-8600}
export TCOD_PYTHON=${TCOD_PYTHON:-python3}
export TCOD_WORKER_ARGS="--device ${DEV:-cuda} --token-budget ${BUDGET:-65536}"
START=$(date +%s)
log() { echo "[$(( $(date +%s) - START ))s] $*" | tee -a "$OUT/study.log"; }
TNAME=${TEACHER_RECIPE%%:*}
TDIR="$WORK/teacher-$TNAME/checkpoint/student"
IDIR="$WORK/student-init/checkpoint/student"

# Phase 1: the teacher and the initialisation, unless an earlier call trained them to their last
# step (`tcod run` logs `done:`; a run its deadline stopped has a checkpoint and is resumed).
p1_done() { grep -q '^done: ' "$WORK/teacher-$TNAME.log" 2>/dev/null && grep -q '^done: ' "$WORK/student-init.log" 2>/dev/null; }
if ! p1_done; then
  log "phase 1: teacher-$TNAME ($TEACHER_RECIPE) and student-init ($INIT_RECIPE), deadline ${P1_S:-420} s"
  learn_steps=${TEACHER_RECIPE#*:*:*:*:}; learn_steps=${learn_steps%%:*}
  PHASES=1 WORK="$WORK" EVAL_TEMP=0 TEACHERS="$TEACHER_RECIPE" STUDENT_INIT="$INIT_RECIPE" T_EVAL="$learn_steps" \
    P1_S="${P1_S:-420}" GRACE=15 CKPT="$learn_steps" PORT0=$((PORT0 - 100)) bash bench/h200/learn.sh "$OUT/phase1" >> "$OUT/study.log" 2>&1
fi
p1_done || { log "phase 1 has not finished (see $OUT/study.log): phase 2 waits for the next call, which resumes it"; exit 1; }
mkdir -p "$WORK/phase1"
for d in "teacher-$TNAME" student-init; do cp "$WORK/$d/metrics.jsonl" "$WORK/phase1/$d.metrics.jsonl" 2>/dev/null; done

# Phase 2: the points, seed-major (bench/study/common.sh). Their plans are compiled only to list them:
# each point runs from the .tcod with its own worker port (`--curriculum POINT --set url=…`).
source bench/study/common.sh
export STUDY_METHODS STUDY_SEEDS
mapfile -t POINTS < <(study_points bench/study/h200.tcod "$WORK/plans" "$@")
[ ${#POINTS[@]} -gt 0 ] || { log "no study points match STUDY_METHODS='$STUDY_METHODS' STUDY_SEEDS='$STUDY_SEEDS'"; exit 1; }
log "phase 2: ${#POINTS[@]} points, $STUDY_PARALLEL at a time; teacher $TDIR, student $IDIR"
study_machine_json "$OUT" "$STUDY_PARALLEL" "$STUDY_DEADLINE" "$@"

# The --set arguments, for every point (one per line).
printf '%s\n' "$@" > "$WORK/sets.txt"
# run_one INDEX POINT: one point, in the background of xargs; its worker is stopped by its port.
run_one() {
  local i=$1 point=$2 name out port left cur code=0 sets=()
  while IFS= read -r line; do [ -n "$line" ] && sets+=("$line"); done < "$WORK/sets.txt"
  name=$point; out="$WORK/runs/$name"; port=$((PORT0 + i)); cur=${point%%@*}
  # `tcod run` prints `done: N steps in DIR` when a run completes (an interrupted one exits 130).
  if grep -q '^done: ' "$WORK/runs/$name.log" 2>/dev/null; then echo "finished $name (earlier call)" | tee -a "$OUT/study.log"; return 0; fi
  local limit=()
  if [ "$STUDY_DEADLINE" -gt 0 ]; then
    left=$((START + STUDY_DEADLINE - $(date +%s)))
    if [ "$left" -le 30 ]; then echo "waiting $name: past the deadline (the next call runs it)" | tee -a "$OUT/study.log"; return 0; fi
    limit=(timeout --signal=INT --kill-after=30 "$left")
  fi
  echo "start   $name (port $port)" | tee -a "$OUT/study.log"
  if [ -f "$out/checkpoint/state.json" ]; then
    ${limit[@]+"${limit[@]}"} node bin/tcod.mjs run --resume "$out" --quiet --no-tensorboard >> "$WORK/runs/$name.log" 2>&1 || code=$?
  else
    ${limit[@]+"${limit[@]}"} node bin/tcod.mjs run bench/study/h200.tcod --curriculum "$point" --out "$out" --quiet --no-tensorboard \
      --set "url=\"http://127.0.0.1:$port\"" --set "teacher_dir=\"$TDIR\"" --set "student_init=\"$IDIR\"" \
      --set "$cur.checkpoint_every=$CKPT steps" ${sets[@]+"${sets[@]}"} > "$WORK/runs/$name.log" 2>&1 || code=$?
  fi
  pkill -9 -f -- "--port $port( |\$)" 2>/dev/null
  local how="exit $code"; [ "$code" = 0 ] && how=done; [ "$code" = 124 ] && how="stopped at the deadline (the next call resumes it)"
  echo "$how $name: $(grep -c '"kind":"train"' "$out/metrics.jsonl" 2>/dev/null || echo 0) steps" | tee -a "$OUT/study.log"
}
export -f run_one
export OUT WORK START STUDY_DEADLINE CKPT PORT0 TDIR IDIR

for i in "${!POINTS[@]}"; do printf '%s\0%s\0' "$((i + 1))" "${POINTS[$i]}"; done \
  | xargs -0 -n 2 -P "$STUDY_PARALLEL" bash -c 'run_one "$@"' _
finished=0; for p in "${POINTS[@]}"; do grep -q '^done: ' "$WORK/runs/$p.log" 2>/dev/null && finished=$((finished + 1)); done
log "phase 2: done for now; $finished of ${#POINTS[@]} points finished"
# Each call's machine.json is a line of runs/calls.jsonl (the summary lists the calls); study.log is this call's.
cp "$OUT/machine.json" "$OUT/study.log" "$WORK/runs/" && cat "$OUT/machine.json" >> "$WORK/runs/calls.jsonl"
tar -C "$WORK" -czf "$OUT/study-h200-runs.tgz" --exclude=checkpoint --exclude='events.out.tfevents*' --exclude='backend-wait.jsonl' runs phase1
ls -l "$OUT/study-h200-runs.tgz" | tee -a "$OUT/study.log"
