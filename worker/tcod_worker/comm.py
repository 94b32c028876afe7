"""Data parallelism over torch.distributed (launched by torchrun).

Rank 0 serves HTTP. For each operation it broadcasts (op, request) to every rank with
`broadcast_object_list`; every rank works on its contiguous shard of the request's items, and the
per-rank results come back to rank 0 with `gather_object`. Gradients are synchronised by
DistributedDataParallel or FSDP2 inside the backward (parallel.py), not here. With one process (no
torchrun) the same code runs without any collective.
"""

from __future__ import annotations

import os
import threading
import traceback
from typing import Any, Callable

import torch
import torch.distributed as dist

Handler = Callable[[str, dict[str, Any]], Any]


def shard_range(n: int, rank: int, world: int) -> range:
    """Contiguous, order-preserving shard of n items for `rank` (sizes differ by at most one)."""
    base, extra = divmod(n, world)
    start = rank * base + min(rank, extra)
    return range(start, start + base + (1 if rank < extra else 0))


class Comm:
    def __init__(self, rank: int = 0, world: int = 1, device: torch.device | None = None):
        self.rank = rank
        self.world = world
        self.device = device
        # Collectives must be issued in the same order on every rank: one at a time, shutdown included.
        self._lock = threading.Lock()

    @staticmethod
    def from_env(device_kind: str) -> "Comm":
        world = int(os.environ.get("WORLD_SIZE", "1"))
        if world <= 1:
            return Comm()
        rank = int(os.environ["RANK"])
        local = int(os.environ.get("LOCAL_RANK", rank))
        if device_kind == "cuda":
            torch.cuda.set_device(local)
            dist.init_process_group("nccl", device_id=torch.device("cuda", local))
            return Comm(rank, world, torch.device("cuda", local))
        dist.init_process_group("gloo")
        return Comm(rank, world, torch.device("cpu"))

    @property
    def distributed(self) -> bool:
        return self.world > 1

    def run(self, op: str, request: dict[str, Any], handler: Handler) -> list[Any]:
        """On rank 0: runs `op` on every rank; returns the per-rank results in rank order.
        A failure on any rank is re-raised here after all ranks have answered (no rank hangs)."""
        if not self.distributed:
            return [handler(op, request)]
        with self._lock:
            box: list[Any] = [op, request]
            dist.broadcast_object_list(box, src=0)
            return self._answer(op, request, handler)

    def _answer(self, op: str, request: dict[str, Any], handler: Handler) -> list[Any]:
        try:
            local: Any = ("ok", handler(op, request))
        except Exception as e:  # noqa: BLE001 - ship the failure to rank 0 instead of hanging
            local = ("error", e, traceback.format_exc())
        gathered: list[Any] = [None] * self.world if self.rank == 0 else []
        dist.gather_object(local, gathered if self.rank == 0 else None, dst=0)
        if self.rank != 0:
            return []
        for item in gathered:
            if item[0] == "error":
                raise item[1]
        return [item[1] for item in gathered]

    def follow(self, handler: Handler) -> None:
        """The loop of ranks > 0: wait for an op from rank 0, run it, answer; until "shutdown"."""
        while True:
            box: list[Any] = [None, None]
            dist.broadcast_object_list(box, src=0)
            op, request = box
            if op == "shutdown":
                break
            self._answer(op, request, handler)

    def shutdown(self) -> None:
        if self.distributed:
            with self._lock:
                if self.rank == 0:
                    dist.broadcast_object_list(["shutdown", {}], src=0)
                dist.destroy_process_group()
                self.world = 1
