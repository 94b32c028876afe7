"""Startup refusals: a clear message on stderr and exit code 2, never a half-started server."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from .conftest import WORKER_DIR


def _start(*args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(WORKER_DIR), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "tcod_worker", "--port", "0", "--device", "cpu", *args],
                          capture_output=True, text=True, env=env, timeout=120, cwd=str(WORKER_DIR))


def test_refuses_a_config_model_without_vocabulary_and_a_teacher_with_another_tokenizer(assets, tmp_path):
    r = _start("--model", "config:tiny")
    assert r.returncode == 2 and "--vocab" in r.stderr and "listening" not in r.stdout
    other = tmp_path / "other-words.txt"
    other.write_text("completely different words here\n".replace(" ", "\n"))
    teacher = tmp_path / "teacher.json"
    teacher.write_text(json.dumps({"vocab": str(other), "seed": 3}))
    r = _start("--model", str(assets["student"]), "--teacher", str(teacher))
    assert r.returncode == 2 and "different tokenizers" in r.stderr
    r = _start("--model", str(tmp_path / "no-such-model"))
    assert r.returncode == 2 and "never downloads" in r.stderr


def test_memory_fraction_is_checked_and_reported(assets):
    """--memory-fraction outside [0, 1] is refused at startup; on the CPU it is ignored with a notice,
    and /info reports no limit (on CUDA it reports the share and its GiB)."""
    from .conftest import WorkerProcess

    for bad in ("1.5", "-0.1"):
        r = _start("--model", str(assets["student"]), "--memory-fraction", bad)
        assert r.returncode == 2 and "--memory-fraction must be in (0, 1]" in r.stderr and "listening" not in r.stdout
    w = WorkerProcess(["--model", str(assets["student"]), "--device", "cpu", "--memory-fraction", "0.25"])
    try:
        assert w.ok("/info")["memory"] == {"fraction": None, "limit_gib": None, "reserved_gib": None, "peak_reserved_gib": None}
    finally:
        w.stop()
    assert "--memory-fraction 0.25 applies to CUDA devices; ignored on cpu" in w.proc.stderr.read()
