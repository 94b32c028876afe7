#!/usr/bin/env bash
# Summarise a study into bench/results/study-NAME.{html,json,md} (NAME: embedded or h200):
#   bash bench/study/summarize.sh NAME OUT/study-NAME-runs.tgz   (or the folder holding runs/)
# summarize-embedded.sh and summarize-h200.sh call this. RESULTS=DIR writes elsewhere (default
# bench/results). Needs the repo's node_modules (esbuild) and dist/. A served teacher's and the
# student initialisation's figures come from phase1/ beside runs/ (run-h200.sh puts them there).
set -euo pipefail
cd "$(dirname "$0")/../.."
NAME=${1:?usage: summarize.sh embedded|h200 OUT/study-NAME-runs.tgz | DIR}
SRC=${2:?usage: summarize.sh embedded|h200 OUT/study-NAME-runs.tgz | DIR}
RESULTS=${RESULTS:-bench/results}
case $NAME in
  embedded) title="texthouse study on the embedded backend: OPD, TCOD-f2b, TCOD-b2f, paced f2b, TurnOPD, ATOD"; level=0.5 ;;
  h200) title="texthouse study on the H200 (tcod worker): OPD, TCOD-f2b, TCOD-b2f, TurnOPD, ATOD"; level=0.25 ;;
  *) echo "summarize.sh: unknown study $NAME (embedded or h200)" >&2; exit 2 ;;
esac
if [ -f "$SRC" ]; then
  W=$(mktemp -d); tar -C "$W" -xzf "$SRC"; RUNS="$W/runs"
else
  RUNS="$SRC/runs"
fi
mkdir -p "$RESULTS"
mapfile -t DIRS < <(for d in "$RUNS"/*/; do [ "$d" != "$RUNS/example/" ] && [ -f "$d/metrics.jsonl" ] && echo "$d"; done)
node bin/tcod.mjs compare "${DIRS[@]}" --out "$RESULTS/study-$NAME.html" --level "$level" --title "$title"
node_modules/.bin/esbuild bench/study/summarize.ts --bundle --platform=node --format=esm --packages=external \
  --outfile=dist/study-summarize.mjs --log-level=error
STUDY_NAME=$NAME node dist/study-summarize.mjs "$RESULTS" "${DIRS[@]}" >/dev/null
cp "$RUNS/study.log" "$RESULTS/study-$NAME.log" 2>/dev/null || true
echo "wrote $RESULTS/study-$NAME.{html,json,md}"
