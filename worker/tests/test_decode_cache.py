"""Static decodes kept between calls (decode_cache.py): a bucket's first call decodes from HF's
prompt forward, later ones run the prompt's forward through the model's submodules
(StaticDecoder.prefill) into the kept buffers; either way, with padding rows and right-aligned
shorter prompts, a call gives what the eager decode gives, whatever the bucket held before. Slots
are found by model and bucket, and the byte budget evicts the least recently used. On a machine with
CUDA the kept graphs (prompt forward and decode step) are replayed too."""

from __future__ import annotations

import pytest
import torch

from tcod_worker.decode_cache import SlotCache, bucket_rows, bucket_small, bucket_width
from tcod_worker.sampling import SampleRow, generate_rows

from tests.test_static_decode import model, rows

MODES = [("cpu", "static")] + ([("cuda", "graph"), ("cuda", "static")] if torch.cuda.is_available() else [])


def test_buckets():
    assert [bucket_rows(n) for n in (1, 2, 3, 5, 8, 31, 32, 33, 64, 65, 140, 160)] == [1, 2, 4, 8, 8, 32, 32, 64, 64, 96, 160, 160]
    assert [bucket_width(n) for n in (1, 64, 65, 200, 256, 257, 512, 513, 1350)] == [64, 64, 128, 256, 256, 512, 512, 768, 1536]
    assert [bucket_small(n) for n in (1, 2, 3, 24, 32, 33)] == [1, 2, 4, 32, 32, 64]


class Slot:
    def __init__(self, nbytes: int):
        self.nbytes = nbytes


def test_slot_cache_keys_by_model_and_evicts_least_recently_used():
    cache, m1, m2 = SlotCache(budget=100), object(), object()
    assert cache.put(m1, "a", Slot(40)) and cache.put(m1, "b", Slot(40))
    assert cache.get(m2, "a") is None  # another model's bucket
    assert cache.get(m1, "a") is not None  # "a" now the most recently used
    assert cache.put(m2, "a", Slot(40))  # 120 > 100: the least recently used ("b" of m1) goes
    assert cache.get(m1, "b") is None and cache.get(m1, "a") is not None and cache.get(m2, "a") is not None
    assert cache.nbytes() == 80 and len(cache) == 2
    assert not cache.put(m1, "huge", Slot(101)) and cache.get(m1, "huge") is None
    assert (cache.hits, cache.misses) == (3, 3)
    grown = cache.get(m2, "a")
    grown.nbytes = 70  # a capture added its pool: put again re-counts it and evicts the others
    assert cache.put(m2, "a", grown) and len(cache) == 1 and cache.nbytes() == 70
    grown.nbytes = 150  # now larger than the whole budget: dropped
    assert not cache.put(m2, "a", grown) and len(cache) == 0


def test_slot_cache_releases_once_after_a_drop():
    """What an evicted or refused slot held goes back to the device once (release's `free`), and not
    after calls that dropped nothing."""
    cache, m, freed = SlotCache(budget=100), object(), []
    free = lambda: freed.append(len(cache))  # noqa: E731
    assert cache.put(m, "a", Slot(60)) and not cache.release(free) and freed == []
    assert cache.put(m, "b", Slot(60))  # evicts "a"
    assert cache.release(free) and freed == [1] and cache.dropped == 1
    assert not cache.release(free) and freed == [1]  # nothing dropped since
    assert not cache.put(m, "huge", Slot(101))  # refused: it was built, so its memory is dropped too
    assert cache.release(free) and freed == [1, 1] and cache.dropped == 2


@pytest.mark.parametrize("arch", ["llama", "qwen2"])
@pytest.mark.parametrize("where,mode", MODES)
def test_kept_decode_matches_eager_call_after_call(arch, where, mode):
    device = torch.device(where)
    m = model(arch, seed=11).to(device)
    cache = SlotCache(budget=1 << 30)
    # Call by call: a fresh bucket; the same bucket again with other prompts, widths and settings of
    # the same kind; fewer rows in it (padding rows); a smaller bucket; the first bucket again.
    calls = [rows(0), rows(1), rows(2)[:4] + rows(2)[-1:], rows(3)[:3], rows(4)]
    for i, rs in enumerate(calls):
        with torch.no_grad():
            eager = generate_rows(m, rs, pad_id=0, device=device, decode="eager")
            kept = generate_rows(m, rs, pad_id=0, device=device, decode=mode, cache=cache)
        for e, k in zip(eager, kept, strict=True):
            assert k.tokens == e.tokens, f"call {i}"
            assert k.finish_reason == e.finish_reason
            assert k.logprobs == pytest.approx(e.logprobs, abs=1e-5)
            assert [[t for t, _ in pos] for pos in k.top] == [[t for t, _ in pos] for pos in e.top]
    assert (cache.hits, cache.misses, len(cache)) == (3, 2, 2)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs")
def test_kept_slots_never_count_negative_bytes():
    """A slot's graph pools are measured as the growth of reserved memory; the capture empties the
    allocator's cache as it starts, so blocks a large forward left cached before it must not count
    against the pool (they did: on the H200 the kept slots summed to -1.6 GiB and the budget stopped evicting)."""
    device = torch.device("cuda", torch.cuda.current_device())
    m = model("qwen2", seed=11).to(device)
    cache = SlotCache(budget=1 << 30)
    for i in range(4):
        junk = torch.empty(256 << 20, dtype=torch.uint8, device=device)  # a 256 MiB block left cached
        del junk
        with torch.no_grad():
            generate_rows(m, rows(i), pad_id=0, device=device, decode="graph", cache=cache)
        assert all(s.nbytes >= 0 for s in cache._slots.values()), f"call {i}"
    assert cache.nbytes() > 0


