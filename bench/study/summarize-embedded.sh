#!/usr/bin/env bash
# Summarise the embedded study (bench/study/run-embedded.sh) into bench/results/study-embedded.{html,json,md}:
#   bash bench/study/summarize-embedded.sh OUT/study-embedded-runs.tgz   (or the OUT folder itself)
# RESULTS=DIR writes elsewhere (default bench/results). Needs the repo's node_modules (esbuild) and dist/.
exec bash "$(dirname "$0")/summarize.sh" embedded "$@"
