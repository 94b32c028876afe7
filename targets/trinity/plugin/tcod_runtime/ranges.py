"""The ranges of the plan's numeric fields, as tcod checks them (plan/ranges.ts), for the plugin.

The table is range_table.py, generated from tcod's own by `tcod export trinity`. Two checks read it:
- on load, the constants of spec.json (`load_spec`, TC7001, as tcod refuses a plan .json);
- at run time, each schedule value the plugin evaluates (core.checked, TC7005, as tcod's
  runtime/curriculum-state.ts): the compiler checks a schedule that reads the run's own metrics at
  step 1 only, so a later value may leave its range during the run.
Errors read as tcod prints them (plan/errors.ts `formatUserError`), so a Trinity run stops with the
same message a `tcod run` of the plan would.
"""
from __future__ import annotations

import json
import math
import re
from decimal import Decimal
from typing import Dict, List, Optional

from .range_table import PLAN_RANGES

__all__ = ["PLAN_RANGES", "TcodError", "in_range", "range_for", "out_of_range_message", "prefix_range",
           "js_number", "spec_range_issues", "load_spec"]


class TcodError(ValueError):
    """A coded tcod error: one line per issue, `AT error CODE: message[ (at PATH)]`, then the hint."""

    def __init__(self, code: str, issues: List[Dict[str, str]], hint: Optional[str] = None):
        self.code, self.issues, self.hint = code, issues, hint
        super().__init__("\n".join(
            f"{i['at']} error {code}: {i['message']}" + (f" (at {i['path']})" if i.get("path") else "")
            + (f"\n  hint: {hint}" if hint else "") for i in issues))


def js_number(x: float) -> str:
    """x as JavaScript's String(x) writes it (ECMAScript Number::toString), for messages that read as
    tcod's: 0.1 not 0.1, 1 not 1.0, 1e-7 not 1e-07, 0.00001 not 1e-05. Python's repr and JavaScript
    both give the shortest digits that round-trip; only the layout differs."""
    x = float(x)
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "0"
    if x < 0:
        return "-" + js_number(-x)
    _, digits_t, exp = Decimal(repr(x)).normalize().as_tuple()
    digits = "".join(str(d) for d in digits_t)
    k, n = len(digits), len(digits) + int(exp)  # x = 0.digits × 10^n
    if k <= n <= 21:
        return digits + "0" * (n - k)
    if 0 < n <= 21:
        return digits[:n] + "." + digits[n:]
    if -6 < n <= 0:
        return "0." + "0" * (-n) + digits
    e = n - 1
    return digits[0] + ("." + digits[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))


def in_range(v: float, r: dict) -> bool:
    """Whether `v` lies in the range (plan/ranges.ts `inRange`); NaN lies in none."""
    if r.get("integer") and not (math.isfinite(v) and float(v).is_integer() and abs(v) <= 2 ** 53 - 1):
        return False
    lo_ok = v > r["lo"] if r.get("loOpen") else v >= r["lo"]
    hi_ok = v < r["hi"] if r.get("hiOpen") else v <= r["hi"]
    return lo_ok and hi_ok


def range_for(r: dict, v: float) -> str:
    """The range as a message about `v` states it (plan/ranges.ts `rangeFor`): a range written by its
    lower bound alone names its upper bound for a value beyond it."""
    above = v >= r["hi"] if r.get("hiOpen") else v > r["hi"]
    return r["statedAboveHi"] if above else r["stated"]


def out_of_range_message(r: dict, v: float) -> str:
    """"lr must be > 0, got -0.1" (plan/ranges.ts `outOfRangeMessage`)."""
    return f"{r['what']} must be {range_for(r, v)}, got {js_number(v)}"


def prefix_range(max_turns: int) -> dict:
    """EpisodePlanner.prefix: the student needs at least one of the run's turns (plan/ranges.ts
    `prefixRange`)."""
    m = int(max_turns)
    stated = f"in [0, {m - 1}] turns (the student needs at least one of the {m} turns)"
    return {"what": "prefix", "lo": 0, "hi": m - 1, "loOpen": False, "hiOpen": False, "integer": False,
            "stated": stated, "statedAboveHi": stated}


def _is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def spec_range_issues(spec: dict) -> List[Dict[str, str]]:
    """The constants of a plugin spec outside their ranges, each with its JSON path (plan/ranges.ts
    `planRangeIssues` over the plan fields the spec carries). A value that is neither a number nor
    an expression of the spec is an issue too: the plugin would fail on it mid-run."""
    issues: List[Dict[str, str]] = []
    exprs = spec.get("exprs") or {}

    def check(path: str, r: dict, v, schedule: bool) -> None:
        if _is_number(v):
            if not (math.isfinite(v) and in_range(v, r)):
                issues.append({"path": path, "message": out_of_range_message(r, v)})
        elif schedule and isinstance(v, dict) and isinstance(v.get("expr"), str):
            if v["expr"] not in exprs:
                issues.append({"path": path, "message": f"expression {v['expr']} is not among the spec's exprs"})
        else:
            issues.append({"path": path, "message": f"{r['what']} must be a number{' or an expression reference' if schedule else ''}, got {json.dumps(v)}"})

    wf = spec.get("workflow")
    if wf is not None:
        check("$.workflow.temperature", PLAN_RANGES["temperature"], wf.get("temperature"), False)
        check("$.workflow.teacherTemperature", PLAN_RANGES["teacherTemperature"], wf.get("teacherTemperature"), False)
        pacing = wf.get("pacing") or {}
        if "horizon" in pacing:
            check("$.workflow.pacing.horizon", PLAN_RANGES["horizon"], pacing["horizon"], True)
        if "prefix" in pacing:
            check("$.workflow.pacing.prefix", prefix_range(pacing["maxTurns"]), pacing["prefix"], True)
    adv = spec.get("advantage")
    if adv is not None:
        for j, t in enumerate(adv.get("terms") or []):
            if t.get("kind") == "gkd":
                check(f"$.advantage.terms[{j}].beta", PLAN_RANGES["gkdBeta"], t.get("beta"), True)
            if t.get("kind") == "opd" and "clip" in t:
                check(f"$.advantage.terms[{j}].clip", PLAN_RANGES["opdClip"], t["clip"], False)
        agg = adv.get("aggregate") or {}
        if agg.get("kind") == "progressive":
            check("$.advantage.aggregate.weight", PLAN_RANGES["blendWeight"], agg.get("weight"), True)
    return issues


def load_spec(path: str) -> dict:
    """spec.json, refused (TC7001) when a constant is out of its range: a hand-edited or damaged spec
    would otherwise train with values `tcod run` refuses."""
    with open(path, encoding="utf-8") as f:
        spec = json.load(f)
    issues = spec_range_issues(spec)
    if issues:
        raise TcodError("TC7001", [{"at": "spec.json", **i} for i in issues],
                        hint="spec.json is generated from a plan: export the plugin again with `tcod export trinity` "
                             "from a plan that loads, rather than editing it.")
    return spec


_ORIGIN = re.compile(r"^(.*):(\d+):(\d+)$")


def origin_at(origin: Optional[str]) -> str:
    """An expression's origin (`file.tcod:12:12`) as an error's position; `tcod` without one
    (runtime/curriculum-state.ts `originWhere`, plan/errors.ts `formatUserError`)."""
    return origin if origin is not None and _ORIGIN.match(origin) else "tcod"
