#!/usr/bin/env bash
# Summarise the H200 study (bench/study/run-h200.sh) into bench/results/study-h200.{html,json,md}:
#   bash bench/study/summarize-h200.sh OUT/study-h200-runs.tgz   (or the WORK folder itself)
# RESULTS=DIR writes elsewhere (default bench/results). Needs the repo's node_modules (esbuild) and dist/.
exec bash "$(dirname "$0")/summarize.sh" h200 "$@"
