"""Data parallelism and sharding through torch.distributed's own engines.

  - one process: the models as they are;
  - `ddp` (models that fit on one GPU): the trainable student is wrapped in DistributedDataParallel,
    which all-reduces gradients in buckets while the backward still runs; the teacher is replicated;
  - `fsdp` (models that do not fit): FSDP2 (`torch.distributed.fsdp.fully_shard`) shards every
    decoder layer and then the whole model, parameters, gradients and optimiser state alike; the
    teacher is sharded the same way (forward only).

`auto` picks fsdp when the student's training state (fp32 weights, gradients and two AdamW moments:
16 bytes a parameter) would take more than half of one GPU's memory, else ddp.

Work is shared by tokens, not by rows: rows are dealt longest first to the rank with the fewest
tokens so far (every rank computes the same plan from the same request). Under FSDP every rank must
run the same forwards (each one all-gathers parameters), so ranks pad their micro-batch lists to
the longest rank's count with empty batches and decode in lock step.

Loss weights are global (they sum to 1 over the whole request), so the batch gradient is the sum of
the ranks' gradients; DDP and FSDP average, so each rank's loss is multiplied by the world size.
"""

from __future__ import annotations

import contextlib
from typing import Any

import torch

from .comm import Comm
from .logprobs import SelectedLogits

#: Bytes of training state per trainable parameter: fp32 weight, gradient, AdamW exp_avg and exp_avg_sq.
TRAIN_BYTES_PER_PARAM = 16


def choose_mode(requested: str, world: int, params: int, device: torch.device) -> str:
    if world <= 1:
        return "single"
    if requested in ("ddp", "fsdp"):
        return requested
    if device.type == "cuda":
        total = torch.cuda.get_device_properties(device).total_memory
        return "fsdp" if params * TRAIN_BYTES_PER_PARAM > total // 2 else "ddp"
    return "ddp"


def deal_by_tokens(lengths: list[int], world: int) -> list[list[int]]:
    """Row indices per rank: longest first, each to the rank with the fewest tokens so far (ties to
    the lowest rank); each rank's list is sorted. Deterministic, so every rank computes the same."""
    shares: list[list[int]] = [[] for _ in range(world)]
    load = [0] * world
    for i in sorted(range(len(lengths)), key=lambda i: (-lengths[i], i)):
        r = min(range(world), key=lambda r: (load[r], r))
        shares[r].append(i)
        load[r] += lengths[i]
    return [sorted(s) for s in shares]


class Parallel:
    def __init__(self, comm: Comm, mode: str):
        self.comm = comm
        self.mode = mode

    @property
    def lockstep(self) -> bool:
        """Every rank must run the same sequence of forwards (FSDP all-gathers inside each one)."""
        return self.mode == "fsdp"

    @property
    def grad_scale(self) -> float:
        return float(self.comm.world) if self.mode in ("ddp", "fsdp") else 1.0

    def my_share(self, lengths: list[int]) -> list[int]:
        if self.comm.world <= 1:
            return list(range(len(lengths)))
        return deal_by_tokens(lengths, self.comm.world)[self.comm.rank]

    def equalize(self, groups: list[list[int]]) -> list[list[int]]:
        """Under lockstep, pads this rank's micro-batch list with empty batches to the longest rank's
        count (one all-reduce of a single integer)."""
        if not self.lockstep:
            return groups
        n = torch.tensor([len(groups)], dtype=torch.long, device=self._collective_device())
        torch.distributed.all_reduce(n, op=torch.distributed.ReduceOp.MAX)
        return groups + [[] for _ in range(int(n.item()) - len(groups))]

    def lockstep_max(self, value: int) -> int:
        if not self.lockstep:
            return value
        n = torch.tensor([value], dtype=torch.long, device=self._collective_device())
        torch.distributed.all_reduce(n, op=torch.distributed.ReduceOp.MAX)
        return int(n.item())

    def _collective_device(self) -> torch.device:
        return self.comm.device if self.comm.device is not None else torch.device("cpu")

    # ------------------------------------------------------------ wrapping
    def shard_model(self, model: Any) -> Any:
        """FSDP2: each decoder layer is its own unit, then the model (embeddings, norm, head)."""
        if self.mode != "fsdp":
            return model
        from torch.distributed.fsdp import fully_shard

        base = model.get_base_model() if hasattr(model, "get_base_model") else model
        layers = getattr(getattr(base, "model", base), "layers", None)
        if layers is None:
            raise RuntimeError(f"FSDP sharding needs a decoder with `.model.layers`; {type(base).__name__} has none")
        for layer in layers:
            fully_shard(layer)
        fully_shard(model)
        return model

    def train_module(self, student: Any) -> torch.nn.Module:
        """The module the training forward runs through (DDP-wrapped under ddp)."""
        head = SelectedLogits(student, full_forward=self.mode == "fsdp")
        if self.mode != "ddp":
            return head
        from torch.nn.parallel import DistributedDataParallel

        dev = self.comm.device
        ids = [dev.index] if dev is not None and dev.type == "cuda" else None
        return DistributedDataParallel(head, device_ids=ids, broadcast_buffers=False)

    def accumulate(self, module: torch.nn.Module, last: bool) -> Any:
        """Gradients stay local until this request's last micro-batch, whose backward synchronises."""
        if last or self.mode == "single":
            if self.mode == "fsdp":
                module_root(module).set_requires_gradient_sync(True)
            return contextlib.nullcontext()
        if self.mode == "ddp":
            return module.no_sync()  # type: ignore[operator]
        module_root(module).set_requires_gradient_sync(False)
        return contextlib.nullcontext()

    def clip_grad_norm(self, params: list[torch.nn.Parameter], max_norm: float | None) -> float:
        norm = torch.nn.utils.clip_grad_norm_(params, max_norm if max_norm else float("inf"))
        if hasattr(norm, "full_tensor"):
            norm = norm.full_tensor()
        return float(norm)

    # ------------------------------------------------------------ state
    def full_state_dict(self, model: Any) -> dict[str, torch.Tensor] | None:
        """Unsharded weights (FSDP: gathered; a collective, so every rank calls it), on CPU."""
        if self.mode != "fsdp":
            return None
        from torch.distributed.checkpoint.state_dict import StateDictOptions, get_model_state_dict

        return get_model_state_dict(model, options=StateDictOptions(full_state_dict=True, cpu_offload=True))

    def load_full_state_dict(self, model: Any, state: dict[str, torch.Tensor]) -> tuple[list[str], list[str]]:
        if self.mode != "fsdp":
            missing, unexpected = model.load_state_dict(state, strict=False)
            return list(missing), list(unexpected)
        from torch.distributed.checkpoint.state_dict import StateDictOptions, set_model_state_dict

        result = set_model_state_dict(model, state, options=StateDictOptions(full_state_dict=True, strict=False))
        return list(result.missing_keys), list(result.unexpected_keys)


def module_root(module: torch.nn.Module) -> Any:
    """The FSDP root model inside a SelectedLogits."""
    return module.model if isinstance(module, SelectedLogits) else module
