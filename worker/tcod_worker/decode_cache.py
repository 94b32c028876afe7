"""Decode state kept between /sample calls, so a CUDA graph is captured once per shape, not per call.

A static decode (static_decode.py) fixes every tensor's shape and address for one call, and its
CUDA graph is captured for those addresses. Capturing is a quarter of a small model's call on the
H200 (bench/results/h200.md: 12.8 of 45.7 ms for 32 rows × 16 tokens of the 4×256 student), and
rollouts make thousands of such calls. Here the call's shape is rounded up to a bucket (rows, prompt
width, decode steps, stop-list width) and the static buffers, the row sampler's tensors and the
graph of that bucket are kept, least recently used first out, within a byte budget; a later call of
the same bucket loads its rows into them and replays the graph. Unused rows of a bucket are done
from the start, and unused prompt columns are masked, so they change no real row's output.

What a kept graph reads must stay where it was: the model's weights are updated in place (AdamW
on the fp32 master weights; autocast's weight casts are recomputed in the graph, not cached), and a
slot is keyed by the model object, so a model loaded anew never meets an old slot.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Hashable


def bucket_rows(n: int) -> int:
    """Rows rounded up: a power of two up to 64, then a multiple of 32 (140 → 160)."""
    if n <= 64:
        return 1 << max(0, n - 1).bit_length()
    return -(-n // 32) * 32


def bucket_width(n: int) -> int:
    """Prompt width rounded up to a power of two, at least 64 (a turn's prompt grows by tens of tokens)."""
    return max(64, 1 << max(0, n - 1).bit_length())


def bucket_small(n: int) -> int:
    """Decode steps or stop-list width rounded up to a power of two (at least 1)."""
    return 1 << max(0, n - 1).bit_length()


class SlotCache:
    """Slots (anything with an `nbytes` attribute) by model and key, the least recently used evicted
    first once their bytes pass `budget`; a slot larger than the whole budget is not kept. A slot
    holds its model (the decoder calls it), so a model's id is not reused while one of its slots lives."""

    def __init__(self, budget: int):
        self.budget = budget
        self._slots: "OrderedDict[tuple[int, Hashable], Any]" = OrderedDict()
        self.hits = 0
        self.misses = 0

    def get(self, model: Any, key: Hashable) -> Any | None:
        slot = self._slots.get((id(model), key))
        if slot is None:
            self.misses += 1
            return None
        self._slots.move_to_end((id(model), key))
        self.hits += 1
        return slot

    def put(self, model: Any, key: Hashable, slot: Any) -> bool:
        """Keeps `slot` (evicting others as needed); False when it alone exceeds the budget."""
        if slot.nbytes > self.budget:
            return False
        self._slots[(id(model), key)] = slot
        while self.nbytes() > self.budget:
            self._slots.popitem(last=False)
        return True

    def nbytes(self) -> int:
        return sum(s.nbytes for s in self._slots.values())

    def __len__(self) -> int:
        return len(self._slots)
