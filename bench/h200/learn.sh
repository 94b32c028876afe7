#!/usr/bin/env bash
# The GPU learning runs of texthouse, in one device call (run from the repo root):
#   bench/h200/learn.sh OUT_DIR
# Phase 1, in parallel on one GPU (each `tcod run` starts and stops its own worker on its own port):
#   - SFT teachers from scratch on the observable expert's whole trajectories
#     (examples/texthouse/gpu/sft-teacher.tcod), one run per entry of $TEACHERS;
#   - the students' common initialisation: the student-sized model SFT'd briefly the same way
#     ($STUDENT_INIT), since the methods distil into a student that can already act, as the
#     papers' instruct models can (a from-scratch student is run beside them as a control).
# Phase 2, in parallel: the students of $STUDENTS, each distilled from the phase-1 teacher with the
# best last valid_seen success (examples/texthouse/gpu/<method>.tcod: opd is k1 reverse-KL OPD).
# Every run evaluates on valid_seen, valid_unseen and hard. A phase ends at its deadline: its runs
# get SIGINT, finish the step in hand, checkpoint and stop (the last evaluation before that stands).
# Output: OUT_DIR/runs.tar.gz (each run's metrics.jsonl, episodes.jsonl, plan.json, log), OUT_DIR/learn.json
# (bench/h200/learn-summary.mjs), OUT_DIR/gpu.csv (nvidia-smi). Needs node ≥ 20 on PATH (bin/tcod.mjs
# + dist/) and a python with torch/transformers ($TCOD_PYTHON, default python3).
#
# Entries: TEACHERS="name:config.json:tasks_per_step:peak_lr:steps[:noise[:noise_from[:seed]]] …"  STUDENT_INIT="config.json:tasks:peak_lr:steps[:noise[:noise_from]]"
#          (sft-teacher.tcod: warm-up then cosine to peak_lr/10 at `steps`; noise = DART noise, default 0;
#          noise_from = admissible (default), stale (a command offered earlier and not now), guess (a
#          `take` of a goal-type object the receptacle at hand does not hold) or student: the model's
#          own replies as the noise; seed = the run's `--seed`, which orders its demonstrations and draws its
#          noise, default the plan's: two entries of one recipe at two seeds are two draws of it)
#          INITS="name:config.json:tasks:peak_lr:steps[:noise[:noise_from]] …": more initialisations beside
#          STUDENT_INIT, each trained in phase 1 as run init-NAME (e.g. a larger student, or one trained longer)
#          STUDENTS="name:method:init:seed[:peak_lr[:temperature[:estimator[:teacher[:decode_cache_mb[:clip[:tasks[:TARGET=VALUE…]]]]]]]] …" with method one of opd tcod-f2b
#          tcod-b2f turnopd atod paced-f2b, init `warm` (the phase-1 initialisation), `scratch` (student.json) or
#          the NAME of an INITS entry,
#          peak_lr the student's learning rate after its warm-up (default: the example's, 1e-4),
#          temperature the rollouts' sampling temperature (the curriculum's `temperature`, default 1), and
#          estimator the distillation estimator, k1 (default) or topk (the examples' `estimator`), and
#          teacher a phase-1 teacher's name (default: the chosen one below) or NAME@STEP (its weights at
#          that step, kept by TEACHER_KEEP), so one call can distil
#          from two teachers side by side (e.g. a clean-path teacher X and a stale-noise teacher XS),
#          or `init`: the student's own initialisation (self-distillation, a control: the teacher
#          agrees with the student at step 1, so with k1 every advantage is ~0 and the student barely
#          moves — its gradient norm was ~1e-7 against OPD's ~3 — and what it loses is the evaluation's
#          and the pipeline's drift, not an update's noise);
#          decode_cache_mb: this student's worker keeps decodes (`--decode-cache-mb N`, over DECODE_CACHE_MB;
#          0 turns them off), so one call can time two students doing the same work with and without;
#          clip (method opd only): opd.tcod's `clip`, each k1 advantage clamped to [−clip, clip] (rllm's distill estimator);
#          tasks: the student's tasks a step (the examples' 32; one rollout each, so not for atod), its
#          env pool set alike so that every episode of a step runs at once (a larger batch: a less noisy gradient);
#          then any number of TARGET=VALUE fields, each given to `tcod run --set` (a leading `.` names a field
#          of the student's curriculum: `.teacher_temperature=1.5` scores with the teacher's logits over 1.5;
#          `end_lr=0.00001`: opd.tcod's rate decays to it by S_STEPS).
#          After the first four, a field may also be named, in any order: peak_lr=, temperature=, estimator=,
#          teacher=, decode_cache_mb=, clip=, tasks= (e.g. `b128:opd:L4:1:teacher=S1@400:tasks=128`); an
#          unnamed field fills the next positional one. No field may hold a space or a colon.
# TEACHERS_FT: phase 1b, after phase 1 and in the same form as TEACHERS, teachers fine-tuned from a
#          phase-1 teacher: config `@NAME` starts from teacher-NAME's checkpoint (e.g. the clean-path
#          teacher L fine-tuned on its own mistakes: TEACHERS_FT="LS:@L:32:0.0002:150:0.2:student"),
#          with deadline $P1B_S seconds (default 200), evaluated every $FT_EVAL steps on every split
#          (default: as the phase-1 teachers).
# S_MEM_FRACTION: the share of the GPU's memory each student's worker may hold (its --memory-fraction;
#          default 0.9 / the number of STUDENTS entries, 0 for no limit).
# TEACHER=name distils from teacher-name instead of the teacher with the best last valid_seen success.
# TEACHER_KEEP="600 …": keeps a copy of every phase-1 teacher's weights as its checkpoint stood at each
#          of these steps ($WORK/kept/NAME@STEP), so students can distil from one teacher run at two
#          points of its training (a student's teacher field `NAME@STEP`). Each step must be a multiple
#          of CKPT (a checkpoint is written there); the copy is taken while the phase runs (polled every 2 s).
# PHASES="1 2" (default) runs both; "1" only trains teachers (and the initialisation), "2" only
# distils from the teachers and initialisation already in $WORK (a later call on a machine that kept
# them: WORK under the repo's ignored runs/ survives between calls while the machine stays warm). A
# run of either phase whose folder already holds a checkpoint is resumed (`tcod run --resume`), not
# restarted: a second call with the same STUDENTS continues the students a first call's deadline stopped.
# Runs are stopped by PID at a deadline; never `pkill -f` a pattern the calling command line contains
# (it matches the caller's own shell and ends the device call).
set -uo pipefail
OUT=${1:?usage: bench/h200/learn.sh OUT_DIR}
mkdir -p "$OUT" && OUT=$(cd "$OUT" && pwd)
WORK=${WORK:-$(mktemp -d)}   # run folders with weights; only small files go to OUT
mkdir -p "$WORK" && WORK=$(cd "$WORK" && pwd)
G=examples/texthouse/gpu
export TCOD_PYTHON=${TCOD_PYTHON:-python3}
# DECODE_CACHE_MB: the workers keep decode buffers and CUDA graphs between sample calls (--decode-cache-mb)
export TCOD_WORKER_ARGS="--device ${DEV:-cuda} --token-budget ${BUDGET:-65536}${DECODE_CACHE_MB:+ --decode-cache-mb $DECODE_CACHE_MB}"
TEACHERS=${TEACHERS:-"t32:$G/teacher.json:32:0.001:600"}
STUDENT_INIT=${STUDENT_INIT-"$G/student.json:32:0.001:60"}
PHASES=${PHASES:-"1 2"}
STUDENTS=${STUDENTS:-"opd:opd:warm:1 f2b:tcod-f2b:warm:1 b2f:tcod-b2f:warm:1 turnopd:turnopd:warm:1 atod:atod:warm:1 opd-scratch:opd:scratch:1"}
P1_S=${P1_S:-300}; P2_S=${P2_S:-240}          # phase deadlines (seconds)
# CALL_S: the call's whole budget (seconds): phase 2's deadline becomes the smaller of P2_S and what
# is left of CALL_S after the grace and the summary.
# P1_UNTIL_KEPT=1: phase 1 ends as soon as every teacher has its TEACHER_KEEP copies and the
# initialisations are done (P1_S stays the upper bound): a one-call study gives its students the rest.
T_EVAL=${T_EVAL:-50}; S_EVAL=${S_EVAL:-10}    # evaluation every … steps (teachers, students; S_EVAL_OTHER: the students' valid_unseen and hard)
T_EVAL_OTHER=${T_EVAL_OTHER:-$((2 * T_EVAL))}  # the teachers' valid_unseen and hard every … steps
# T_EVAL_FROM: the teachers evaluate only from this step on (`evaluate(from:)`; 0: from the start). An
# evaluation of an early teacher is the slowest (its episodes run to the turn limit): the 12×768
# teacher's evaluations to step 400 took 157 s of a call at T_EVAL=50 T_EVAL_OTHER=200 (eighteenth session),
# 50 s at T_EVAL=100 and no other split (seventeenth).
EVAL_TASKS=${EVAL_TASKS:-}; S_STEPS=${S_STEPS:-40}   # EVAL_TASKS empty: every task of each split
# The students also evaluate at their step 0 (S_AT_START=false skips it: every student starts from the
# same initialisation, whose greedy figures phase 1 already measured at its last step).
S_AT_START=${S_AT_START:-true}
CKPT=${CKPT:-20}                              # checkpoint every … steps (an interrupt checkpoints too)
# TRACE: runs (names, space- or comma-separated) whose worker records each request's timings in
# WORK/NAME.trace.jsonl (TCOD_WORKER_TRACE, sizes instead of token lists); learn.json summarises them
# per request kind (e.g. the teacher's scoring: the worker's own seconds and its forwards' device
# seconds, beside the run's own teacher time per step).
TRACE=${TRACE:-}
T0=$(date +%s)
log() { echo "[$(( $(date +%s) - T0 ))s] $*" | tee -a "$OUT/learn.log"; }
log "learn.sh: out=$OUT work=$WORK python=$TCOD_PYTHON worker=$TCOD_WORKER_ARGS"
command -v nvidia-smi >/dev/null && { nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader,nounits -l 2 > "$OUT/gpu.csv" 2>/dev/null & SMI=$!; }

