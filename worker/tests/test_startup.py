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


def test_each_model_reports_and_is_held_to_its_own_positions(assets, tmp_path):
    """A teacher with fewer positions than the student: /v1/models and /info give each model's own
    max_position_embeddings (the teacher's was reported as the student's, so tcod's start-up check
    passed a run whose teacher could not read its prompts), and a request to the teacher is checked
    against the teacher's."""
    from .conftest import WorkerProcess

    student, teacher = tmp_path / "student.json", tmp_path / "teacher.json"
    for path, seed, n in ((student, 0, 400), (teacher, 7, 40)):
        path.write_text(json.dumps({"vocab": str(assets["vocab"]), "seed": seed, "max_position_embeddings": n}))
    w = WorkerProcess(["--model", str(student), "--teacher", str(teacher), "--device", "cpu", "--dtype", "fp32"])
    try:
        cards = {c["id"]: c["max_model_len"] for c in w.ok("/v1/models")["data"]}
        assert cards == {str(student): 400, str(teacher): 40}
        info = w.ok("/info")
        assert (info["max_model_len"], info["teacher_max_model_len"]) == (400, 40)
        seq = w.ok("/tokenize", {"prompt": " ".join(["look"] * 60)})["tokens"][:60]
        assert len(seq) == 60
        w.ok("/score", {"sequences": [seq], "prompt_lengths": [1]})
        status, body = w.call("/score", {"sequences": [seq], "prompt_lengths": [1], "model": "teacher"})
        assert status == 400 and "more than the teacher model's 40 positions" in json.dumps(body)
    finally:
        w.stop()
    # Without a teacher /info says so.
    w = WorkerProcess(["--model", str(student), "--device", "cpu"])
    try:
        assert w.ok("/info")["teacher_max_model_len"] is None
    finally:
        w.stop()
