"""The Trinity plugin's range checks (tcod_runtime/ranges.py, core.checked) against tcod's table
(tcod_runtime/range_table.py, generated from plan/ranges.ts; test/trinity/ranges-parity.test.ts
checks it equals that table): for every field, a value just inside each bound passes and one just
outside is refused, as a spec.json constant on load (TC7001) and as a schedule value the plugin
evaluates during a run (TC7005), in tcod's words.
Run: python3 -m pytest test/trinity/test_ranges.py (scripts/test-python.sh does)."""
import json
import math
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "targets", "trinity", "plugin"))
from tcod_runtime import core, ranges  # noqa: E402
from tcod_runtime.ranges import PLAN_RANGES, TcodError  # noqa: E402

MAX_TURNS = 10


def edges(r):
    """Each finite bound with a value just inside and just outside it (as test/plan/ranges.test.ts)."""
    d = lambda b: 1e-6 * max(1, abs(b))  # noqa: E731
    out = [("lo", r["lo"] + d(r["lo"]) if r["loOpen"] else r["lo"], r["lo"] if r["loOpen"] else r["lo"] - d(r["lo"]))]
    # Bounds past 1e300 (opd clip's MAX_VALUE, the horizon's inf): a value beyond is not finite.
    if r["hi"] < 1e300:
        out.append(("hi", r["hi"] - d(r["hi"]) if r["hiOpen"] else r["hi"], r["hi"] if r["hiOpen"] else r["hi"] + d(r["hi"])))
    return out


FIELDS = dict(PLAN_RANGES, prefix=ranges.prefix_range(MAX_TURNS))
EDGES = [(name, bound, inside, outside) for name, r in FIELDS.items() for bound, inside, outside in edges(r)]
IDS = [f"{name}-{bound}" for name, bound, _, _ in EDGES]


def test_the_table_has_every_field_of_plan_ranges():
    assert sorted(PLAN_RANGES) == sorted(["lr", "temperature", "teacherTemperature", "blendWeight", "gkdBeta", "horizon",
                                          "opdClip", "clip", "gradClip", "eps", "weightDecay", "adamBeta"])


@pytest.mark.parametrize("name,bound,inside,outside", EDGES, ids=IDS)
def test_every_field_just_inside_and_just_outside(name, bound, inside, outside):
    r = FIELDS[name]
    assert ranges.in_range(inside, r)
    assert not ranges.in_range(outside, r)
    assert ranges.out_of_range_message(r, outside) == f"{r['what']} must be {ranges.range_for(r, outside)}, got {ranges.js_number(outside)}"


def test_a_bound_stated_by_its_lower_bound_names_the_upper_one_beyond_it():
    assert ranges.out_of_range_message(PLAN_RANGES["lr"], -0.1) == "lr must be > 0, got -0.1"
    assert ranges.out_of_range_message(PLAN_RANGES["lr"], 12) == "lr must be > 0 and ≤ 10, got 12"
    assert ranges.out_of_range_message(PLAN_RANGES["gradClip"], 2e9) == "grad_clip must be > 0 and ≤ 1,000,000,000, got 2000000000"
    assert not ranges.in_range(math.nan, PLAN_RANGES["temperature"])


# ---- at run time: every schedule value the plugin evaluates (TC7005) -------------------------------

def step_expr(value, origin="c.tcod:5:12", level="step"):
    """An expression that is `value` at step 4 and 1 before (a schedule that leaves its range late)."""
    tree = {"op": "if", "args": [{"op": "ge", "args": [{"op": "var", "name": "step"}, {"op": "const", "value": 4}]},
                                 {"op": "const", "value": value}, {"op": "const", "value": 1}]}
    return {"level": level, "unit": "", "tree": tree, "origin": origin}


def run_time_value(name, v, step=4):
    """Evaluates the plugin's use of field `name` with a schedule that is `v` at `step`."""
    exprs = {"e": step_expr(v)}
    if name == "horizon":
        return core.horizon_at({"maxTurns": MAX_TURNS, "totalSteps": 20, "horizon": {"expr": "e"}}, exprs, step)
    if name == "prefix":
        return core.prefix_at({"maxTurns": MAX_TURNS, "totalSteps": 20, "prefix": {"expr": "e"}}, exprs, step, MAX_TURNS)
    if name == "blendWeight":
        adv = {"aggregate": {"kind": "progressive", "weight": {"expr": "e"}}}
        return core.train_batch_fold(adv, exprs, step, 20, [[1.0, 1.0]], [[1, 1]])
    raise AssertionError(name)


