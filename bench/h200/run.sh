#!/usr/bin/env bash
# The whole GPU run of bench/h200 from one command (run from the repo root):
#   bench/h200/run.sh OUT_DIR            # H200: bf16 worker on cuda, the sizes of examples/texthouse/gpu/*.json
#   bench/h200/run.sh --cpu OUT_DIR      # the same pipeline on CPU with tiny models and a few steps (a check)
# 1. SFT a teacher from scratch on texthouse oracle demos (examples/texthouse/gpu/sft-teacher.tcod);
# 2. OPD and TCOD-f2b students distilled from it, then TCOD-b2f, TurnOPD and ATOD (short), each a
#    `tcod run` that starts and stops its own worker (student + teacher in one process);
# 3. the plain PyTorch loop (plain_loop.py) replaying the OPD run's own worker requests (its trace:
#    the same prompts with their history, the same responses, the same batches) with the same models;
# 4. the worker's jobs at GPU-sized batches beside plain PyTorch (worker_ops.py: scoring, training,
#    256 concurrent episodes sampling); with 2 GPUs also 2 vs 1 GPU (DDP), a 1 B model under FSDP2
#    and the OPD run again on a 2-GPU worker (TCOD_WORKER_NPROC=2);
# 5. bench/h200/summarize.mjs → OUT_DIR/h200.json (tokens/s, step split, overhead, memory, plain loop).
# Needs: node ≥ 20 on PATH (bin/tcod.mjs + dist/), a python with torch/transformers/peft ($TCOD_PYTHON,
# default python3 on a GPU host, worker/.venv/bin/python with --cpu). Steps: $STEPS_* below.
set -uo pipefail
CPU=0
if [ "${1:-}" = "--cpu" ]; then CPU=1; shift; fi
OUT=${1:?usage: bench/h200/run.sh [--cpu] OUT_DIR}
mkdir -p "$OUT/runs" "$OUT/logs"
OUT=$(cd "$OUT" && pwd)
WORK=${WORK:-$(mktemp -d)}   # checkpoints (model weights) stay out of OUT
G=examples/texthouse/gpu
if [ $CPU = 1 ]; then
  export TCOD_PYTHON=${TCOD_PYTHON:-worker/.venv/bin/python}
  DEV=cpu; STUDENT=config:tiny; TEACHER=config:tiny; PLAIN_S=$G/../../../worker/examples/tiny/student.json; PLAIN_T=$G/../../../worker/examples/tiny/teacher.json
  S_SFT=${S_SFT:-2}; S_OPD=${S_OPD:-2}; S_F2B=${S_F2B:-2}; S_OTHER=${S_OTHER:-1}; BATCH="4 tasks × 1 rollout"; EVAL_TASKS=2; PLAIN_STEPS=1
else
  export TCOD_PYTHON=${TCOD_PYTHON:-python3}
  DEV=cuda; STUDENT=$G/student.json; TEACHER=$G/teacher.json; PLAIN_S=$G/student.json; PLAIN_T=$G/teacher.json
  S_SFT=${S_SFT:-60}; S_OPD=${S_OPD:-8}; S_F2B=${S_F2B:-8}; S_OTHER=${S_OTHER:-2}; BATCH="32 tasks × 1 rollout"; EVAL_TASKS=${EVAL_TASKS:-8}; PLAIN_STEPS=5
  EVAL_AT_START=${EVAL_AT_START:-false}
fi
BUDGET=${BUDGET:-$([ $CPU = 1 ] && echo 16384 || echo 65536)}
export TCOD_WORKER_ARGS="--device $DEV --token-budget $BUDGET ${EXTRA_WORKER_ARGS:-}"
NGPU=${NGPU:-$([ $CPU = 0 ] && command -v nvidia-smi >/dev/null && nvidia-smi -L | wc -l || echo 0)}
TCOD="node bin/tcod.mjs"
T0=$(date +%s)
# DEADLINE (s from start, GPU default 500): each run gets at most its cap and what is left, so the
# script ends (with partial runs summarised) inside one device call.
DEADLINE=${DEADLINE:-$([ $CPU = 1 ] && echo 100000 || echo 540)}
cap() { local left=$(( DEADLINE - ($(date +%s) - T0) )); [ $left -lt $1 ] && echo $(( left > 5 ? left : 5 )) || echo $1; }
echo "bench/h200: device=$DEV out=$OUT work=$WORK python=$TCOD_PYTHON" | tee "$OUT/logs/run.log"

if [ $CPU = 0 ] && command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=index,name,memory.used,memory.total,utilization.gpu,timestamp --format=csv,nounits -lms 250 > "$OUT/gpu-mem.csv" 2>&1 &
  SMI=$!
  trap 'kill $SMI 2>/dev/null' EXIT
fi

