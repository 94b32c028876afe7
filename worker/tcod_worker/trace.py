"""An optional record of the work the worker did (`TCOD_WORKER_TRACE=FILE`): one JSON line per
sample / score / forward_backward / optim_step request with its wall time, processed tokens and the
token sequences themselves, so a benchmark can replay exactly the work a run produced
(bench/h200/plain_loop.py) and count tokens the same way on both sides. Off (no cost) by default.

`TCOD_WORKER_TRACE_SEQUENCES=0` keeps the timings and writes each list of token sequences as its
size instead ({rows, tokens, longest}): a few hundred bytes a request rather than megabytes, so a
long run can be traced to see where its time goes (bench/h200/learn.sh's TRACE) without the
tracing itself slowing it. A score line also carries `forward_s`: the seconds its forwards took on
the device (synchronised before and after), which tells the model's own time from the rest.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

import torch


def size_of(value: Any) -> Any:
    """A list of token sequences (lists of ints, or rows {tokens, …}) as {rows, tokens, longest};
    anything else unchanged."""
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        lengths = [len(v) for v in value]
    elif isinstance(value, list) and value and all(isinstance(v, dict) and isinstance(v.get("tokens"), list) for v in value):
        lengths = [len(v["tokens"]) for v in value]
    else:
        return value
    return {"rows": len(lengths), "tokens": sum(lengths), "longest": max(lengths)}


class Trace:
    def __init__(self, path: str | None, sequences: bool = True):
        self.path = path
        self.sequences = sequences
        self._lock = threading.Lock()
        self._pending: dict[str, float] = {}

    @staticmethod
    def from_env() -> "Trace":
        return Trace(os.environ.get("TCOD_WORKER_TRACE") or None,
                     os.environ.get("TCOD_WORKER_TRACE_SEQUENCES", "1").strip() not in ("0", "false", "no"))

    @property
    def on(self) -> bool:
        return self.path is not None

    def start(self) -> float:
        return time.perf_counter()

    def add(self, key: str, seconds: float) -> None:
        """Adds to a figure the next line carries (e.g. `forward_s` over a request's micro-batches)."""
        with self._lock:
            self._pending[key] = self._pending.get(key, 0.0) + seconds

    def write(self, op: str, t0: float, record: dict[str, Any]) -> None:
        if self.path is None:
            return
        peak = torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None
        if not self.sequences:
            record = {k: size_of(v) for k, v in record.items()}
        with self._lock:
            pending, self._pending = self._pending, {}
        line = json.dumps({"op": op, "at": time.time(), "s": time.perf_counter() - t0, "peak_gib": peak, **pending, **record})
        with self._lock, open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
