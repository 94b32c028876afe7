#!/usr/bin/env bash
# Installs Trinity-RFT's config code for test/trinity/validate_trinity.py without its GPU stack
# (torch, vllm, verl, flash-attn): `--no-deps` for the package itself, then only what
# trinity.common.config and its validators import at module level. Measured here: 73 s from an
# empty venv (pip upgrade and downloads included); ~30 s with a warm pip cache.
#
# Usage: test/trinity/ci-install.sh [VENV_DIR]   (default .venv-trinity; then
#        TRINITY_PYTHON=VENV_DIR/bin/python npx vitest run test/trinity)
set -euo pipefail
VENV="${1:-.venv-trinity}"
TRINITY_VERSION="${TRINITY_VERSION:-0.6.0}"   # targets/trinity/export.ts TRINITY_UPSTREAM_VERSION
python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet --upgrade pip
"$VENV/bin/pip" install --quiet --no-deps "trinity-rft==${TRINITY_VERSION}"
# trinity.common.config: omegaconf; trinity.utils.log: ray; config_validator (kimi patch): transformers.
"$VENV/bin/pip" install --quiet "omegaconf>=2.3" "ray>=2.40" "transformers>=4.51,<5"
"$VENV/bin/python" -c "import trinity.common.config, trinity.common.config_validator; print('trinity-rft', __import__('importlib.metadata').metadata.version('trinity-rft'), 'config loader ready')"
