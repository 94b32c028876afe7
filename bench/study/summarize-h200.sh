#!/usr/bin/env bash
# Summarise the H200 study (bench/study/run-h200.sh) into bench/results/study-h200.{html,json,md}:
#   bash bench/study/summarize-h200.sh OUT/study-h200-runs.tgz   (or the WORK folder itself)
# RESULTS=DIR writes elsewhere (default bench/results). Needs the repo's node_modules (esbuild) and dist/.
# The teacher's and the student initialisation's figures come from phase1/ beside runs/.
set -euo pipefail
cd "$(dirname "$0")/../.."
SRC=${1:?usage: summarize-h200.sh OUT/study-h200-runs.tgz | WORK}
RESULTS=${RESULTS:-bench/results}
if [ -f "$SRC" ]; then
  W=$(mktemp -d); tar -C "$W" -xzf "$SRC"; RUNS="$W/runs"
else
  RUNS="$SRC/runs"
fi
mkdir -p "$RESULTS"
title="texthouse study on the H200 (tcod worker): OPD, TCOD-f2b, TCOD-b2f, TurnOPD, ATOD"
mapfile -t DIRS < <(for d in "$RUNS"/*/; do [ -f "$d/metrics.jsonl" ] && echo "$d"; done)
node bin/tcod.mjs compare "${DIRS[@]}" --out "$RESULTS/study-h200.html" --level 0.25 --title "$title"
node_modules/.bin/esbuild bench/study/summarize.ts --bundle --platform=node --format=esm --packages=external \
  --outfile=dist/study-summarize.mjs --log-level=error
STUDY_NAME=h200 node dist/study-summarize.mjs "$RESULTS" "${DIRS[@]}" >/dev/null
cp "$RUNS/study.log" "$RESULTS/study-h200.log" 2>/dev/null || true
echo "wrote $RESULTS/study-h200.{html,json,md}"