# Evaluations on the three texthouse eval splits (every task: 140, 134 and 121; all episodes of an
# evaluation at once — texthouse's default pool of 4 ran them four at a time, 80 s an evaluation
# on the H200 where 140 at once batch into one decode loop): valid_seen every
# $1 steps, valid_unseen and hard every $3 steps (default $1), each at temperature $EVAL_TEMP (0 is
# greedy decoding). $EXTRA_TEMPS adds valid_seen again every $3 steps at each of those temperatures,
# named valid_seen_tT (e.g. EVAL_TEMP=0 EXTRA_TEMPS=0.4: greedy, and the sampled agent beside it).
EVAL_TEMP=${EVAL_TEMP:-0.4}; EXTRA_TEMPS=${EXTRA_TEMPS:-}
evals() {
  local every=$1 at_start=$2 other=${3:-$1} from=${4:-0} s n e t out=""
  for s in valid_seen:140:$EVAL_TEMP: valid_unseen:134:$EVAL_TEMP: hard:121:$EVAL_TEMP: $(for t in $EXTRA_TEMPS; do echo "valid_seen:140:$t:_t$t"; done); do
    IFS=: read -r split n t suffix <<< "$s"
    n=${EVAL_TASKS:-$n}; e=$other; [ $split$suffix = valid_seen ] && e=$every
    out+="${out:+, }evaluate(every: $e steps, env: texthouse(split: \"$split\", pool: $n, agent: agent, grammar: \"move\"), tasks: $n tasks, name: \"$split$suffix\", temperature: $t, at_start: $at_start$([ "$from" -gt 0 ] && echo ", from: $from steps"))"
  done
  echo "[$out]"
}

