"""Fixtures: a ~200-word vocabulary, tiny model configs, and real worker processes on free ports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

WORKER_DIR = Path(__file__).resolve().parent.parent
STARTUP_TIMEOUT = 120
#: A ~190-word household vocabulary and two tiny configs (student seed 0, teacher seed 7).
TINY = WORKER_DIR / "examples" / "tiny"
#: Where the workers under test run; CI has only a CPU (set cuda on a GPU machine).
DEVICE = os.environ.get("TCOD_WORKER_TEST_DEVICE", "cpu")
#: fp32 so numeric checks against a CPU fp32 reference hold to 1e-4.
DTYPE = os.environ.get("TCOD_WORKER_TEST_DTYPE", "fp32")



@pytest.fixture(scope="session")
def assets() -> dict[str, Path]:
    return {"root": TINY, "vocab": TINY / "words.txt", "student": TINY / "student.json", "teacher": TINY / "teacher.json"}


class WorkerProcess:
    def __init__(self, args: list[str], launcher: list[str] | None = None, token: str | None = None,
                 env: dict[str, str] | None = None):
        # /save and /load are confined to the worker's roots: the tests' files live under the temp dir.
        roots = [] if "--root" in args else ["--root", tempfile.gettempdir()]
        cmd = (launcher or [sys.executable]) + ["-m", "tcod_worker", "--port", "0", *roots, *args]
        self.token = token
        full_env = {**os.environ, "PYTHONPATH": str(WORKER_DIR), "OMP_NUM_THREADS": "1", **(env or {})}
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=full_env,
                                     cwd=str(WORKER_DIR))
        self.base = self._wait_for_listen_line()

    def _wait_for_listen_line(self) -> str:
        deadline = time.time() + STARTUP_TIMEOUT
        assert self.proc.stdout is not None
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                if self.proc.poll() is not None:
                    err = self.proc.stderr.read() if self.proc.stderr else ""
                    raise RuntimeError(f"worker exited with {self.proc.returncode}: {err[-3000:]}")
                continue
            if "listening on " in line:
                return line.split("listening on ", 1)[1].split()[0]
        raise RuntimeError("worker did not start in time")

    def call(self, path: str, body: Any = None, *, token: str | None = "default", raw: bytes | None = None,
             method: str | None = None) -> tuple[int, Any]:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        req = urllib.request.Request(self.base + path, data=data, method=method or ("POST" if data is not None else "GET"))
        req.add_header("Content-Type", "application/json")
        tok = self.token if token == "default" else token
        if tok:
            req.add_header("Authorization", f"Bearer {tok}")
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                return resp.status, json.loads(resp.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def ok(self, path: str, body: Any = None) -> Any:
        status, payload = self.call(path, body)
        assert status == 200, f"{path} -> {status}: {payload}"
        return payload

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


@pytest.fixture(scope="session")
def full_worker(assets: dict[str, Path]):
    """Full fine-tuning student (seed 0) with a frozen teacher (seed 7)."""
    w = WorkerProcess(["--model", str(assets["student"]), "--teacher", str(assets["teacher"]), "--device", DEVICE, "--dtype", DTYPE])
    yield w
    w.stop()


@pytest.fixture(scope="session")
def lora_worker(assets: dict[str, Path]):
    """LoRA rank-4 student, no teacher, behind a bearer token."""
    w = WorkerProcess(["--model", str(assets["student"]), "--lora-rank", "4", "--device", DEVICE, "--dtype", DTYPE, "--token", "s3cret"],
                      token="s3cret")
    yield w
    w.stop()


def reference_model(worker: WorkerProcess, tmp: Path, which: str = "student") -> Any:
    """The worker's current student weights, saved as a full model and loaded in this process."""
    from transformers import AutoModelForCausalLM

    out = tmp / f"ref-{which}-{time.time_ns()}"
    worker.ok("/save", {"path": str(out), "kind": "full", "optimizer": False})
    return AutoModelForCausalLM.from_pretrained(str(out), dtype="float32").eval()
