#!/usr/bin/env bash
# Installs TensorBoard and wandb into a virtual environment (default .venv-metrics) for
# test/runtime/sinks.test.ts, which reads tcod's event files back with TensorBoard's own loader and an
# offline W&B run with wandb's protobufs. Idempotent. Usage: bash test/metrics/ci-install.sh [VENV]
set -euo pipefail
VENV="${1:-.venv-metrics}"
TENSORBOARD_VERSION=2.20.0
WANDB_VERSION=0.31.0
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
if ! "$VENV/bin/python" -c "import importlib.metadata as m, sys; sys.exit(m.version('tensorboard') != '$TENSORBOARD_VERSION' or m.version('wandb') != '$WANDB_VERSION')" 2>/dev/null; then
  "$VENV/bin/pip" install --quiet --disable-pip-version-check "tensorboard==$TENSORBOARD_VERSION" "wandb==$WANDB_VERSION"
fi
"$VENV/bin/python" -c "import importlib.metadata as m; print('tensorboard', m.version('tensorboard'), '· wandb', m.version('wandb'))"
