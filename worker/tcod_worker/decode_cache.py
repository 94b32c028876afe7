"""Decode state kept between /sample calls, so CUDA graphs are captured once per shape, not per call.

A static decode (static_decode.py) fixes every tensor's shape and address for one call, and its
CUDA graph is captured for those addresses. Capturing is a quarter of a small model's call on the
H200, and the prompt's forward through HF's model another third (bench/results/h200.md: 12.8 and
14.3 of 45.7 ms for 32 rows × 16 tokens of the 4×256 student), and rollouts make thousands of such
calls. Here the call's shape is rounded up to a bucket (rows, prompt width, decode steps, stop-list
width) and the bucket's static buffers, row sampler and graphs are kept, least recently used first
out, within a byte budget. A bucket's first call runs HF's forward for the prompt and fills the
buffers from its cache; later calls load their prompts into the buffers and run the prompt's
forward through the model's own submodules (StaticDecoder.prefill), captured as a graph at the
second call and replayed after, as is the decode step. Unused rows of a bucket are done from the
start, and unused prompt columns are masked, so they change no real row's output.

A slot's bytes are its buffers' and, once captured, its graphs' private memory pools (measured as
the growth of the CUDA allocator's reserved memory over the capture). A slot evicted or refused
(larger than the whole budget) hands its memory back to PyTorch's caching allocator, not to the
device: the process keeps it reserved, where no other process can use it, so with several workers
on one GPU each one's reserved memory can grow past its budget until another runs out (eight workers
with 2,048 MB budgets filled the H200's 140 GiB). `release` hands it back to the device
(torch.cuda.empty_cache) once the caller has let go of the dropped slot.

What a kept graph reads must stay where it was: the model's weights are updated in place (AdamW
on the fp32 master weights; autocast's weight casts are recomputed in the graph, not cached), and a
slot is keyed by the model object, so a model loaded anew never meets an old slot.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Hashable


def _pow2(n: int) -> int:
    """The least power of two ≥ n (1 for n ≤ 1)."""
    return 1 << max(0, n - 1).bit_length()


def bucket_rows(n: int) -> int:
    """Rows rounded up: a power of two up to 64, then a multiple of 32 (140 → 160)."""
    if n <= 64:
        return _pow2(n)
    return -(-n // 32) * 32


def bucket_width(n: int) -> int:
    """Prompt width rounded up: a power of two from 64 to 256, then a multiple of 256 (a turn's prompt
    grows by tens of tokens, so a bucket serves several turns and pads by at most 255 columns)."""
    if n <= 256:
        return max(64, _pow2(n))
    return -(-n // 256) * 256


def bucket_small(n: int) -> int:
    """Decode steps or stop-list width rounded up to a power of two (at least 1)."""
    return _pow2(n)


class SlotCache:
    """Slots (anything with an `nbytes` attribute) by model and key, the least recently used evicted
    first once their bytes pass `budget`; a slot larger than the whole budget is not kept. A slot
    holds its model (the decoder calls it), so a model's id is not reused while one of its slots lives."""

    def __init__(self, budget: int):
        self.budget = budget
        self._slots: "OrderedDict[tuple[int, Hashable], Any]" = OrderedDict()
        self.hits = 0
        self.misses = 0
        #: Slots evicted or refused, in all; `_unreleased` is set while one awaits `release`.
        self.dropped = 0
        self._unreleased = False

    def get(self, model: Any, key: Hashable) -> Any | None:
        slot = self._slots.get((id(model), key))
        if slot is None:
            self.misses += 1
            return None
        self._slots.move_to_end((id(model), key))
        self.hits += 1
        return slot

    def put(self, model: Any, key: Hashable, slot: Any) -> bool:
        """Keeps `slot` under `key` as the most recently used (evicting others as needed; called again
        after a slot grew, it re-counts it); False, and `key` dropped, when it alone exceeds the budget."""
        if slot.nbytes > self.budget:
            self._slots.pop((id(model), key), None)
            self._dropped()
            return False
        self._slots[(id(model), key)] = slot
        self._slots.move_to_end((id(model), key))
        while self.nbytes() > self.budget:
            self._slots.popitem(last=False)
            self._dropped()
        return True

    def _dropped(self) -> None:
        self.dropped += 1
        self._unreleased = True

    def release(self, free: Callable[[], None]) -> bool:
        """Calls `free` (torch.cuda.empty_cache: the device gets back what the allocator holds unused)
        if a slot was dropped since the last release; call it after the call that dropped it returned,
        so that nothing still refers to the slot. True when `free` ran."""
        if not self._unreleased:
            return False
        self._unreleased = False
        free()
        return True

    def nbytes(self) -> int:
        return sum(s.nbytes for s in self._slots.values())

    def __len__(self) -> int:
        return len(self._slots)
