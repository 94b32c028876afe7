"""TCOD_WORKER_TRACE: a line per request with its wall time; with TCOD_WORKER_TRACE_SEQUENCES=0 the
token lists are written as their sizes, and a score line carries its forwards' own time."""

from __future__ import annotations

import json
from pathlib import Path

from tcod_worker.trace import size_of

from .conftest import DEVICE, DTYPE, WorkerProcess


def test_size_of_sequences_rows_and_other_values():
    assert size_of([[1, 2, 3], [4]]) == {"rows": 2, "tokens": 4, "longest": 3}
    assert size_of([{"tokens": [1, 2], "mask": [0, 1]}, {"tokens": [5, 6, 7], "mask": [0, 0, 1]}]) == {"rows": 2, "tokens": 5, "longest": 3}
    assert size_of([3, 4]) == [3, 4]
    assert size_of("teacher") == "teacher"
    assert size_of([]) == []


def _trace(assets: dict[str, Path], tmp_path: Path, sequences: str) -> list[dict]:
    path = tmp_path / f"trace-{sequences}.jsonl"
    w = WorkerProcess(["--model", str(assets["student"]), "--teacher", str(assets["teacher"]), "--device", DEVICE, "--dtype", DTYPE],
                      env={"TCOD_WORKER_TRACE": str(path), "TCOD_WORKER_TRACE_SEQUENCES": sequences})
    try:
        ids = w.ok("/tokenize", {"text": "go to the kitchen . open the fridge"})["tokens"]
        short = ids[:4]
        w.ok("/score", {"sequences": [ids, short], "prompt_lengths": [2, 1], "model": "teacher"})
    finally:
        w.stop()
    return [json.loads(line) for line in path.read_text().splitlines()], ids, short


def test_trace_keeps_sequences_by_default(assets, tmp_path):
    lines, ids, short = _trace(assets, tmp_path, "1")
    (score,) = [x for x in lines if x["op"] == "score"]
    assert score["model"] == "teacher"
    assert score["sequences"] == [ids, short]
    assert score["s"] > 0 and 0 < score["forward_s"] <= score["s"]


def test_trace_without_sequences_writes_their_sizes(assets, tmp_path):
    lines, ids, short = _trace(assets, tmp_path, "0")
    (score,) = [x for x in lines if x["op"] == "score"]
    assert score["sequences"] == {"rows": 2, "tokens": len(ids) + len(short), "longest": len(ids)}
    assert score["prompt_lengths"] == [2, 1]
    assert 0 < score["forward_s"] <= score["s"]