RUN_TIME = [e for e in EDGES if e[0] in ("horizon", "prefix", "blendWeight")]


@pytest.mark.parametrize("name,bound,inside,outside", RUN_TIME, ids=[f"{e[0]}-{e[1]}" for e in RUN_TIME])
def test_a_schedule_just_inside_runs_and_just_outside_stops_the_run_with_tc7005(name, bound, inside, outside):
    run_time_value(name, inside)
    with pytest.raises(TcodError) as err:
        run_time_value(name, outside)
    r = FIELDS[name]
    assert err.value.code == "TC7005"
    v = ranges.js_number(outside)
    stated = ranges.range_for(r, outside)
    assert str(err.value) == (
        f"c.tcod:5:12 error TC7005: the expression e evaluates to {v} at step 4; {r['what']} must be {stated}\n"
        f"  hint: Bound the schedule so that it stays {stated} at every step, e.g. with `clamp(…, lo, hi)` (or `max(lo, …)` "
        "for a lower bound alone): the compiler checks a schedule that reads the run's own metrics at step 1 only.")
    # Steps before the schedule leaves its range run.
    run_time_value(name, outside, step=3)


def test_a_horizon_that_reads_the_runs_metrics_says_so():
    spec = {"maxTurns": MAX_TURNS, "totalSteps": 20, "horizon": {"expr": "h"}}
    tree = {"op": "sub", "args": [{"op": "const", "value": 3}, {"op": "var", "name": "feedback.step"}]}
    tracker = core.FeedbackTracker({})
    tracker.state["last"] = {"step": 3, "successRate": 0, "meanReward": 0, "kl": {"mean": 0, "perTurn": []},
                             "admissibleRate": 0, "horizon": 1, "prefix": 0, "studentTurns": 1}
    with pytest.raises(TcodError, match=r"^c\.tcod:2:9 error TC7005: the expression h \(it reads the run's own metrics\) "
                                        r"evaluates to 0 at step 4; horizon must be ≥ 1 turn\n  hint: "):
        core.horizon_at(spec, {"h": {"level": "feedback", "unit": "turns", "tree": tree, "origin": "c.tcod:2:9"}}, 4, 0, tracker)


def test_a_prefix_past_the_cap_is_not_range_checked_for_an_expert_path_longer_than_the_run():
    # The official b2f starts at L − 1, which is ≥ Hmax for a longer expert path (runtime/nodes/episode-planner.ts).
    spec = {"maxTurns": MAX_TURNS, "totalSteps": 20, "prefix": {"expr": "e"}}
    assert core.prefix_at(spec, {"e": step_expr(14)}, 4, 15) == 14


def test_a_non_finite_coefficient_is_tc7005_not_a_nan_advantage():
    spec = {"terms": [{"kind": "opd", "estimator": "k1", "coef": {"expr": "c"}}]}
    tree = {"op": "div", "args": [{"op": "const", "value": 1}, {"op": "sub", "args": [{"op": "var", "name": "step"}, {"op": "const", "value": 4}]}]}
    with pytest.raises(TcodError, match=r"^c\.tcod:7:3 error TC7005: the expression c evaluates to Infinity at step 4; "
                                        r"a schedule must be a finite number at every step\n  hint: Guard the arithmetic"):
        core.step_advantages(spec, {"c": {"level": "step", "unit": "", "tree": tree, "origin": "c.tcod:7:3"}}, 4, 20,
                             [[0.0]], [[0.0]], [[1]], [0], {0: 0}, {0: 0.0})


def test_an_expression_without_an_origin_is_reported_as_tcod():
    with pytest.raises(TcodError, match=r"^tcod error TC7005: the expression e evaluates to 0 at step 4"):
        core.horizon_at({"maxTurns": MAX_TURNS, "totalSteps": 20, "horizon": {"expr": "e"}},
                        {"e": dict(step_expr(0), origin=None)}, 4)


# ---- on load: spec.json's constants (TC7001) --------------------------------------------------------

def base_spec():
    return {
        "exprs": {},
        "workflow": {"temperature": 1.0, "teacherTemperature": 1.0,
                     "pacing": {"maxTurns": MAX_TURNS, "totalSteps": 20, "truncatedReward": 0}},
        "advantage": {"terms": [{"kind": "opd", "estimator": "k1", "coef": 1.0}], "aggregate": {"kind": "token_mean"}},
    }


