"""The worker's importance-sampling loss against the vectors every tcod trainer shares
(test/vectors/importance-sampling.json, written by scripts/gen-is-vectors.ts; the TypeScript signals
and Trinity-RFT are checked against the same file): values, and gradients through autograd."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from tcod_worker import losses

VECTORS = Path(__file__).resolve().parents[2] / "test" / "vectors" / "importance-sampling.json"
CASES = json.loads(VECTORS.read_text())["cases"] if VECTORS.exists() else []


@pytest.mark.skipif(not VECTORS.exists(), reason="the shared vectors live in the repository, not the package")
@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_importance_sampling_matches_the_shared_vectors(case):
    lp = torch.tensor(case["lp"], dtype=torch.float64, requires_grad=True)
    old = torch.tensor(case["old"], dtype=torch.float64)
    adv = torch.tensor(case["adv"], dtype=torch.float64)
    per = losses.importance_sampling(lp, old, adv, case["clamp"])
    assert per.tolist() == pytest.approx(case["loss"], rel=1e-12, abs=1e-12)
    per.sum().backward()
    assert lp.grad.tolist() == pytest.approx(case["grad"], rel=1e-12, abs=1e-12)


def test_the_vectors_cover_a_clamped_token():
    assert any(c["clamp"] is not None and any(abs(a - b) > c["clamp"] for a, b in zip(c["lp"], c["old"])) for c in CASES)
