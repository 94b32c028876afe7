#!/usr/bin/env bash
# one-call.sh OUT [SET]: a whole teacher → OPD-students study inside one device call (≤ 600 s), so
# that nothing depends on the machine staying warm between calls (bench/results/h200-learn.md,
# twentieth session: a call sent as soon as the previous one answered found a fresh machine twice).
# Phase 1: teacher-S1 (12×768, the 800-step guess-noise recipe, seed 1) beside init-L4 (4×256, 400
# steps); the teacher's weights at step KEEP_STEP (default 400) are kept and phase 1 ends as soon as
# they are (P1_UNTIL_KEPT). Phase 2: N (default 3) k1 reverse-KL OPD students of init-L4 from that
# copy at seeds N·(SET−1)+1 … N·SET, and a self-distilled control at seed SET (CONTROL=0: none; its
# k1 advantage is 0, so it re-measures the start's evaluation noise, and each run sharing the GPU
# slows the others' steps), at opd.tcod's held 1e-4, until CALL_S (default 560) seconds from the
# start, greedy valid_seen every S_EVAL (20) steps and valid_unseen / hard every S_EVAL_OTHER (40).
# T_EVAL_OTHER=800 skips the teacher's valid_unseen / hard evaluation at the copy (25-50 s sooner).
# OUT holds learn.sh's five files; add nothing beside them (a call returns at most 8 files).
set -uo pipefail
OUT=${1:?usage: bench/h200/one-call.sh OUT [SET]} SET=${2:-1}
T=bench/h200/teacher-12x768.json G=examples/texthouse/gpu/student.json
K=${KEEP_STEP:-400} N=${N:-3}
# PREFIX names the students (default o$K, e.g. o400s1); EXTRA adds learn.sh fields to each (e.g. :clip=5,
# or ':aggregate="seq_mean_token_mean"' for opd.tcod's per-episode loss mean).
# ARMS="PREFIX:FIELD:FIELD… …" instead: each arm its own N students at the same seeds, all from the one
# teacher copy, so arms are compared within a call (the copies of separate calls scored 0.68-0.82), e.g.
# ARMS='sq:aggregate="seq_mean_token_mean" sh:aggregate="seq_mean_token_mean":.teacher_temperature=0.5'.
ARMS=${ARMS:-"${PREFIX:-o$K}${EXTRA:-}"}
S=""; for arm in $ARMS; do
  P=${arm%%:*} X=""; [ "$P" = "$arm" ] || X=":${arm#*:}"
  for ((k = N * (SET - 1) + 1; k <= N * SET; k++)); do S+="${P}s$k:opd:L4:$k:teacher=S1@$K$X "; done
done
[ "${CONTROL:-1}" = 0 ] || S+="selfs$SET:opd:L4:$SET:teacher=init"
PHASES="1 2" WORK=${WORK:-runs/one-call-$SET} EVAL_TEMP=0 STUDENT_INIT="" INITS="L4:$G:32:0.001:400" \
  TEACHERS="S1:$T:64:0.0006:800:0.3:guess:1" CKPT=50 TEACHER_KEEP="$K" T_EVAL=50 T_EVAL_FROM=$K T_EVAL_OTHER=${T_EVAL_OTHER:-$K} \
  P1_S=${P1_S:-330} P1_UNTIL_KEPT=1 CALL_S=${CALL_S:-560} P2_S=${P2_S:-400} GRACE=${GRACE:-15} DECODE_CACHE_MB=${DECODE_CACHE_MB:-3072} \
  S_STEPS=${S_STEPS:-150} S_EVAL=${S_EVAL:-20} S_EVAL_OTHER=${S_EVAL_OTHER:-40} S_AT_START=false \
  STUDENTS="$S" bash bench/h200/learn.sh "$OUT"
