"""What a worker refuses, and when: nothing of a body is read before the token and the size are
checked; /save and /load stay beneath the worker's roots; saved optimiser state is loaded with
weights_only; a worker never listens beyond loopback without a token."""

from __future__ import annotations

import os
import pickle
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .conftest import DEVICE, DTYPE, WORKER_DIR, WorkerProcess

TOKEN = "t0ken"


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("roots")
    inside, outside = base / "inside", base / "outside"
    inside.mkdir()
    outside.mkdir()
    return {"inside": inside, "outside": outside}


@pytest.fixture(scope="module")
def guarded(assets: dict[str, Path], roots: dict[str, Path]):
    """A full fine-tuning worker behind a token, with a 1 MiB body limit and one root."""
    w = WorkerProcess(["--model", str(assets["student"]), "--device", DEVICE, "--dtype", DTYPE, "--token", TOKEN,
                       "--max-body-mb", "1", "--root", str(roots["inside"])], token=TOKEN)
    yield w
    w.stop()


def raw_request(base: str, head: str, body: bytes = b"", timeout: float = 15.0) -> str:
    """Sends the request head (and maybe part of a body) and returns the status line and headers that come back."""
    host, port = base.removeprefix("http://").rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=timeout) as s:
        s.sendall(head.encode() + body)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = s.recv(4096)
            if not chunk:
                break
            data += chunk
        return data.decode("latin-1")


def test_a_wrong_token_is_refused_before_the_body_is_read(guarded):
    # 100 MB announced, none sent: a server that reads the body first would wait (and time out here).
    head = ("POST /forward_backward HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Authorization: Bearer wrong\r\nContent-Length: 100000000\r\n\r\n")
    reply = raw_request(guarded.base, head)
    assert reply.startswith("HTTP/1.1 401"), reply
    assert "Connection: close" in reply
    # No token at all: the same.
    reply = raw_request(guarded.base, head.replace("Authorization: Bearer wrong\r\n", ""))
    assert reply.startswith("HTTP/1.1 401"), reply


def test_a_body_over_the_limit_is_refused_before_it_is_read(guarded):
    head = (f"POST /tokenize HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
            f"Content-Length: {2 * 1024 * 1024}\r\n\r\n")
    reply = raw_request(guarded.base, head)
    assert reply.startswith("HTTP/1.1 413"), reply
    status, payload = guarded.call("/tokenize", raw=b"[" * 100_000 + b"]" * 100_000)
    assert status == 400 and "nested too deeply" in payload["error"]["message"]
    assert guarded.ok("/tokenize", {"text": "open the fridge"})["count"] == 3  # still serving


def test_save_and_load_stay_beneath_the_roots(guarded, roots: dict[str, Path]):
    outside, inside = roots["outside"], roots["inside"]
    status, payload = guarded.call("/save", {"path": str(outside / "ck"), "kind": "full"})
    assert status == 400 and "outside this worker's roots" in payload["error"]["message"]
    assert not (outside / "ck").exists()
    saved = guarded.ok("/save", {"path": str(inside / "ck"), "kind": "full"})
    assert saved["path"] == str((inside / "ck").resolve())
    # A copy outside, reached directly, through `..`, and through a symlink inside the root: all refused.
    subprocess.run(["cp", "-r", str(inside / "ck"), str(outside / "ck")], check=True)
    (inside / "link").symlink_to(outside / "ck")
    for p in (outside / "ck", inside / ".." / "outside" / "ck", inside / "link"):
        status, payload = guarded.call("/load", {"path": str(p)})
        assert status == 400 and "outside this worker's roots" in payload["error"]["message"], (p, payload)
    assert guarded.ok("/load", {"path": str(inside / "ck")})["optimizer_restored"] in (True, False)


class _Boom:
    def __reduce__(self):
        return (os.system, (f"touch {Path(os.environ.get('TMPDIR', '/tmp')) / 'tcod-worker-pwned'}",))


def test_saved_state_is_loaded_with_weights_only(guarded, roots: dict[str, Path]):
    marker = Path(os.environ.get("TMPDIR", "/tmp")) / "tcod-worker-pwned"
    marker.unlink(missing_ok=True)
    ck = roots["inside"] / "evil"
    guarded.ok("/save", {"path": str(ck), "kind": "full"})
    with open(ck / "tcod_worker_state.pt", "wb") as f:
        pickle.dump({"optimizer": None, "version": _Boom()}, f)
    status, payload = guarded.call("/load", {"path": str(ck)})
    assert status == 400 and "weights_only" in payload["error"]["message"], payload
    assert not marker.exists(), "the pickle ran code in the worker"


@pytest.mark.parametrize("host", ["0.0.0.0", "192.0.2.1"])
def test_no_token_no_listening_beyond_loopback(assets: dict[str, Path], host: str):
    env = {k: v for k, v in os.environ.items() if k != "TCOD_WORKER_TOKEN"}
    env["PYTHONPATH"] = str(WORKER_DIR)
    t0 = time.time()
    r = subprocess.run([sys.executable, "-m", "tcod_worker", "--model", str(assets["student"]), "--host", host, "--port", "0"],
                       capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 2
    assert f"refusing to listen on {host} without a token" in r.stderr
    assert "listening on" not in r.stdout
    assert time.time() - t0 < 60
