#!/usr/bin/env bash
# The Python test suites: the GPU worker (in worker/.venv, made by worker/ci-install.sh), the
# environment bridges (system python3, packages from bridges/ci-install.sh), the Trinity plugin's
# feedback rules on test/vectors/feedback.json and its range checks. Under CI they must run;
# elsewhere a missing install is reported and skipped.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
run_pytest() { # python, dir, label
  "$1" -m pytest -q -p no:cacheprovider "$2"; local rc=$?
  if [ $rc -eq 5 ]; then echo "$3: no tests collected" >&2; return 1; fi
  return $rc
}
if [ -x worker/.venv/bin/python ]; then
  run_pytest worker/.venv/bin/python worker/tests "worker" || status=1
elif [ -n "${CI:-}" ]; then
  echo "worker/.venv is missing: run bash worker/ci-install.sh" >&2; status=1
else
  echo "skipping the worker tests: run bash worker/ci-install.sh to install them"
fi
if python3 -c "import pytest" 2>/dev/null; then
  run_pytest python3 bridges/tests "bridges" || status=1
  # The Trinity plugin's feedback rules on the shared vectors (pure Python, no packages).
  run_pytest python3 test/feedback/test_feedback.py "feedback" || status=1
  # The Trinity plugin's range checks (tcod's plan/ranges.ts table, TC7001 on load, TC7005 at run time).
  run_pytest python3 test/trinity/test_ranges.py "trinity ranges" || status=1
elif [ -n "${CI:-}" ]; then
  echo "pytest is missing for the bridge tests" >&2; status=1
fi
exit $status
