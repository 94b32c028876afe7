#!/usr/bin/env bash
# Installs Trinity-RFT's config code for test/trinity/validate_trinity.py without its GPU stack
# (plus torch and scienceworld for the tests that run the generated plugin in Trinity's classes)
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
# torch, for test/trinity/trinity_classes.py (the generated plugin inside Trinity's own Workflow,
# Experience, experience-operator and advantage-fn classes). worker/ci-install.sh already installs
# PyPI's torch (~4 GB with its CUDA runtime wheels) into worker/.venv: when that venv runs the same
# interpreter, its site-packages are appended to this venv's path (a .pth file, so this venv's own
# packages — transformers <5 for Trinity — come first); otherwise torch is installed here.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
site="$("$VENV/bin/python" -c 'import site; print(site.getsitepackages()[0])')"
pyver="$("$VENV/bin/python" -c 'import sys; print(f"python{sys.version_info[0]}.{sys.version_info[1]}")')"
worker_site="$here/worker/.venv/lib/$pyver/site-packages"
if [ -d "$worker_site/torch" ]; then
  echo "$worker_site" > "$site/zz-tcod-worker-torch.pth"
else
  "$VENV/bin/pip" install --quiet "$(grep '^torch==' "$here/worker/requirements-ci.txt")"
fi
# scienceworld (its jar; Java comes from .ci/run / bridges/ci-install.sh), for
# test/trinity/workflow_real.py: the generated workflow on the real ScienceWorld in Trinity's classes.
"$VENV/bin/pip" install --quiet "scienceworld==1.2.3"   # bridges/ci-install.sh SCIENCEWORLD_VERSION
"$VENV/bin/python" -c "import torch, trinity.common.experience; print('torch', torch.__version__, 'for the Trinity class tests')"
"$VENV/bin/python" -c "import trinity.common.config, trinity.common.config_validator; print('trinity-rft', __import__('importlib.metadata').metadata.version('trinity-rft'), 'config loader ready')"
