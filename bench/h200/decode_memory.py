"""GPU memory of one student worker's /sample calls (worker/tcod_worker/sampling.py) under a run's
calls: what the process keeps reserved, and its live peak, when HF's forward of the prompts runs for
all rows at once ("whole", the worker before the sixteenth session), in groups of rows of at most
--prefill-tokens padded tokens ("grouped", the worker's --token-budget; learn.sh's is 65,536), and
grouped with the allocator capped at --fraction of the GPU ("capped", the worker's --memory-fraction;
learn.sh gives six students 0.15 each). Kept decodes are on in every variant (--budget-mb, learn.sh's
`DECODE_CACHE_MB`), and dropped slots are released after each call, as the worker does.

The calls are those of bench/h200/learn.sh's students, with the 4×256 student (random weights, bf16
autocast over fp32 weights): per round, one OPD step's rollouts (30 turns of 32 episodes, prompts
growing by 35 tokens a turn from 300, rows dropping to 8, 6 new tokens) and one greedy evaluation
of every valid_seen task (30 turns of 140 episodes, the same prompts). Each variant runs in its own
process, one after the other. Reports, per variant: the allocator's peak and final reserved memory,
its peak allocated (live) memory, the kept slots' bytes, slots dropped, and the wall time of the calls.

    python bench/h200/decode_memory.py --out decode-memory.json [--budget-mb 1536] [--rounds 3]

`--device cpu` runs the same calls on the CPU as a check of the script (no memory figures there).
The sixteenth session ran the script as it then was (variants "kept" and "released": without and
with the release; both whole prefills): bench/results/h200-learn/s18/decode-memory.json.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

import torch

# decode.py (beside this file) sets up the worker's import path and holds the models and turn shapes.
from decode import MODELS, ROOT, VOCAB, turn_rows  # noqa: E402
from tcod_worker.decode_cache import SlotCache  # noqa: E402
from tcod_worker.sampling import SampleRow, generate_rows  # noqa: E402
from tcod_worker.tiny import build_tiny_model, parse_tiny_spec  # noqa: E402

VARIANTS = ("whole", "grouped", "capped")


def calls() -> list[list[SampleRow]]:
    rollout = [turn_rows(32 - (24 * t) // 29, t, 1.0) for t in range(30)]
    evaluation = [turn_rows(140, t, 0.0) for t in range(30)]
    return rollout + evaluation


def child(variant: str, budget_mb: float, rounds: int, device: str = "cuda", prefill_tokens: int = 65536,
          fraction: float = 0.15) -> dict:
    dev = torch.device(device)
    if dev.type == "cuda" and dev.index is None:  # set_per_process_memory_fraction needs the index
        dev = torch.device("cuda", torch.cuda.current_device())
    cuda = dev.type == "cuda"
    reserved = (lambda: torch.cuda.memory_reserved(dev)) if cuda else (lambda: 0)
    if cuda and variant == "capped":
        torch.cuda.set_per_process_memory_fraction(fraction, dev)
    spec = parse_tiny_spec(os.path.join(ROOT, MODELS["student"]), None)
    model = build_tiny_model(spec, VOCAB, eos_id=3, pad_id=0).to(dev)
    cache = SlotCache(budget=int(budget_mb * 2**20))
    group = None if variant == "whole" else prefill_tokens
    base = reserved()
    peak, per_round = base, []
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats(dev)
    t0 = time.perf_counter()
    for _ in range(rounds):
        for rs in calls():
            with torch.no_grad(), torch.autocast(dev.type, dtype=torch.bfloat16):
                generate_rows(model, rs, pad_id=0, device=dev, decode="graph" if cuda else "static", cache=cache,
                              prefill_tokens=group)
            cache.release(torch.cuda.empty_cache if cuda else (lambda: None))
            peak = max(peak, reserved())
        per_round.append(round(reserved() / 2**20))
    if cuda:
        torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    return {"variant": variant, "prefill_tokens": group, "fraction": fraction if variant == "capped" else None,
            "budget_mib": budget_mb, "rounds": rounds, "calls": rounds * len(calls()),
            "weights_mib": round(base / 2**20), "peak_reserved_mib": round(peak / 2**20),
            "peak_allocated_mib": round(torch.cuda.max_memory_allocated(dev) / 2**20) if cuda else None,
            "reserved_mib_after_each_round": per_round, "kept_mib": round(cache.nbytes() / 2**20, 1),
            "kept_slots": len(cache), "dropped": cache.dropped, "hits": cache.hits, "misses": cache.misses,
            "wall_s": round(wall, 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-mb", type=float, default=1536)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--prefill-tokens", type=int, default=65536)
    ap.add_argument("--fraction", type=float, default=0.15)
    ap.add_argument("--child", choices=VARIANTS)
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args()
    if a.child:
        res = child(a.child, a.budget_mb, a.rounds, a.device, a.prefill_tokens, a.fraction)
        print(json.dumps(res), flush=True)
        with open(a.out, "w") as f:
            json.dump(res, f)
        return
    runs = []
    for v in VARIANTS:
        subprocess.run([sys.executable, __file__, "--child", v, "--budget-mb", str(a.budget_mb), "--rounds", str(a.rounds),
                        "--prefill-tokens", str(a.prefill_tokens), "--fraction", str(a.fraction),
                        "--device", a.device, "--out", f"{a.out}.{v}"], check=True)
        with open(f"{a.out}.{v}") as f:
            runs.append(json.load(f))
        os.remove(f"{a.out}.{v}")
    whole, grouped, capped = runs
    ratio = lambda a, b, k: round(a[k] / max(1, b[k]), 4) if a[k] is not None and b[k] is not None else None  # noqa: E731
    res = {"device": torch.cuda.get_device_name(0) if a.device == "cuda" else a.device, "torch": torch.__version__, "runs": runs,
           "peak_allocated_grouped_over_whole": ratio(grouped, whole, "peak_allocated_mib"),
           "peak_reserved_grouped_over_whole": ratio(grouped, whole, "peak_reserved_mib"),
           "peak_reserved_capped_over_whole": ratio(capped, whole, "peak_reserved_mib"),
           "wall_grouped_over_whole": round(grouped["wall_s"] / whole["wall_s"], 4),
           "wall_capped_over_whole": round(capped["wall_s"] / whole["wall_s"], 4)}
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
