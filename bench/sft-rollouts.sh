#!/usr/bin/env bash
# What a pure-SFT step costs with and without student episodes: examples/texthouse/gpu/sft-teacher.tcod
# on the tcod worker, `N tasks × 0 rollouts` (no student episodes, the example's setting) against the
# old `N tasks × 1 rollout` at `horizon: 1 turn` (a one-turn student episode per task that the sft loss
# never reads), interleaved REPEAT times. Both train on the same demonstrations (their demo NLLs must
# agree step for step). Prints, per run, the mean step time (sum of the engine's phase times) and
# the last demo NLLs.
#   bash bench/sft-rollouts.sh [OUT_DIR]     (env: CONFIG, TASKS, STEPS, REPEAT, TCOD_PYTHON, TCOD_WORKER_ARGS)
set -euo pipefail
OUT=${1:-runs/sft-rollouts}
CONFIG=${CONFIG:-}; TASKS=${TASKS:-8}; STEPS=${STEPS:-10}; REPEAT=${REPEAT:-2}
export TCOD_WORKER_ARGS=${TCOD_WORKER_ARGS:---device cpu}
rm -rf "$OUT"; mkdir -p "$OUT"
if [ -z "$CONFIG" ]; then  # a two-layer model with the GPU examples' 8,192 positions (chat memory accumulates)
  CONFIG="$OUT/tiny.json"
  echo '{ "arch": "qwen2", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 128, "max_position_embeddings": 8192, "seed": 1 }' > "$CONFIG"
fi
port=8400
for i in $(seq 1 "$REPEAT"); do
  for r in 0 1; do
    port=$((port + 1)); extra=(); [ $r = 1 ] && extra=(--set "texthouse_sft_teacher.horizon=1 turn")
    node bin/tcod.mjs run examples/texthouse/gpu/sft-teacher.tcod --out "$OUT/rollouts$r-$i" --quiet \
      --set "config=\"$CONFIG\"" --set "url=\"http://127.0.0.1:$port\"" --set "train_steps=$STEPS steps" \
      --set "texthouse_sft_teacher.batch=$TASKS tasks × $r rollouts" --set "texthouse_sft_teacher.eval=[]" "${extra[@]}" >/dev/null
  done
done
node -e '
const fs = require("fs"), path = require("path");
const dir = process.argv[1], means = { 0: [], 1: [] };
for (const d of fs.readdirSync(dir).sort().filter((d) => d.startsWith("rollouts"))) {
  const rows = fs.readFileSync(path.join(dir, d, "metrics.jsonl"), "utf8").split("\n").filter(Boolean).map(JSON.parse).filter((r) => r.kind === "train");
  const step = rows.reduce((a, r) => a + Object.values(r.time).reduce((x, y) => x + y, 0), 0) / rows.length;
  means[d[8]].push(step);
  console.log(`${d}: ${rows.length} steps, mean step ${step.toFixed(2)} s, demo NLL ${rows.map((r) => r.demoNll.toFixed(3)).slice(-3).join(" ")}`);
}
const m = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
console.log(`0 rollouts / 1 rollout, mean step time: ${(m(means[0]) / m(means[1])).toFixed(2)}x`);
' "$OUT"