def test_a_kept_bucket_forgets_the_call_before():
    """Greedy continuations of one prompt are the same whether the bucket last held a longer prompt,
    more rows, or nothing."""
    m, cpu = model("qwen2"), torch.device("cpu")
    short = SampleRow(list(range(10, 22)), 16, temperature=0.0)
    wide = [SampleRow(list(range(5, 60)), 16, temperature=0.0, seed=i) for i in range(4)]
    with torch.no_grad():
        alone = generate_rows(m, [short], pad_id=0, device=cpu, decode="static")
        cache = SlotCache(budget=1 << 30)
        generate_rows(m, wide, pad_id=0, device=cpu, decode="static", cache=cache)
        after = generate_rows(m, [short] * 3, pad_id=0, device=cpu, decode="static", cache=cache)
    assert cache.hits == 1
    assert after[0].tokens == alone[0].tokens == after[1].tokens


def same_samples(a: list[dict], b: list[dict]) -> None:
    assert [x["tokens"] for x in a] == [x["tokens"] for x in b]
    assert [x["finish_reason"] for x in a] == [x["finish_reason"] for x in b]
    for x, y in zip(a, b):
        assert x["logprobs"] == pytest.approx(y["logprobs"], abs=1e-5)


def test_worker_flag_keeps_decodes_and_samples_as_eager(assets):
    """`--decode static --decode-cache-mb`: /sample gives what an eager worker gives, call after
    call and after an optimiser step (the kept buffers read the weights updated in place), and
    /info counts the kept slots' hits."""
    from tests.conftest import DEVICE, DTYPE, WorkerProcess

    base = ["--model", str(assets["student"]), "--device", DEVICE, "--dtype", DTYPE]
    kept = WorkerProcess(base + ["--decode", "static", "--decode-cache-mb", "64"])
    eager = WorkerProcess(base + ["--decode", "eager"])
    try:
        assert kept.ok("/info")["decode_cache"] == {"budget_mib": 64.0, "slots": 0, "mib": 0.0, "hits": 0, "misses": 0,
                                                   "dropped": 0}
        assert eager.ok("/info")["decode_cache"] is None
        calls = [{"prompts": [[5, 6, 7, 8], [9, 10]], "max_tokens": 6, "temperature": 0.0},
                 {"prompts": [[11, 12, 13], [14, 15, 16, 17, 18]], "max_tokens": 6, "temperature": 0.0},
                 {"prompts": [[19]], "max_tokens": 5, "temperature": 1.0, "seed": 3}]
        for body in calls:
            same_samples(kept.ok("/sample", body)["samples"], eager.ok("/sample", body)["samples"])
        row = {"tokens": [5, 6, 7, 8, 9], "mask": [0, 1, 1, 1, 1]}
        before = kept.ok("/sample", calls[0])["samples"]
        for w in (kept, eager):  # one identical update on both
            w.ok("/forward_backward", {"rows": [row], "loss": "cross_entropy"})
            w.ok("/optim_step", {"lr": 0.05})
        after = kept.ok("/sample", calls[0])["samples"]
        assert [x["logprobs"] for x in after] != [x["logprobs"] for x in before]
        same_samples(after, eager.ok("/sample", calls[0])["samples"])
        cache = kept.ok("/info")["decode_cache"]
        assert cache["hits"] == 3 and cache["misses"] == 2 and cache["slots"] == 2 and cache["mib"] > 0
        assert cache["dropped"] == 0
    finally:
        kept.stop()
        eager.stop()


@pytest.mark.parametrize("arch", ["llama", "qwen2"])
def test_a_prefill_in_groups_of_rows_decodes_as_one(arch):
    """`prefill_tokens` (the worker's --token-budget) runs HF's forward of the prompts a few rows at a
    time; the stacked caches then decode as the whole batch's would, kept or not (the rows' prompts
    differ in length, so the groups' left padding is the batch's)."""
    m, cpu = model(arch, seed=5), torch.device("cpu")
    rs = rows(6)
    width = max(len(r.prompt) for r in rs)
    assert len(rs) > 2 and len({len(r.prompt) for r in rs}) > 1
    with torch.no_grad():
        whole = generate_rows(m, rs, pad_id=0, device=cpu, decode="static")
        for tokens in (width, 2 * width + 1, 1):  # 1 row, 2 rows, and a budget under one row (still 1 row)
            grouped = generate_rows(m, rs, pad_id=0, device=cpu, decode="static", prefill_tokens=tokens)
            kept = generate_rows(m, rs, pad_id=0, device=cpu, decode="static", prefill_tokens=tokens,
                                 cache=SlotCache(budget=1 << 30))
            for w, g, k in zip(whole, grouped, kept, strict=True):
                assert g.tokens == w.tokens == k.tokens and g.finish_reason == w.finish_reason
                assert g.logprobs == pytest.approx(w.logprobs, abs=1e-5)
                assert k.logprobs == pytest.approx(w.logprobs, abs=1e-5)
