#!/usr/bin/env bash
# students-from-kept.sh OUT SET: phase 2 of bench/h200/learn.sh, the OPD students distilled from the
# kept copies of teacher-S1 that bench/h200/pick-copies.sh puts first (C1: the earliest copy with
# valid_seen ≥ 0.8; C2: the next), each from the phase-1 initialisation L4, with opd.tcod's rate
# decaying to END_LR by step S_STEPS (default 1e-5; END_LR="" holds the peak rate). SET 1: C1 at
# seeds 1-3, C1 with clip 5, C2, and the self-distillation control; SET 2, 3, …: the same at other
# seeds (a later call on the warm machine). N (default 3) sets the plain students a set, at seeds
# N·(SET−1)+1 … N·SET; EXTRA (default "clip c2 self") the others, at seed SET (EXTRA=self: the
# control only; fewer students share the GPU, so each step is quicker). A student whose folder holds
# a checkpoint is resumed.
# Run after a phase-1 call of learn.sh with WORK=runs/gpu26 INITS=L4:… TEACHERS=S1:… TEACHER_KEEP=….
set -uo pipefail
OUT=$1 SET=${2:-1}
WORK=${WORK:-runs/gpu26}
mapfile -t C < <(bench/h200/pick-copies.sh "$WORK" S1 "${KEEP:-400 450 500}" 0.8)
[ ${#C[@]} -gt 0 ] || { echo "no kept copy of teacher-S1 with an evaluation in $WORK"; exit 1; }
c1=${C[0]%% *}; c2=${C[1]:-${C[0]}}; c2=${c2%% *}
mkdir -p "$OUT"; printf '%s\n' "${C[@]}" > "$OUT/copies.txt"
END_LR=${END_LR-0.00001}; e=${END_LR:+:end_lr=$END_LR}
N=${N:-3} EXTRA=${EXTRA-clip c2 self}
S=""; for ((k = N * (SET - 1) + 1; k <= N * SET; k++)); do S+="o${c1}s$k:opd:L4:$k:teacher=S1@$c1$e "; done
for x in $EXTRA; do case $x in
  clip) S+="c${c1}s$SET:opd:L4:$SET:teacher=S1@$c1:clip=5$e " ;;
  c2) S+="o${c2}s${SET}b:opd:L4:$SET:teacher=S1@$c2$e " ;;
  self) S+="selfs$SET:opd:L4:$SET:teacher=init$e " ;;
  *) echo "EXTRA: unknown student kind '$x' (clip, c2, self)"; exit 1 ;;
esac; done
S=${S% }
echo "copies (step valid_seen): ${C[*]}; students: $S"
DECODE_CACHE_MB=${DECODE_CACHE_MB:-3072} PHASES=2 WORK=$WORK EVAL_TEMP=0 STUDENT_INIT="" GRACE=${GRACE:-20} CKPT=25 \
  S_STEPS=${S_STEPS:-150} S_EVAL=25 S_EVAL_OTHER=50 S_AT_START=false P2_S=${P2_S:-520} PORT0=$((8300 + 20 * SET)) \
  STUDENTS="$S" bash bench/h200/learn.sh "$OUT"
