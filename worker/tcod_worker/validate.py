"""Request-field readers that fail with a 400 naming the field and what is expected."""

from __future__ import annotations

import math
from typing import Any

from .errors import BadRequest

_MISSING = object()

#: The largest float32: a number beyond it becomes inf on the device (advantages, weights, lr…).
FP32_MAX = 3.4028234663852886e38
#: Sampling/scoring temperatures: 0 (greedy, /sample only) or within [MIN_TEMPERATURE, MAX_TEMPERATURE].
#: Below 1e-6 the logits / temperature overflow float32 (NaN log-probs); above 100 every distribution
#: is uniform to float32 precision, so such a value is a mistake, not a setting.
MIN_TEMPERATURE = 1e-6
MAX_TEMPERATURE = 100.0


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
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not finite32(v):
        raise BadRequest(f"`{key}` must be a finite number (within float32's ±3.4e38), got {v!r}")
    if lo is not None and v < lo:
        raise BadRequest(f"`{key}` must be ≥ {lo}, got {v}")
    if hi is not None and v > hi:
        raise BadRequest(f"`{key}` must be ≤ {hi}, got {v}")
    return float(v)


def finite32(x: int | float) -> bool:
    try:
        return math.isfinite(x) and abs(x) <= FP32_MAX
    except OverflowError:  # an int too large for a float
        return False


def get_temperature(body: dict[str, Any], key: str = "temperature", default: float = 1.0, *,
                    greedy: bool = False) -> float:
    """A temperature in [MIN_TEMPERATURE, MAX_TEMPERATURE], or 0 (greedy) where `greedy` allows it."""
    v = get_float(body, key, default, lo=0.0, hi=MAX_TEMPERATURE)
    if v < MIN_TEMPERATURE and not (greedy and v == 0.0):
        also = "0 (greedy) or " if greedy else ""
        raise BadRequest(f"`{key}` must be {also}≥ {MIN_TEMPERATURE:g}, got {v!r} (smaller temperatures "
                         "overflow float32 logits)")
    return v


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
    text(v, f"`{key}`")
    if choices is not None and v not in choices:
        raise BadRequest(f"`{key}` must be one of {', '.join(choices)}; got {v!r}")
    return v


def text(v: Any, where: str) -> str:
    """A string the tokenizer (and the file system) can take: UTF-8 encodable, so no lone surrogates
    (JSON's "\\ud800" decodes to one)."""
    if not isinstance(v, str):
        raise BadRequest(f"{where} must be a string, got {type(v).__name__}")
    try:
        v.encode("utf-8")
    except UnicodeEncodeError as e:
        raise BadRequest(f"{where} is not valid Unicode: a lone surrogate {v[e.start]!r} at character {e.start} "
                         "(escape pairs must be complete)") from None
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
        if isinstance(x, bool) or not isinstance(x, (int, float)) or not finite32(x):
            raise BadRequest(f"{where}[{i}] must be a finite number (within float32's ±3.4e38), got {x!r}")
    return [float(x) for x in v]