PORT=${PORT0:-8200}   # each run takes the next port; two learn.sh at once need bases apart (PORT0)
PIDS=(); PORTS=(); NAMES=()
# launch NAME FILE CURRICULUM [tcod run args…]: in the background, on the next port.
launch() {
  local name=$1 file=$2 cur=$3; shift 3
  PORT=$((PORT + 1))
  local trace=""
  case " ${TRACE//,/ } " in *" $name "*) trace="$WORK/$name.trace.jsonl"; rm -f "$trace" ;; esac
  TCOD_WORKER_TRACE="$trace" TCOD_WORKER_TRACE_SEQUENCES=0 node bin/tcod.mjs run "$file" --out "$WORK/$name" --set "url=\"http://127.0.0.1:$PORT\"" --set "$cur.checkpoint_every=$CKPT steps" "$@" \
    > "$WORK/$name.log" 2>&1 &
  PIDS+=($!); PORTS+=($PORT); NAMES+=("$name")
  log "started $name (pid $!, port $PORT)"
}
# resume NAME: continue the run in $WORK/NAME from its checkpoint (its plan keeps its port).
resume() {
  local name=$1 port
  port=$(node -e 'const p=require(process.argv[1]);const m=Object.values(p.resources.models).map(x=>x.backend&&x.backend.url).find(Boolean);console.log(new URL(m).port)' "$WORK/$name/plan.json")
  node bin/tcod.mjs run --resume "$WORK/$name" >> "$WORK/$name.log" 2>&1 &
  PIDS+=($!); PORTS+=($port); NAMES+=("$name")
  log "resumed $name (pid $!, port $port)"
}
# sft_run NAME CONFIG TASKS PEAK_LR STEPS NOISE NOISE_FROM EVALS [SEED]: an SFT run of sft-teacher.tcod, resumed if it has a checkpoint.
sft_run() {
  local name=$1 cfg=$2 tasks=$3 lr=$4 steps=$5 noise=$6 from=$7 ev=$8 seed=${9:-}
  if [ -f "$WORK/$name/checkpoint/state.json" ]; then resume "$name"; return; fi
  launch "$name" $G/sft-teacher.tcod texthouse_sft_teacher ${seed:+--seed "$seed"} --set "config=\"$cfg\"" --set "train_steps=$steps steps" \
    --set "texthouse_sft_teacher.batch=$tasks tasks × 0 rollouts" --set "peak_lr=$lr" --set "noise=$noise" --set "noise_from=\"$from\"" \
    --set "texthouse_sft_teacher.eval=$ev"
}
# Copies the small files of every run (metrics, plans, logs; never weights) to OUT/runs.tar.gz, so
# that what a run has done comes back even if the call is cut off.
snapshot() {
  ( cd "$WORK" && for d in */; do d=${d%/}; for f in metrics.jsonl plan.json backend-wait.jsonl episodes.jsonl; do [ -f "$d/$f" ] && echo "$d/$f"; done; done; ls *.log 2>/dev/null ) \
    | tar czf "$OUT/runs.tmp.tar.gz" -C "$WORK" -T - 2>/dev/null && mv "$OUT/runs.tmp.tar.gz" "$OUT/runs.tar.gz"
}
# One line per run of the phase: its last progress or eval line (the call's output shows progress).
progress() {
  local f; for f in "$WORK"/*.log; do [ -f "$f" ] && log "  $(basename "$f" .log): $(grep -E '^(step|eval|done|error|interrupt)' "$f" | tail -n 1 | cut -c1-150)"; done
}
# keep_checkpoints: copies each teacher's checkpointed weights at a step of $TEACHER_KEEP to $WORK/kept/NAME@STEP
# (through a temporary folder, and only if the checkpoint still holds that step once copied: a newer
# checkpoint may replace it meanwhile).
keep_checkpoints() {
  [ -n "${TEACHER_KEEP:-}" ] || return 0
  local d name step k dst
  for d in "$WORK"/teacher-*/; do
    [ -f "$d/checkpoint/state.json" ] || continue
    name=$(basename "$d"); name=${name#teacher-}
    step=$(node -e 'try{console.log(JSON.parse(require("fs").readFileSync(process.argv[1],"utf8")).learnerStep)}catch{console.log(-1)}' "$d/checkpoint/state.json")
    for k in $TEACHER_KEEP; do
      dst="$WORK/kept/$name@$k"
      [ "$step" = "$k" ] && [ ! -d "$dst" ] || continue
      rm -rf "$dst.tmp" && mkdir -p "$dst.tmp" && cp -r "$d/checkpoint/student" "$dst.tmp/student" 2>/dev/null \
        && cp "$d/checkpoint/state.json" "$dst.tmp/state.json" 2>/dev/null && cmp -s "$dst.tmp/state.json" "$d/checkpoint/state.json" \
        && mv "$dst.tmp" "$dst" && log "kept teacher-$name at step $k: $dst" || rm -rf "$dst.tmp"
    done
  done
}
# all_kept: true when every teacher run of the phase has a copy at each step of $TEACHER_KEEP (a copy is
# taken from the checkpoint, which a run writes after that step's evaluations, so they are in) and
# every other run of the phase has ended.
all_kept() {
  [ -n "${TEACHER_KEEP:-}" ] || return 1
  local i k
  for i in "${!PIDS[@]}"; do
    case ${NAMES[$i]} in
      teacher-*) for k in $TEACHER_KEEP; do [ -d "$WORK/kept/${NAMES[$i]#teacher-}@$k" ] || return 1; done ;;
      *) kill -0 ${PIDS[$i]} 2>/dev/null && return 1 ;;
    esac
  done
  return 0
}
# finish_phase DEADLINE [kept]: waits for the phase's runs until DEADLINE seconds from now (snapshots
# and progress every 30 s), or with `kept` until all_kept if that comes first, then interrupts the rest (SIGINT: finish the step, checkpoint, stop) and, GRACE seconds later,
# kills what is left together with its worker (which runs in a process group of its own).
finish_phase() {
  local deadline=$(( $(date +%s) + $1 )) p i next=$(( $(date +%s) + 30 ))
  while [ $(date +%s) -lt $deadline ]; do
    local alive=0; for p in "${PIDS[@]}"; do kill -0 $p 2>/dev/null && alive=1; done
    [ $alive = 0 ] && break
    [ $(date +%s) -ge $next ] && { snapshot; progress; next=$(( $(date +%s) + 30 )); }
    keep_checkpoints
    [ "${2:-}" = kept ] && all_kept && { log "every teacher copy of TEACHER_KEEP is kept: phase ends"; break; }
    sleep 2
  done
  for p in "${PIDS[@]}"; do kill -INT $p 2>/dev/null; done
  local hard=$(( $(date +%s) + ${GRACE:-45} ))
  for p in "${PIDS[@]}"; do while kill -0 $p 2>/dev/null && [ $(date +%s) -lt $hard ]; do sleep 1; done; done
  for i in "${!PIDS[@]}"; do
    if kill -0 ${PIDS[$i]} 2>/dev/null; then
      log "  pid ${PIDS[$i]} still running ${GRACE:-45} s after SIGINT: killed with its worker"
      kill -9 ${PIDS[$i]} 2>/dev/null
    fi
    pkill -9 -f -- "--port ${PORTS[$i]}( |$)" 2>/dev/null
  done
  # Only the phase's runs: a bare `wait` (also what an empty list expands to) waits for nvidia-smi too.
  [ ${#PIDS[@]} -gt 0 ] && wait "${PIDS[@]}" 2>/dev/null; PIDS=(); PORTS=(); NAMES=()
  keep_checkpoints   # a teacher that ended at a kept step
  snapshot; progress
}
last_seen() {  # last valid_seen success of a run folder (−1 when none)
  node -e 'const fs=require("fs");let b=-1;try{for(const l of fs.readFileSync(process.argv[1],"utf8").split("\n")){if(!l)continue;const r=JSON.parse(l);if(r.kind==="eval"&&r.name==="valid_seen")b=r.successRate}}catch{};console.log(b)' "$1/metrics.jsonl"
}

# Phase 1: teachers and the students' initialisation.
if [[ " $PHASES " == *" 1 "* ]]; then
  for t in $TEACHERS; do
    IFS=: read -r name cfg tasks lr steps noise from seed <<< "$t"
    sft_run "teacher-$name" "$cfg" "$tasks" "$lr" "$steps" "${noise:-0}" "${from:-admissible}" "$(evals $T_EVAL false $T_EVAL_OTHER "${T_EVAL_FROM:-0}")" "$seed"
  done
  if [ -n "$STUDENT_INIT" ]; then   # STUDENT_INIT="" trains teachers only
    IFS=: read -r icfg itasks ilr isteps inoise ifrom <<< "$STUDENT_INIT"
    sft_run student-init "$icfg" "$itasks" "$ilr" "$isteps" "${inoise:-0}" "${ifrom:-admissible}" "$(evals $isteps false)"
  fi
  for t in ${INITS:-}; do
    IFS=: read -r name icfg itasks ilr isteps inoise ifrom <<< "$t"
    sft_run "init-$name" "$icfg" "$itasks" "$ilr" "$isteps" "${inoise:-0}" "${ifrom:-admissible}" "$(evals $isteps false)"
  done
  finish_phase "$P1_S" "$([ "${P1_UNTIL_KEPT:-0}" = 1 ] && echo kept)"
  if [ -n "${TEACHERS_FT:-}" ]; then
    for t in $TEACHERS_FT; do
      IFS=: read -r name cfg tasks lr steps noise from <<< "$t"
      if [ "${cfg:0:1}" = "@" ]; then
        cfg="$WORK/teacher-${cfg:1}/checkpoint/student"
        [ -d "$cfg" ] || { log "skip teacher-$name: no checkpoint $cfg"; continue; }
      fi
      sft_run "teacher-$name" "$cfg" "$tasks" "$lr" "$steps" "${noise:-0}" "${from:-admissible}" "$(evals ${FT_EVAL:-$T_EVAL} false ${FT_EVAL:-$T_EVAL_OTHER})"
    done
    finish_phase "${P1B_S:-200}"
  fi
fi
best=""; bests=-2   # a teacher with a checkpoint but no evaluation yet (−1) is still taken
for d in "$WORK"/teacher-*/; do
  [ -d "$d" ] || continue
  name=$(basename "$d"); name=${name#teacher-}; s=$(last_seen "$WORK/teacher-$name")
  log "teacher-$name: last valid_seen success $s"
  if [ -d "$WORK/teacher-$name/checkpoint/student" ] && awk -v a="$s" -v b="$bests" 'BEGIN { exit !(a > b) }'; then best=$name; bests=$s; fi
done
log "student-init: last valid_seen success $(last_seen "$WORK/student-init")"
for d in "$WORK"/init-*/; do [ -d "$d" ] && log "$(basename "$d"): last valid_seen success $(last_seen "$d")"; done
if [ -n "${TEACHER:-}" ]; then
  [ -d "$WORK/teacher-$TEACHER/checkpoint/student" ] && { best=$TEACHER; bests=$(last_seen "$WORK/teacher-$TEACHER"); log "TEACHER=$TEACHER chosen"; } \
    || log "TEACHER=$TEACHER has no checkpoint: keeping teacher-$best"
fi
echo "{\"teacher\": \"$best\", \"valid_seen\": $bests}" > "$OUT/teacher-choice.json"

# Phase 2: students distilled from the best teacher.
if [[ " $PHASES " != *" 2 "* ]]; then
  log "phase 2 not asked for (PHASES=$PHASES)"
elif [ -n "$best" ]; then
  TDIR="$WORK/teacher-$best/checkpoint/student"
  # Each student's worker may hold S_MEM_FRACTION of the GPU (default 0.9 / the number of students; 0: no
  # limit): without a share, the allocators keep what they once held and six workers reached 18-33 GiB each
  # and ran the 140 GiB H200 out of memory (sixteenth session), kept decodes or not.
  n_students=$(wc -w <<< "$STUDENTS")
  S_MEM_FRACTION=${S_MEM_FRACTION:-$(awk -v n="$n_students" 'BEGIN { printf "%.3f", (n > 0 ? 0.9 / n : 0) }')}
  awk -v f="$S_MEM_FRACTION" 'BEGIN { exit !(f > 0) }' && export TCOD_WORKER_ARGS="$TCOD_WORKER_ARGS --memory-fraction $S_MEM_FRACTION"
  log "phase 2: $n_students students, worker args $TCOD_WORKER_ARGS"
  for s in $STUDENTS; do
    IFS=: read -r -a f <<< "$s"
    name=${f[0]:-} method=${f[1]:-} init=${f[2]:-} seed=${f[3]:-}
    cur=texthouse_gpu_${method//-/_}
    slr="" stemp="" sest="" steach="" scache="" sclip="" stasks="" sets=() at=0
    positional=(slr stemp sest steach scache sclip stasks)
    for x in "${f[@]:4}"; do
      case $x in
        peak_lr=*) slr=${x#*=} ;; temperature=*) stemp=${x#*=} ;; estimator=*) sest=${x#*=} ;;
        teacher=*) steach=${x#*=} ;; decode_cache_mb=*) scache=${x#*=} ;; clip=*) sclip=${x#*=} ;; tasks=*) stasks=${x#*=} ;;
        .*=*) sets+=(--set "$cur$x") ;;
        *=*) sets+=(--set "$x") ;;
        *) [ $at -lt ${#positional[@]} ] || { log "skip $name: field '$x' after the eleventh is not TARGET=VALUE"; continue 2; }
           printf -v "${positional[$at]}" '%s' "$x"; at=$((at + 1)) ;;
      esac
    done
    tdir=$TDIR; [ -n "$steach" ] && tdir="$WORK/teacher-$steach/checkpoint/student"
    [[ "$steach" == *@* ]] && tdir="$WORK/kept/$steach/student"   # NAME@STEP: a TEACHER_KEEP copy
    case $init in
      scratch) scfg=$G/student.json ;;
      warm) scfg="$WORK/student-init/checkpoint/student" ;;
      *) scfg="$WORK/init-$init/checkpoint/student" ;;
    esac
    [ "$init" != scratch ] && [ ! -d "$scfg" ] && { log "skip $name: no student initialisation $scfg"; continue; }
    # teacher `init`: the student's own initialisation, a control whose KL starts at 0 (self-distillation)
    [ "$steach" = init ] && tdir=$scfg
    [ -d "$tdir" ] || { log "skip $name: no teacher checkpoint $tdir"; continue; }
    [ -n "$sclip" ] && [ "$method" != opd ] && { log "skip $name: clip is a field of method opd (opd.tcod's clip), not $method"; continue; }
    [ -n "$stasks" ] && [ "$method" = atod ] && { log "skip $name: tasks sets one rollout a task; atod.tcod takes 4"; continue; }
    # A student whose folder holds a checkpoint (an earlier call's phase 2, stopped at its deadline) is resumed.
    if [ -f "$WORK/$name/checkpoint/state.json" ]; then resume "$name"; continue; fi
    # A file whose schedules run to `train_steps` (opd.tcod's lr decay) is given its length there.
    steps_set=(--set "$cur.steps=$S_STEPS"); grep -q '^let train_steps' "$G/$method.tcod" && steps_set=(--set "train_steps=$S_STEPS steps")
    TCOD_WORKER_ARGS="$TCOD_WORKER_ARGS${scache:+ --decode-cache-mb $scache}" \
    launch "$name" "$G/$method.tcod" "$cur" --seed "$seed" --set "teacher_dir=\"$tdir\"" --set "student_config=\"$scfg\"" \
      "${steps_set[@]}" --set "$cur.eval=$(evals $S_EVAL $S_AT_START ${S_EVAL_OTHER:-$S_EVAL})" ${slr:+--set "peak_lr=$slr"} ${stemp:+--set "$cur.temperature=$stemp"} ${sest:+--set "estimator=\"$sest\""} ${sclip:+--set "clip=$sclip"} \
      ${stasks:+--set "$cur.batch=$stasks tasks × 1 rollout"} ${stasks:+--set "$cur.env=texthouse(split: \"train\", pool: $stasks, agent: agent, grammar: \"move\")"} \
      "${sets[@]}"
  done
  # CALL_S: the whole call's budget in seconds; phase 2 then ends in time for the grace and the summary
  # (a phase 1 that ended early with P1_UNTIL_KEPT=1 leaves the students the rest).
  p2=$P2_S
  if [ -n "${CALL_S:-}" ]; then
    left=$(( CALL_S - ($(date +%s) - T0) - ${GRACE:-45} - 10 )); [ "$left" -lt "$p2" ] && p2=$left
    log "phase 2 deadline: $p2 s (CALL_S=$CALL_S)"
  fi
  finish_phase "$p2"
else
  log "no teacher checkpoint: phase 2 skipped"
fi

[ -n "${SMI:-}" ] && kill $SMI 2>/dev/null
snapshot
node bench/h200/learn-summary.mjs "$WORK" > "$OUT/learn.json" 2>> "$OUT/learn.log"
log "done: total $(( $(date +%s) - T0 ))s"
