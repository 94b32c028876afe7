"""An optional record of the work the worker did (`TCOD_WORKER_TRACE=FILE`): one JSON line per
sample / score / forward_backward / optim_step request with its wall time, processed tokens and the
token sequences themselves, so a benchmark can replay exactly the work a run produced
(bench/h200/plain_loop.py) and count tokens the same way on both sides. Off (no cost) by default.
"""

from __future__ import annotations

import json
import os
import threading
import time
from typing import Any

import torch


class Trace:
    def __init__(self, path: str | None):
        self.path = path
        self._lock = threading.Lock()

    @staticmethod
    def from_env() -> "Trace":
        return Trace(os.environ.get("TCOD_WORKER_TRACE") or None)

    @property
    def on(self) -> bool:
        return self.path is not None

    def start(self) -> float:
        return time.perf_counter()

    def write(self, op: str, t0: float, record: dict[str, Any]) -> None:
        if self.path is None:
            return
        peak = torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else None
        line = json.dumps({"op": op, "at": time.time(), "s": time.perf_counter() - t0, "peak_gib": peak, **record})
        with self._lock, open(self.path, "a", encoding="utf-8") as f:
            f.write(line + "\n")
