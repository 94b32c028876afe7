"""GPU memory of the worker's kept decodes (worker/tcod_worker/decode_cache.py) under a student run's
calls: what one worker process keeps reserved with and without handing evicted slots back to the
device (SlotCache.release → torch.cuda.empty_cache, as the worker does after each /sample call).

The calls are those of bench/h200/learn.sh's students, with the 4×256 student (random weights, bf16
autocast over fp32 weights): per round, one OPD step's rollouts (30 turns of 32 episodes, prompts
growing by 35 tokens a turn from 300, rows dropping to 8, 6 new tokens) and one greedy evaluation
of every valid_seen task (30 turns of 140 episodes, the same prompts). Each variant runs in its own
process, one after the other, under the same byte budget (learn.sh's `…:2048` field). Reports, per
variant: the allocator's peak and final reserved memory, the kept slots' bytes, slots dropped, and
the wall time of the calls.

    python bench/h200/decode_memory.py --out decode-memory.json [--budget-mb 2048] [--rounds 3]

`--device cpu` runs the same calls on the CPU as a check of the script (no memory figures there).
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

VARIANTS = ("kept", "released")


def calls() -> list[list[SampleRow]]:
    rollout = [turn_rows(32 - (24 * t) // 29, t, 1.0) for t in range(30)]
    evaluation = [turn_rows(140, t, 0.0) for t in range(30)]
    return rollout + evaluation


def child(variant: str, budget_mb: float, rounds: int, device: str = "cuda") -> dict:
    dev = torch.device(device)
    cuda = dev.type == "cuda"
    reserved = (lambda: torch.cuda.memory_reserved(dev)) if cuda else (lambda: 0)
    spec = parse_tiny_spec(os.path.join(ROOT, MODELS["student"]), None)
    model = build_tiny_model(spec, VOCAB, eos_id=3, pad_id=0).to(dev)
    cache = SlotCache(budget=int(budget_mb * 2**20))
    base = reserved()
    peak, per_round = base, []
    if cuda:
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(rounds):
        for rs in calls():
            with torch.no_grad(), torch.autocast(dev.type, dtype=torch.bfloat16):
                generate_rows(model, rs, pad_id=0, device=dev, decode="graph", cache=cache)
            if variant == "released":
                cache.release(torch.cuda.empty_cache if cuda else (lambda: None))
            peak = max(peak, reserved())
        per_round.append(round(reserved() / 2**20))
    if cuda:
        torch.cuda.synchronize()
    wall = time.perf_counter() - t0
    return {"variant": variant, "budget_mib": budget_mb, "rounds": rounds, "calls": rounds * len(calls()),
            "weights_mib": round(base / 2**20), "peak_reserved_mib": round(peak / 2**20),
            "reserved_mib_after_each_round": per_round, "kept_mib": round(cache.nbytes() / 2**20, 1),
            "kept_slots": len(cache), "dropped": cache.dropped, "hits": cache.hits, "misses": cache.misses,
            "wall_s": round(wall, 2)}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--budget-mb", type=float, default=2048)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--child", choices=VARIANTS)
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args()
    if a.child:
        res = child(a.child, a.budget_mb, a.rounds, a.device)
        print(json.dumps(res), flush=True)
        with open(a.out, "w") as f:
            json.dump(res, f)
        return
    runs = []
    for v in VARIANTS:
        subprocess.run([sys.executable, __file__, "--child", v, "--budget-mb", str(a.budget_mb), "--rounds", str(a.rounds),
                        "--device", a.device, "--out", f"{a.out}.{v}"], check=True)
        with open(f"{a.out}.{v}") as f:
            runs.append(json.load(f))
        os.remove(f"{a.out}.{v}")
    kept, released = runs
    res = {"device": torch.cuda.get_device_name(0) if a.device == "cuda" else a.device, "torch": torch.__version__, "runs": runs,
           "peak_released_over_kept": round(released["peak_reserved_mib"] / max(1, kept["peak_reserved_mib"]), 4),
           "wall_released_over_kept": round(released["wall_s"] / kept["wall_s"], 4)}
    with open(a.out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