# tcod run NAME CAP_S FILE CURRICULUM STEPS [--set …]: keeps metrics/wait/plan/vocab; weights stay in $WORK.
run() {
  local name=$1 limit=$(cap $2) file=$3 cur=$4 steps=$5; shift 5
  local t=$(date +%s)
  TCOD_WORKER_TRACE="$WORK/$name.trace.jsonl" timeout $limit $TCOD run "$file" --out "$WORK/$name" -q --set "$cur.steps=$steps" \
    --set "$cur.eval=evaluate(every: $steps steps, env: texthouse(split: \"valid_seen\", agent: agent, grammar: \"move\"), tasks: $EVAL_TASKS tasks, temperature: 0.4, at_start: ${EVAL_AT_START:-true})" "$@" \
    > "$OUT/logs/$name.log" 2>&1
  local rc=$?
  mkdir -p "$OUT/runs/$name"
  cp "$WORK/$name"/{metrics.jsonl,backend-wait.jsonl,plan.json,vocab.txt} "$OUT/runs/$name/" 2>/dev/null
  cp "$WORK/$name.trace.jsonl" "$WORK/$name/worker-trace.jsonl" 2>/dev/null
  echo "$name: rc=$rc $(( $(date +%s) - t ))s ($(tail -n 2 "$OUT/logs/$name.log" | tr '\n' ' '))" | tee -a "$OUT/logs/run.log"
  return $rc
}

run teacher 120 $G/sft-teacher.tcod texthouse_sft_teacher "$S_SFT" --set "config=\"$TEACHER\"" --set "texthouse_sft_teacher.batch=$BATCH" \
  --set "texthouse_sft_teacher.checkpoint_every=$(( S_SFT < 10 ? S_SFT : 10 )) steps"
TDIR="$WORK/teacher/checkpoint/student"
# ONLY="tcod-b2f atod": a subset of the students; CAP_OTHER: seconds for each of b2f/turnopd/atod.
C=${CAP_OTHER:-40}
students=(opd:texthouse_gpu_opd:$S_OPD:90 tcod-f2b:texthouse_gpu_tcod_f2b:$S_F2B:60 tcod-b2f:texthouse_gpu_tcod_b2f:$S_OTHER:$C
          turnopd:texthouse_gpu_turnopd:$S_OTHER:$C atod:texthouse_gpu_atod:$S_OTHER:$C)
for s in "${students[@]}"; do
  IFS=: read -r name cur steps limit <<< "$s"
  [ -n "${ONLY:-}" ] && [[ " $ONLY " != *" $name "* ]] && continue
  b=$BATCH; [ $name = atod ] && b=$( [ $CPU = 1 ] && echo "2 tasks × 2 rollouts" || echo "8 tasks × 4 rollouts")
  run "$name" "$limit" "$G/$name.tcod" "$cur" "$steps" --set "teacher_dir=\"$TDIR\"" --set "student_config=\"$STUDENT\"" --set "$cur.batch=$b"
done

[ -d "$WORK/opd" ] && echo "plain loop" | tee -a "$OUT/logs/run.log" && \
timeout $(cap 60) "$TCOD_PYTHON" bench/h200/plain_loop.py --trace "$WORK/opd.trace.jsonl" --student "$PLAIN_S" --teacher "$PLAIN_T" --vocab "$WORK/opd/vocab.txt" \
  --device $DEV --steps $PLAIN_STEPS --budget $BUDGET --out "$OUT/plain.json" > "$OUT/logs/plain.log" 2>&1
PRC=$?
[ -d "$WORK/opd" ] && echo "plain: rc=$PRC $(tail -c 300 "$OUT/logs/plain.log" | tr '\n' ' ')" | tee -a "$OUT/logs/run.log"

# The worker's jobs at GPU-sized batches (skipped with --cpu: minutes of CPU for no information).
if [ $CPU = 0 ] && [ "${SKIP_OPS:-0}" = 0 ]; then
  timeout $(cap 120) "$TCOD_PYTHON" bench/h200/worker_ops.py --student $G/student.json --teacher $G/teacher.json \
    --out "$OUT/ops.json" > "$OUT/logs/ops.log" 2>&1
  echo "ops: rc=$? $(( $(date +%s) - T0 ))s" | tee -a "$OUT/logs/run.log"
fi
if [ $CPU = 0 ] && [ "$NGPU" -ge 2 ]; then
  timeout $(cap 200) "$TCOD_PYTHON" bench/h200/worker_ops.py --student $G/student.json --teacher $G/teacher.json --nproc 2 \
    --fsdp-config bench/h200/model-1b.json --reps 2 --out "$OUT/ops-2gpu.json" > "$OUT/logs/ops-2gpu.log" 2>&1
  echo "ops 2 GPUs: rc=$? $(( $(date +%s) - T0 ))s" | tee -a "$OUT/logs/run.log"
  export TCOD_WORKER_NPROC=2
  run opd-2gpu 90 $G/opd.tcod texthouse_gpu_opd "$S_OPD" --set "teacher_dir=\"$TDIR\"" \
    --set "student_config=\"$STUDENT\"" --set "texthouse_gpu_opd.batch=$BATCH" --set 'url="http://127.0.0.1:8101"'
  unset TCOD_WORKER_NPROC
fi

[ -n "${SMI:-}" ] && kill $SMI 2>/dev/null
node bench/h200/summarize.mjs "$OUT" > "$OUT/h200.json" 2> "$OUT/logs/summarize.log"
[ -f "$WORK/opd.trace.jsonl" ] && gzip -c "$WORK/opd.trace.jsonl" > "$OUT/opd-trace.jsonl.gz"
echo "summary: rc=$? total $(( $(date +%s) - T0 ))s → $OUT/h200.json" | tee -a "$OUT/logs/run.log"
