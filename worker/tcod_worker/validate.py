"""Request-field readers that fail with a 400 naming the field and what is expected."""

from __future__ import annotations

import math
from typing import Any

from .errors import BadRequest

_MISSING = object()


def body_object(body: Any) -> dict[str, Any]:
    if not isinstance(body, dict):
        raise BadRequest("request body must be a JSON object")
    return body


def get_int(body: dict[str, Any], key: str, default: Any = _MISSING, *, lo: int | None = None, hi: int | None = None) -> int:
    v = body.get(key, default)
    if v is _MISSING:
        raise BadRequest(f"missing field `{key}` (an integer)")
    if isinstance(v, bool) or not isinstance(v, int):
        raise BadRequest(f"`{key}` must be an integer, got {type(v).__name__}")
    if lo is not None and v < lo:
        raise BadRequest(f"`{key}` must be ≥ {lo}, got {v}")
    if hi is not None and v > hi:
        raise BadRequest(f"`{key}` must be ≤ {hi}, got {v}")
    return v


def get_opt_int(body: dict[str, Any], key: str, *, lo: int | None = None, hi: int | None = None) -> int | None:
    if body.get(key) is None:
        return None
    return get_int(body, key, lo=lo, hi=hi)


def get_float(body: dict[str, Any], key: str, default: Any = _MISSING, *, lo: float | None = None, hi: float | None = None) -> float:
    v = body.get(key, default)
    if v is _MISSING:
        raise BadRequest(f"missing field `{key}` (a number)")
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
        raise BadRequest(f"`{key}` must be a finite number, got {v!r}")
    if lo is not None and v < lo:
        raise BadRequest(f"`{key}` must be ≥ {lo}, got {v}")
    if hi is not None and v > hi:
        raise BadRequest(f"`{key}` must be ≤ {hi}, got {v}")
    return float(v)


def get_opt_float(body: dict[str, Any], key: str, *, lo: float | None = None, hi: float | None = None) -> float | None:
    if body.get(key) is None:
        return None
    return get_float(body, key, lo=lo, hi=hi)


def get_bool(body: dict[str, Any], key: str, default: bool) -> bool:
    v = body.get(key, default)
    if not isinstance(v, bool):
        raise BadRequest(f"`{key}` must be true or false, got {v!r}")
    return v


def get_str(body: dict[str, Any], key: str, default: Any = _MISSING, *, choices: tuple[str, ...] | None = None) -> str:
    v = body.get(key, default)
    if v is _MISSING:
        raise BadRequest(f"missing field `{key}` (a string)")
    if not isinstance(v, str):
        raise BadRequest(f"`{key}` must be a string, got {type(v).__name__}")
    if choices is not None and v not in choices:
        raise BadRequest(f"`{key}` must be one of {', '.join(choices)}; got {v!r}")
    return v


def token_ids(v: Any, where: str, vocab_size: int) -> list[int]:
    if not isinstance(v, list):
        raise BadRequest(f"{where} must be a list of token ids")
    # Fast path for the common, valid case (long sequences): C-level scans, no per-token branches.
    if all(type(t) is int for t in v) and (not v or (min(v) >= 0 and max(v) < vocab_size)):
        return v
    for i, t in enumerate(v):
        if isinstance(t, bool) or not isinstance(t, int):
            raise BadRequest(f"{where}[{i}] must be an integer token id, got {t!r}")
        if t < 0 or t >= vocab_size:
            raise BadRequest(f"{where}[{i}] = {t} is outside the vocabulary [0, {vocab_size}); "
                             "teacher and student must share one tokenizer")
    return v


def token_id_lists(body: dict[str, Any], key: str, vocab_size: int) -> list[list[int]]:
    v = body.get(key)
    if not isinstance(v, list) or not v:
        raise BadRequest(f"`{key}` must be a non-empty list of token-id lists")
    return [token_ids(s, f"{key}[{i}]", vocab_size) for i, s in enumerate(v)]


def numbers(v: Any, where: str, length: int) -> list[float]:
    if not isinstance(v, list) or len(v) != length:
        n = len(v) if isinstance(v, list) else type(v).__name__
        raise BadRequest(f"{where} must be a list of {length} numbers (one per token), got {n}")
    for i, x in enumerate(v):
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not math.isfinite(x):
            raise BadRequest(f"{where}[{i}] must be a finite number, got {x!r}")
    return [float(x) for x in v]
