"""JSON-lines request loop shared by every bridge.

Protocol (one JSON object per line, both directions):
  -> {"id": 7, "op": "step", "args": {...}}
  <- {"id": 7, "ok": true, "result": ...}
  <- {"id": 7, "ok": false, "error": {"kind": "config" | "env", "message": str, "hint": str | null}}
On start the bridge prints {"ready": true, "bridge": name, "versions": {...}} once its environment is
up, or {"fatal": message, "hint": hint} and exits 3 when it cannot start (package or Java missing).

Values JSON cannot carry (NaN, infinities) are errors of the op, never a line the client cannot parse.

Why stdout is duplicated: the JVM and the env packages print to stdout; a stray line would break the
protocol, so fd 1 is pointed at stderr and replies go to a private copy of the original stdout.
"""
from __future__ import annotations

import json
import os
import sys
import traceback
from typing import Any, Callable, Dict, Optional


class ConfigError(Exception):
    """Bad input from the curriculum (unknown task, split, game): the run must stop with the hint."""

    def __init__(self, message: str, hint: Optional[str] = None):
        super().__init__(message)
        self.hint = hint


class EnvFault(Exception):
    """A failure of the episode (step after done, env crash): the engine drops and retries it."""

    def __init__(self, message: str, retryable: bool = True):
        super().__init__(message)
        self.retryable = retryable


def _private_stdout():
    fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return os.fdopen(fd, "w", buffering=1, encoding="utf-8")


def serve(name: str, start: Callable[[], Any], ops: Callable[[Any], Dict[str, Callable[[dict], Any]]],
          versions: Callable[[], dict]) -> None:
    out = _private_stdout()

    def send(obj: dict) -> None:
        # allow_nan=False: a NaN or infinite value raises here (an error reply naming it) instead of going
        # out as the bare word NaN, which is not JSON. ensure_ascii: a lone surrogate (a simulator's
        # broken text) goes out as a JSON escape instead of failing to encode as UTF-8.
        out.write(json.dumps(obj, ensure_ascii=True, allow_nan=False) + "\n")
        out.flush()

    try:
        state = start()
    except ConfigError as e:
        send({"fatal": str(e), "hint": e.hint})
        sys.exit(3)
    except Exception as e:  # Java missing, JVM failed to launch
        send({"fatal": f"{type(e).__name__}: {e}", "hint": "check that Java >= 11 is installed (java -version)"})
        sys.exit(3)
    table = ops(state)
    send({"ready": True, "bridge": name, "pid": os.getpid(), "versions": versions()})
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            req = json.loads(line)
        except json.JSONDecodeError as e:
            send({"id": None, "ok": False, "error": {"kind": "protocol", "message": f"bad JSON line: {e}"}})
            continue
        rid, op = req.get("id"), req.get("op")
        if op == "close":
            send({"id": rid, "ok": True, "result": True})
            break
        fn = table.get(op)
        if fn is None:
            send({"id": rid, "ok": False, "error": {"kind": "protocol",
                                                    "message": f"unknown op {op!r}; known: {sorted(table)}"}})
            continue
        try:
            send({"id": rid, "ok": True, "result": fn(req.get("args") or {})})
        except ConfigError as e:
            send({"id": rid, "ok": False, "error": {"kind": "config", "message": str(e), "hint": e.hint}})
        except EnvFault as e:
            send({"id": rid, "ok": False, "error": {"kind": "env", "message": str(e), "retryable": e.retryable}})
        except Exception as e:
            traceback.print_exc(file=sys.stderr)
            send({"id": rid, "ok": False, "error": {"kind": "env", "message": f"{type(e).__name__}: {e}", "retryable": True}})
    teardown = getattr(state, "close", None)
    if callable(teardown):
        try:
            teardown()
        except Exception:
            pass