def set_temperature(s, v): s["workflow"]["temperature"] = v
def set_teacher(s, v): s["workflow"]["teacherTemperature"] = v
def set_horizon(s, v): s["workflow"]["pacing"]["horizon"] = v
def set_prefix(s, v): s["workflow"]["pacing"]["prefix"] = v
def set_blend(s, v): s["advantage"]["aggregate"] = {"kind": "progressive", "weight": v}
def set_opd_clip(s, v): s["advantage"]["terms"][0]["clip"] = v
def set_gkd_beta(s, v): s["advantage"]["terms"].append({"kind": "gkd", "coef": 1.0, "beta": v})


# Every field spec.json carries as a plan constant, with its JSON path there.
SPEC_FIELDS = {
    "temperature": (set_temperature, "$.workflow.temperature"),
    "teacherTemperature": (set_teacher, "$.workflow.teacherTemperature"),
    "horizon": (set_horizon, "$.workflow.pacing.horizon"),
    "prefix": (set_prefix, "$.workflow.pacing.prefix"),
    "blendWeight": (set_blend, "$.advantage.aggregate.weight"),
    "opdClip": (set_opd_clip, "$.advantage.terms[0].clip"),
    "gkdBeta": (set_gkd_beta, "$.advantage.terms[1].beta"),
}
LOAD = [e for e in EDGES if e[0] in SPEC_FIELDS]


def write_spec(tmp_path, spec):
    p = tmp_path / "spec.json"
    p.write_text(json.dumps(spec), encoding="utf-8")
    return str(p)


@pytest.mark.parametrize("name,bound,inside,outside", LOAD, ids=[f"{e[0]}-{e[1]}" for e in LOAD])
def test_a_spec_constant_just_inside_loads_and_just_outside_is_tc7001(tmp_path, name, bound, inside, outside):
    setter, path = SPEC_FIELDS[name]
    ok = base_spec()
    setter(ok, inside)
    assert ranges.load_spec(write_spec(tmp_path, ok)) == ok
    bad = base_spec()
    setter(bad, outside)
    with pytest.raises(TcodError) as err:
        ranges.load_spec(write_spec(tmp_path, bad))
    assert err.value.code == "TC7001"
    assert str(err.value).startswith(
        f"spec.json error TC7001: {ranges.out_of_range_message(FIELDS[name], outside)} (at {path})\n  hint: spec.json is generated")


def test_every_issue_of_a_spec_is_named_and_non_numbers_are_refused(tmp_path):
    spec = base_spec()
    spec["workflow"]["temperature"] = 2.5
    spec["workflow"]["teacherTemperature"] = "hot"
    spec["workflow"]["pacing"]["horizon"] = {"expr": "gone"}
    with pytest.raises(TcodError) as err:
        ranges.load_spec(write_spec(tmp_path, spec))
    lines = [line for line in str(err.value).split("\n") if not line.startswith("  hint:")]
    assert lines == [
        "spec.json error TC7001: temperature must be in [0, 2], got 2.5 (at $.workflow.temperature)",
        'spec.json error TC7001: teacher_temperature must be a number, got "hot" (at $.workflow.teacherTemperature)',
        "spec.json error TC7001: expression gone is not among the spec's exprs (at $.workflow.pacing.horizon)",
    ]


def test_a_spec_with_infinity_is_refused(tmp_path):
    # Python's json reads Infinity and NaN, which a plan (JSON) cannot hold.
    p = tmp_path / "spec.json"
    p.write_text(json.dumps(base_spec()).replace('"teacherTemperature": 1.0', '"teacherTemperature": Infinity'), encoding="utf-8")
    with pytest.raises(TcodError, match=r"teacher_temperature must be in \(0, 4\], got Infinity"):
        ranges.load_spec(str(p))


def test_js_number_writes_numbers_as_tcod_does():
    assert [ranges.js_number(x) for x in (0, 1.0, -0.004, 1e-7, 0.00001, 1e21, 1.3000000000000003, 2e9, math.nan, -math.inf)] == [
        "0", "1", "-0.004", "1e-7", "0.00001", "1e+21", "1.3000000000000003", "2000000000", "NaN", "-Infinity"]
