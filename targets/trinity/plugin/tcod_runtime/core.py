"""tcod plan evaluation and training signals in pure Python (no torch, no numpy).

Generated into a Trinity-RFT plugin directory by `tcod export trinity`; the Trinity adapters
(`tcod_advantage.py`, `tcod_workflow.py`) convert tensors to lists and call these functions. Every
function here mirrors one of the TypeScript runtime (plan/expr.ts, runtime/signals/*.ts) and is
checked against it on the same inputs in tcod's CI (test/trinity/python-parity.test.ts), so a
curriculum trains the same way on Ray as in `tcod run`.

JavaScript semantics are kept where Python differs: Math.round rounds halves up, min/max propagate
NaN, division by zero gives ±inf/NaN, log(0) = -inf.
"""
from __future__ import annotations

import json
import math
import re
from typing import Dict, List, Optional, Sequence

from .ranges import PLAN_RANGES, TcodError, in_range, js_number, origin_at, prefix_range, range_for

ZSCORE_EPS = 1e-6
TURN_REDUCTIONS = ("zscore", "softmax_over_turns", "episode_mean", "batch_mean")


class ExprError(Exception):
    """A tree that cannot be evaluated with the variables given (names the operator or variable)."""


# ---- expression trees (plan/expr.ts) --------------------------------------------------------------

def _div(x: float, y: float) -> float:
    if y == 0:
        if x == 0 or math.isnan(x):
            return math.nan
        return math.copysign(math.inf, x) * (math.copysign(1.0, y))
    return x / y


def _log(x: float) -> float:
    if x == 0:
        return -math.inf
    if x < 0 or math.isnan(x):
        return math.nan
    return math.log(x)


def _sqrt(x: float) -> float:
    return math.nan if x < 0 or math.isnan(x) else math.sqrt(x)


def _pow(x: float, y: float) -> float:
    try:
        r = math.pow(x, y)
    except (ValueError, OverflowError):
        if x == 0 and y < 0:
            return math.inf
        if x < 0 and not float(y).is_integer():
            return math.nan
        return math.inf
    return r


def _exp(x: float) -> float:
    try:
        return math.exp(x)
    except OverflowError:
        return math.inf


def _minmax(values: Sequence[float], pick) -> float:
    if not values:
        return math.inf if pick is min else -math.inf
    if any(math.isnan(v) for v in values):
        return math.nan
    return pick(values)


def _js_round(x: float) -> float:
    return x if math.isnan(x) or math.isinf(x) else float(math.floor(x + 0.5))


def pointwise(op: str, a: Sequence[float]) -> float:
    """One pointwise operator on numbers, exactly as plan/expr.ts `pointwise`."""
    x = a[0] if len(a) > 0 else math.nan
    y = a[1] if len(a) > 1 else math.nan
    z = a[2] if len(a) > 2 else math.nan
    if op == "add": return x + y
    if op == "sub": return x - y
    if op == "mul": return x * y
    if op == "div": return _div(x, y)
    if op == "neg": return -x
    if op == "min": return _minmax(list(a), min)
    if op == "max": return _minmax(list(a), max)
    if op == "clamp": return _minmax([y, _minmax([x, z], min)], max)  # max(lo, min(x, hi)), as TCOD b2f
    if op == "floor": return float(math.floor(x)) if math.isfinite(x) else x
    if op == "ceil": return float(math.ceil(x)) if math.isfinite(x) else x
    if op == "round": return _js_round(x)
    if op == "abs": return abs(x)
    if op == "exp": return _exp(x)
    if op == "log": return _log(x)
    if op == "sqrt": return _sqrt(x)
    if op == "pow": return _pow(x, y)
    if op == "cos": return math.cos(x) if math.isfinite(x) else math.nan
    if op == "sin": return math.sin(x) if math.isfinite(x) else math.nan
    if op == "lt": return 1.0 if x < y else 0.0
    if op == "le": return 1.0 if x <= y else 0.0
    if op == "gt": return 1.0 if x > y else 0.0
    if op == "ge": return 1.0 if x >= y else 0.0
    if op == "eq": return 1.0 if x == y else 0.0
    if op == "ne": return 1.0 if x != y else 0.0
    if op == "and": return 1.0 if x != 0 and y != 0 else 0.0
    if op == "or": return 1.0 if x != 0 or y != 0 else 0.0
    if op == "not": return 1.0 if x == 0 else 0.0
    if op == "if": return y if x != 0 else z
    raise ExprError(f"unknown operator {op}")


FEEDBACK_OPS = ("kl_turn", "ema", "window_mean", "stage")
STATEFUL_OPS = ("ema", "window_mean", "stage")


def eval_scalar(tree: dict, variables: Dict[str, float], fb: "Optional[FeedbackView]" = None) -> float:
    """Evaluates a const/step/feedback/episode-level tree (plan/expr.ts `evalScalar`); feedback
    operators read `fb` (a FeedbackTracker's view)."""
    op = tree["op"]
    if op == "const":
        return float(tree["value"])
    if op == "var":
        name = tree["name"]
        if name not in variables:
            if name.startswith("feedback."):
                raise ExprError(f"{name} reads the run's metrics and needs a trace")
            raise ExprError(f"variable {name} is not available here")
        return float(variables[name])
    if op == "ext":
        raise ExprError(f"extension function {tree['fn']} is a TypeScript extension; Trinity plugins cannot run it")
    if op in TURN_REDUCTIONS:
        raise ExprError(f"{op} needs the turns of a batch")
    args = tree["args"]
    if op in FEEDBACK_OPS:
        if fb is None:
            raise ExprError(f"{op}(...) reads the run's metrics and needs a trace")
        return fb.kl_turn(eval_scalar(args[0], variables, fb)) if op == "kl_turn" else fb.stateful(tree)
    if op == "if":
        return eval_scalar(args[1], variables, fb) if eval_scalar(args[0], variables, fb) != 0 else eval_scalar(args[2], variables, fb)
    return pointwise(op, [eval_scalar(t, variables, fb) for t in args])


def eval_ref(ref, exprs: Dict[str, dict], variables: Dict[str, float], fb: "Optional[FeedbackView]" = None) -> float:
    """A plan value reference: a number, or {"expr": id} into the plan's expressions."""
    if isinstance(ref, (int, float)):
        return float(ref)
    expr_id = ref["expr"]
    if expr_id not in exprs:
        raise ExprError(f"expression {expr_id} is not in the plan")
    return eval_scalar(exprs[expr_id]["tree"], variables, fb)


def checked(ref, v: float, step: float, exprs: Dict[str, dict], r: Optional[dict] = None) -> float:
    """A value the plugin is about to use must be a finite number in its field's range (range_table.py,
    tcod's plan/ranges.ts); else TC7005 at the expression's origin, worded as tcod's runtime words it
    (runtime/curriculum-state.ts `checked`), rather than a silent out-of-range schedule."""
    finite = math.isfinite(v)
    if finite and (r is None or in_range(v, r)):
        return v
    d = None if isinstance(ref, (int, float)) else exprs.get(ref["expr"])
    if isinstance(ref, (int, float)):
        what = "a constant of the plan"
    else:
        metrics = d is not None and (d.get("level") == "feedback" or reads_feedback(d["tree"]))
        what = f"the expression {ref['expr']}" + (" (it reads the run's own metrics)" if metrics else "")
    at = origin_at(d.get("origin") if d else None)
    if not finite:
        raise TcodError("TC7005", [{"at": at, "message": f"{what} evaluates to {js_number(v)} at step {js_number(step)}; "
                                                         "a schedule must be a finite number at every step"}],
                        hint="Guard the arithmetic that reaches it (a division by a value that becomes 0, e.g. "
                             "`1 - feedback.step / 1 step` at step 1) and bound the schedule, e.g. `clamp(…, 1 turn, 30 turns)`.")
    stated = range_for(r, v)
    raise TcodError("TC7005", [{"at": at, "message": f"{what} evaluates to {js_number(v)} at step {js_number(step)}; {r['what']} must be {stated}"}],
                    hint=f"Bound the schedule so that it stays {stated} at every step, e.g. with `clamp(…, lo, hi)` "
                         "(or `max(lo, …)` for a lower bound alone): the compiler checks a schedule that reads the run's own metrics at step 1 only.")


# ---- feedback (plan/feedback.ts) -----------------------------------------------------------------
#
# The run's own metrics, one observation per finished training step; at the start of step t the
# observations of steps <= t - 1 - staleness have been taken. Before any: feedback.* and kl_turn
# read 0, smoothers their init, stages 0. Stateful nodes (ema, window_mean, stage) advance once per
# observation, in post-order over the plan's expressions sorted by id; equal trees share one state
# and the first name (`stage#1`, `ema#1`, ...). The same algorithm as the TypeScript tracker, checked
# on the shared vectors test/vectors/feedback.json.

FEEDBACK_FIELDS = {
    "feedback.step": lambda o: o["step"],
    "feedback.success": lambda o: o["successRate"],
    "feedback.reward": lambda o: o["meanReward"],
    "feedback.kl": lambda o: o["kl"]["mean"],
    "feedback.admissible": lambda o: o["admissibleRate"],
    "feedback.horizon": lambda o: o["horizon"],
    "feedback.prefix": lambda o: o["prefix"],
    "feedback.student_turns": lambda o: o["studentTurns"],
}
_COMPARISONS = ("lt", "le", "gt", "ge", "eq", "ne")


def _key_of(t: dict) -> str:
    op = t["op"]
    if op == "const":
        return f"c:{_js_number(float(t['value']))}"
    if op == "var":
        return f"v:{t['name']}"
    if op == "ext":
        return f"x:{t['fn']}(" + ",".join(_key_of(a) for a in t["args"]) + ")"
    return f"{op}(" + ",".join(_key_of(a) for a in t["args"]) + ")"


def _js_number(x: float) -> str:
    """A number as JavaScript's String(x) writes it, for the integral and short cases keys need."""
    if math.isfinite(x) and x == int(x) and abs(x) < 1e21:
        return str(int(x))
    return repr(x)


def stateful_nodes(exprs: Dict[str, dict]) -> List[dict]:
    """The stateful nodes in update order, named as plan/feedback.ts `statefulNodes` names them."""
    out, seen, counts = [], set(), {}

    def walk(t):
        if t["op"] in ("const", "var"):
            return
        for a in t["args"]:
            walk(a)
        if t["op"] not in STATEFUL_OPS:
            return
        key = _key_of(t)
        if key in seen:
            return
        seen.add(key)
        counts[t["op"]] = counts.get(t["op"], 0) + 1
        out.append({"name": f"{t['op']}#{counts[t['op']]}", "key": key, "tree": t})

    for expr_id in sorted(exprs):
        walk(exprs[expr_id]["tree"])
    return out


def reads_feedback(tree: dict) -> bool:
    op = tree["op"]
    if op == "const":
        return False
    if op == "var":
        return tree["name"].startswith("feedback.")
    if op in FEEDBACK_OPS:
        return True
    return any(reads_feedback(a) for a in tree["args"])


class FeedbackView:
    """What feedback operators read: a fixed state (a snapshot) of a FeedbackTracker."""

    def __init__(self, tracker: "FeedbackTracker", state: dict):
        self.tracker, self.state = tracker, state

    def kl_turn(self, i: float) -> float:
        o = self.state["last"]
        if o is None:
            return 0.0
        per = o["kl"]["perTurn"]
        v = per[int(i)] if float(i).is_integer() and 0 <= i < len(per) else None
        return float(o["kl"]["mean"]) if v is None else float(v)

    def stateful(self, tree: dict) -> float:
        node = self.tracker.by_key.get(_key_of(tree))
        if node is None:
            raise ExprError("a stateful node is not among the plan's expressions")
        return self.tracker.value_in(self.state, node)


class FeedbackTracker:
    """plan/feedback.ts `FeedbackTracker`: state is plain JSON (`snapshot`/`restore`)."""

    def __init__(self, exprs: Dict[str, dict]):
        self.nodes = stateful_nodes(exprs)
        self.by_key = {n["key"]: n for n in self.nodes}
        self.state = {"seen": 0, "last": None, "nodes": {n["name"]: self._initial(n["tree"]["op"]) for n in self.nodes}}

    @staticmethod
    def _initial(op: str) -> dict:
        if op == "ema":
            return {"kind": "ema", "value": 0.0, "seen": 0}
        if op == "window_mean":
            return {"kind": "window_mean", "values": []}
        return {"kind": "stage", "stage": 0, "streak": 0, "advancedAt": None, "signal": None}

    def vars(self) -> Dict[str, float]:
        o = self.state["last"]
        return {k: (float(f(o)) if o is not None else 0.0) for k, f in FEEDBACK_FIELDS.items()}

    def view(self) -> FeedbackView:
        return FeedbackView(self, self.state)

    def frozen_view(self) -> FeedbackView:
        return FeedbackView(self, json.loads(json.dumps(self.state)))

    def observe(self, o: dict, clock: Dict[str, float]) -> None:
        self.state["last"] = json.loads(json.dumps(o))
        self.state["seen"] += 1
        variables = dict(clock)
        variables.update(self.vars())
        fb = self.view()
        for n in self.nodes:
            s = self.state["nodes"][n["name"]]
            args = n["tree"]["args"]
            arg = lambda i: eval_scalar(args[i], variables, fb)  # noqa: E731
            if s["kind"] == "ema":
                x, decay = arg(0), arg(1)
                s["value"] = x if s["seen"] == 0 else decay * s["value"] + (1 - decay) * x
                s["seen"] += 1
            elif s["kind"] == "window_mean":
                size = max(1, math.floor(arg(1)))
                s["values"].append(arg(0))
                if len(s["values"]) > size:
                    del s["values"][: len(s["values"]) - size]
            else:
                cond = args[0]
                held, patience, mx = arg(0) != 0, arg(1), arg(2)
                if s["stage"] >= mx or not held:
                    s["streak"] = 0
                    continue
                s["streak"] += 1
                if s["streak"] >= patience:
                    s["stage"] += 1
                    s["streak"] = 0
                    s["advancedAt"] = o["step"]
                    s["signal"] = eval_scalar(cond["args"][0], variables, fb) if cond["op"] in _COMPARISONS else None

    def value_in(self, state: dict, n: dict) -> float:
        s = state["nodes"][n["name"]]
        if s["kind"] == "ema":
            return eval_scalar(n["tree"]["args"][2], {}) if s["seen"] == 0 else s["value"]
        if s["kind"] == "window_mean":
            vals = s["values"]
            return eval_scalar(n["tree"]["args"][2], {}) if not vals else sum(vals) / len(vals)
        return float(s["stage"])

    def summary(self) -> dict:
        values, stages = {}, {}
        for n in self.nodes:
            values[n["name"]] = self.value_in(self.state, n)
            s = self.state["nodes"][n["name"]]
            if s["kind"] == "stage":
                stages[n["name"]] = {"stage": s["stage"], "streak": s["streak"], "advancedAt": s["advancedAt"], "signal": s["signal"]}
        last = self.state["last"]
        return {"step": last["step"] if last is not None else 0, "values": values, "stages": stages}

    def snapshot(self) -> dict:
        return json.loads(json.dumps(self.state))

    def restore(self, snap: dict) -> None:
        nodes = dict(self.state["nodes"])
        for n in self.nodes:
            got = snap["nodes"].get(n["name"])
            if got is not None and got.get("kind") == n["tree"]["op"]:
                nodes[n["name"]] = json.loads(json.dumps(got))
        self.state = {"seen": snap["seen"], "last": json.loads(json.dumps(snap["last"])), "nodes": nodes}


def observe_clock(u: int, staleness: int, total_steps: int) -> Dict[str, float]:
    """The clock when step u's row is observed: the start of step u + 1 + staleness."""
    return {"step": float(u + 1 + staleness), "total_steps": float(total_steps)}


def observation_of_episodes(step: int, episodes: Sequence[dict]) -> dict:
    """One finished step's observation from its training episodes, as tcod's metrics row computes
    it (runtime/explorer.ts rolloutStats, runtime/learner.ts klSummary): success, reward, horizon,
    prefix and student turns are means over episodes; the admissible rate is the share of student
    turns with an admissible action; KL is token-weighted over all student turns, and per turn index
    the mean of the turns' mean KL. Each episode: {won, reward, horizon, prefix, student_turns,
    turns: [{kl_sum, tokens, admissible}]}."""
    n = len(episodes)
    mean = lambda xs: (sum(xs) / len(xs)) if xs else 0.0  # noqa: E731
    kl_sum = tokens = 0.0
    turns = ok = 0
    by_turn: Dict[int, List[float]] = {}
    for e in episodes:
        for h, t in enumerate(e["turns"]):
            kl_sum += t["kl_sum"]
            tokens += t["tokens"]
            turns += 1
            ok += 1 if t["admissible"] else 0
            by_turn.setdefault(h, []).append(t["kl_sum"] / t["tokens"] if t["tokens"] > 0 else 0.0)
    depth = (max(by_turn) + 1) if by_turn else 0
    return {
        "step": step,
        "successRate": mean([1.0 if e["won"] else 0.0 for e in episodes]) if n else 0.0,
        "meanReward": mean([float(e["reward"]) for e in episodes]),
        "kl": {"mean": kl_sum / tokens if tokens > 0 else 0.0,
               "perTurn": [mean(by_turn[h]) if h in by_turn else None for h in range(depth)]},
        "admissibleRate": ok / turns if turns else 0.0,
        "horizon": mean([float(e["horizon"]) for e in episodes]),
        "prefix": mean([float(e["prefix"]) for e in episodes]),
        "studentTurns": mean([float(e["student_turns"]) for e in episodes]),
    }


def episode_report(rec: dict, plan: dict, turn_kl_sums: Sequence[float], turn_tokens: Sequence[int]) -> dict:
    """One training episode as observation_of_episodes takes it: success (the episode ended with the
    full reward, 1 on ALFWorld, WebShop and normalised ScienceWorld), reward, the schedule it ran
    under, and per student turn its summed k1 KL, response tokens and whether the action was offered."""
    adm = list(rec.get("admissible") or [])
    return {
        "won": bool(rec["done"]) and float(rec["reward"]) >= 1.0 - 1e-9, "reward": float(rec["reward"]),
        "horizon": int(plan["cap"]), "prefix": int(rec["prefix"]), "student_turns": int(plan["student_turns"]),
        "turns": [{"kl_sum": float(k), "tokens": int(n), "admissible": bool(adm[i]) if i < len(adm) else False}
                  for i, (k, n) in enumerate(zip(turn_kl_sums, turn_tokens))],
    }


def replay_trace(exprs: Dict[str, dict], trace: Sequence[dict], steps: int, staleness: int) -> List[dict]:
    """Per step 1..steps: the feedback vars, a frozen view and the summary in force, replaying a
    trace as a run sees it (plan/feedback.ts `replayTrace`)."""
    tracker = FeedbackTracker(exprs)
    out, nxt = [], 0
    for t in range(1, steps + 1):
        while nxt < len(trace) and trace[nxt]["step"] <= t - 1 - staleness:
            tracker.observe(trace[nxt], observe_clock(trace[nxt]["step"], staleness, steps))
            nxt += 1
        out.append({"vars": tracker.vars(), "view": tracker.frozen_view(), "summary": tracker.summary()})
    return out


class TurnBatch:
    """The turns of a batch, flattened: turn i belongs to episode `episode_of[i]` (plan/expr.ts)."""

    def __init__(self, episode_of: Sequence[int], variables: Dict[str, Sequence[float]], scalars: Dict[str, float]):
        self.n = len(episode_of)
        self.episode_of = list(episode_of)
        self.vars = {k: [float(x) for x in v] for k, v in variables.items()}
        self.scalars = dict(scalars)
        for k, v in self.vars.items():
            if len(v) != self.n:
                raise ExprError(f"turn variable {k} has {len(v)} values for {self.n} turns")


def eval_turns(tree: dict, batch: TurnBatch) -> List[float]:
    """Evaluates a turn-level tree over every turn of a batch (plan/expr.ts `evalTurns`)."""
    n = batch.n
    op = tree["op"]
    if op == "const":
        return [float(tree["value"])] * n
    if op == "var":
        name = tree["name"]
        if name in batch.vars:
            return list(batch.vars[name])
        if name not in batch.scalars:
            raise ExprError(f"variable {name} is not available for turns")
        return [float(batch.scalars[name])] * n
    if op == "ext":
        raise ExprError(f"extension function {tree['fn']} is a TypeScript extension; Trinity plugins cannot run it")
    if op == "zscore":
        x = eval_turns(tree["args"][0], batch)
        mean = sum(x) / max(n, 1)
        sd = math.sqrt(sum((v - mean) ** 2 for v in x) / max(n, 1))
        return [(v - mean) / (sd + ZSCORE_EPS) for v in x]
    if op == "softmax_over_turns":
        x = eval_turns(tree["args"][0], batch)
        mx: Dict[int, float] = {}
        for i in range(n):
            e = batch.episode_of[i]
            mx[e] = max(mx.get(e, -math.inf), x[i])
        out = [_exp(x[i] - mx[batch.episode_of[i]]) for i in range(n)]
        tot: Dict[int, float] = {}
        for i in range(n):
            tot[batch.episode_of[i]] = tot.get(batch.episode_of[i], 0.0) + out[i]
        return [out[i] / tot[batch.episode_of[i]] for i in range(n)]
    if op == "episode_mean":
        x = eval_turns(tree["args"][0], batch)
        s: Dict[int, float] = {}
        c: Dict[int, int] = {}
        for i in range(n):
            e = batch.episode_of[i]
            s[e] = s.get(e, 0.0) + x[i]
            c[e] = c.get(e, 0) + 1
        return [s[batch.episode_of[i]] / c[batch.episode_of[i]] for i in range(n)]
    if op == "batch_mean":
        x = eval_turns(tree["args"][0], batch)
        return [sum(x) / n if n > 0 else 0.0] * n
    cols = [eval_turns(a, batch) for a in tree["args"]]
    return [pointwise(op, [col[i] for col in cols]) for i in range(n)]


# ---- pacing (TCOD f2b / b2f, TurnOPD adaptive depth) ----------------------------------------------

def pacing_vars(step: int, total_steps: int, max_turns: int, expert_length: int = 0) -> Dict[str, float]:
    return {
        "step": float(step),
        "total_steps": float(total_steps),
        "episode.expert_length": float(expert_length),
        "episode.max_turns": float(max_turns),
    }


def horizon_at(spec: dict, exprs: Dict[str, dict], step: int, expert_length: int = 0,
               feedback: Optional[FeedbackTracker] = None) -> int:
    """Training turn cap at `step` (1-based explorer step): floor(horizon), at most Hmax; a horizon
    outside its range (below 1 turn) is TC7005 naming the step (runtime/nodes/episode-planner.ts)."""
    hmax = int(spec["maxTurns"])
    ref = spec.get("horizon")
    if ref is None:
        return hmax
    h = eval_ref(ref, exprs, _with_feedback(pacing_vars(step, spec["totalSteps"], hmax, expert_length), feedback),
                 feedback.view() if feedback else None)
    h = checked(ref, h, step, exprs, PLAN_RANGES["horizon"])
    return int(min(math.floor(h), hmax))


def _with_feedback(variables: Dict[str, float], feedback: Optional[FeedbackTracker]) -> Dict[str, float]:
    if feedback is not None:
        variables.update(feedback.vars())
    return variables


def prefix_at(spec: dict, exprs: Dict[str, dict], step: int, expert_length: int,
              feedback: Optional[FeedbackTracker] = None) -> int:
    """Expert turns replayed before the student plays: floor(prefix) clamped to [0, L]. Its range
    [0, Hmax − 1] (TC7005) is checked at the expert lengths the compiler checks it at (L ≤ Hmax), as
    runtime/nodes/episode-planner.ts: for a longer expert path the official b2f starts at L − 1 ≥ Hmax."""
    hmax = int(spec["maxTurns"])
    ref = spec.get("prefix")
    if ref is None:
        return 0
    p = eval_ref(ref, exprs, _with_feedback(pacing_vars(step, spec["totalSteps"], hmax, expert_length), feedback),
                 feedback.view() if feedback else None)
    p = checked(ref, p, step, exprs, prefix_range(hmax) if expert_length <= hmax else None)
    return int(max(0, min(math.floor(p), expert_length)))


def plan_episode(spec: dict, exprs: Dict[str, dict], step: int, expert_length: int,
                 adaptive_cap: Optional[int] = None, feedback: Optional[FeedbackTracker] = None) -> Dict[str, object]:
    """The schedule of one training episode (runtime/nodes/episode-planner.ts): cap H (f2b horizon or
    the adaptive cap), prefix p (b2f), student turns min(H, Hmax − p), capped when below Hmax − p.
    `feedback`: the tracker in force for `step` when the plan's pacing reads the run's metrics."""
    hmax = int(spec["maxTurns"])
    cap = min(adaptive_cap, hmax) if adaptive_cap is not None else horizon_at(spec, exprs, step, expert_length, feedback)
    prefix = prefix_at(spec, exprs, step, expert_length, feedback)
    budget = max(0, hmax - prefix)
    turns = min(cap, budget)
    return {"cap": cap, "prefix": prefix, "student_turns": turns, "capped": turns < budget}


def probe_profile(episodes_turn_kl: Sequence[Sequence[float]]) -> Dict[str, List[float]]:
    """Turn profile of probe episodes (runtime/adaptive-depth.ts `probeProfile`): per turn h, the
    share of episodes still running (`running`) and their mean per-token KL (`kl`, NaN if none)."""
    depth = max((len(e) for e in episodes_turn_kl), default=0)
    running, kl = [], []
    for h in range(depth):
        vals = [e[h] for e in episodes_turn_kl if h < len(e)]
        running.append(len(vals) / len(episodes_turn_kl) if episodes_turn_kl else 0.0)
        kl.append(sum(vals) / len(vals) if vals else math.nan)
    return {"running": running, "kl": kl}


# ---- seeds and the TurnOPD probe draw (plan/seeds.ts) -----------------------------------------

_M32 = 0xFFFFFFFF
SEED_PURPOSE_PROBE = 4  # plan/seeds.ts SEED_PURPOSE.probe


def _imul(a: int, b: int) -> int:
    """JavaScript's Math.imul on unsigned 32-bit patterns (the low 32 bits of the product)."""
    return ((a & _M32) * (b & _M32)) & _M32


def mix_seed(*parts: int) -> int:
    """plan/seeds.ts `mixSeed`: a 32-bit murmur3-style mix of integers, non-negative."""
    h = 0x9E3779B9
    for p in parts:
        p = int(p)
        for w in (p & _M32, (p // 4294967296) & _M32):
            h = _imul(h ^ w, 0x85EBCA6B)
            h ^= h >> 13
            h = _imul(h, 0xC2B2AE35)
            h ^= h >> 16
    return h & _M32


def mulberry32(seed: int):
    """plan/seeds.ts `rng`: floats in [0, 1), the same stream as the TypeScript generator."""
    state = [seed & _M32]

    def nxt() -> float:
        a = (state[0] + 0x6D2B79F5) & _M32
        state[0] = a
        t = _imul(a ^ (a >> 15), 1 | a)
        t = ((t + _imul(t ^ (t >> 7), 61 | t)) & _M32) ^ t
        return ((t ^ (t >> 14)) & _M32) / 4294967296.0

    return nxt


def permutation(n: int, seed: int) -> List[int]:
    """plan/seeds.ts `permutation`: Fisher–Yates over 0..n−1 driven by mulberry32(seed)."""
    r = mulberry32(seed)
    p = list(range(n))
    for i in range(n - 1, 0, -1):
        j = int(math.floor(r() * (i + 1)))
        p[i], p[j] = p[j], p[i]
    return p


def probe_task_indices(seed: int, step: int, episodes: int, tasks: int) -> List[int]:
    """plan/seeds.ts `probeTaskIndices`: which tasks of the probed split (its rows in order) the
    TurnOPD probe episodes of `step` play; the same draw as `tcod run` (runtime/nodes/probe.ts)."""
    if tasks <= 0:
        return []
    perm = permutation(tasks, mix_seed(seed, SEED_PURPOSE_PROBE, step))
    return [perm[i % tasks] for i in range(episodes)]


def coverage_cap(running: Sequence[float], keep: float) -> int:
    """Smallest H whose running-share prefix sum reaches `keep` of the total (adaptive-depth.ts)."""
    total = sum(running)
    if total <= 0:
        return 1
    acc = 0.0
    for h, s in enumerate(running):
        acc += s
        if acc >= keep * total - 1e-12 * total:
            return h + 1
    return len(running)


def divergence_cap(kl: Sequence[float], ratio: float, min_baseline: float = 1e-3) -> int:
    """First turn whose KL exceeds ratio × max(median(κ_1..κ_3), min_baseline); else the deepest turn."""
    head = sorted(k for k in kl[:3] if math.isfinite(k))
    if not head:
        return max(1, len(kl))
    n = len(head)
    mid = head[(n - 1) // 2] if n % 2 == 1 else (head[n // 2 - 1] + head[n // 2]) / 2
    threshold = ratio * max(mid, min_baseline)
    for h, k in enumerate(kl):
        if k > threshold:
            return h + 1
    return max(1, len(kl))


def next_adaptive_cap(adaptive: dict, profile: Dict[str, List[float]], last_cap: int, hmax: int) -> int:
    """TurnOPD adaptive depth after one probe (DESIGN §5, runtime/adaptive-depth.ts
    `nextAdaptiveCap`): the rule's cap, shrinking at most one turn per probe, within [min, Hmax]."""
    rule = adaptive["rule"]
    if rule["kind"] == "coverage":
        raw = coverage_cap(profile["running"], rule["keep"])
    elif rule["kind"] == "divergence":
        raw = divergence_cap(profile["kl"], rule["ratio"])
    else:
        raise ExprError(f"unknown adaptive-depth rule {rule['kind']}")
    return int(min(hmax, max(raw, last_cap - 1, int(adaptive["min"]))))


# ---- signals (runtime/signals/*.ts) ---------------------------------------------------------------

def opd_advantages(logp_student: Sequence[float], logp_teacher: Sequence[float], mask: Sequence[float],
                   coef: float) -> List[float]:
    """c · (log p_T − log p_S) on student tokens, 0 elsewhere (Trinity multi_turn_opd, k1)."""
    return [coef * (t - s) if m else 0.0 for s, t, m in zip(logp_student, logp_teacher, mask)]


def grpo_episode_advantages(rewards: Sequence[float], group_of: Sequence[int], normalize: bool = True,
                            eps: float = 1e-6, std: str = "sample", singleton: str = "zero") -> List[float]:
    """Group-normalised episode rewards (runtime/signals/grpo.ts; verl's torch.std is the sample std)."""
    members: Dict[int, List[int]] = {}
    for e, g in enumerate(group_of):
        members.setdefault(g, []).append(e)
    out = [0.0] * len(rewards)
    for idx in members.values():
        g = len(idx)
        if g == 1:
            r = rewards[idx[0]]
            out[idx[0]] = 0.0 if singleton == "zero" else (r / (1 + eps) if normalize else r)
            continue
        mean = sum(rewards[e] for e in idx) / g
        ss = sum((rewards[e] - mean) ** 2 for e in idx)
        sd = math.sqrt(ss / (g - 1 if std == "sample" else g))
        for e in idx:
            c = rewards[e] - mean
            out[e] = c if not normalize else (0.0 if c == 0 else c / (sd + eps))
    return out


def loss_weights(rows: Sequence[Sequence[float]], mode: str, weight: float = 0.0) -> List[List[float]]:
    """Per-token loss weights for per-turn rows (runtime/signals/aggregate.ts, emptyRows "skip").

    token_mean: 1/N; seq_mean_token_mean and turn_mean (one row = one turn): 1/(R·n_r);
    progressive: weight·turn_mean + (1 − weight)·token_mean.
    """
    n_tok = sum(sum(r) for r in rows)
    counts = [sum(r) for r in rows]
    non_empty = sum(1 for c in counts if c > 0)
    tm = [[(m / n_tok if n_tok else 0.0) for m in r] for r in rows]
    sm = [[(m / (non_empty * c) if c > 0 else 0.0) for m in r] for r, c in zip(rows, counts)]
    if mode == "token_mean":
        return tm
    if mode in ("seq_mean_token_mean", "turn_mean"):
        return sm
    if mode == "progressive":
        if not (0 <= weight <= 1):
            raise ExprError(f"progressive aggregation: weight {weight} is outside [0, 1]")
        return [[weight * a + (1 - weight) * b for a, b in zip(ra, rb)] for ra, rb in zip(sm, tm)]
    raise ExprError(f"unknown aggregation {mode}")


def token_mean_rescale(rows_mask: Sequence[Sequence[float]], mode: str, weight: float = 0.0) -> List[List[float]]:
    """Factors s with token_mean(s·A) ≡ `mode`(A): s = N · w_mode (DESIGN: Trinity's loss_agg_mode is
    static, so a step-dependent aggregation rides on the advantages; exact for the IS loss and for
    PPO's clipped surrogate because s > 0 commutes with min/max)."""
    n_tok = sum(sum(r) for r in rows_mask)
    w = loss_weights(rows_mask, mode, weight)
    return [[x * n_tok for x in r] for r in w]


def turn_stats(logp_student: Sequence[Sequence[float]], logp_teacher: Sequence[Sequence[float]],
               masks: Sequence[Sequence[float]], episode_of_turn: Sequence[int],
               turn_index: Optional[Sequence[int]] = None) -> Dict[str, List[float]]:
    """Per-turn variables for turn-level trees, one turn per row (rows of an episode in turn order).

    turn.kl: mean k1 reverse KL (log p_S − log p_T) over the turn's student tokens; turn.entropy: the
    sampled-token surprisal −log p_S averaged likewise (Trinity gives no distribution: DESIGN's
    fallback); turn.tokens; turn.index: the env step of the turn, replayed expert steps included
    (TCOD b2f: p + i, Trinity's `eid.step`; runtime/rollout.ts TurnRecord.index) — when
    `turn_index` is not given, the 0-based position within the episode; episode.turns. Empty turns: NaN.
    """
    kl, ent, tok, idx = [], [], [], []
    seen: Dict[int, int] = {}
    for r, (s, t, m, e) in enumerate(zip(logp_student, logp_teacher, masks, episode_of_turn)):
        n = sum(m)
        tok.append(float(n))
        kl.append(sum((a - b) for a, b, mm in zip(s, t, m) if mm) / n if n else math.nan)
        ent.append(sum(-a for a, mm in zip(s, m) if mm) / n if n else math.nan)
        idx.append(float(turn_index[r] if turn_index is not None else seen.get(e, 0)))
        seen[e] = seen.get(e, 0) + 1
    turns = [float(seen[e]) for e in episode_of_turn]
    return {"turn.kl": kl, "turn.entropy": ent, "turn.tokens": tok, "turn.index": idx, "episode.turns": turns}


def turn_weights(tree: dict, logp_student: Sequence[Sequence[float]], logp_teacher: Sequence[Sequence[float]],
                 masks: Sequence[Sequence[float]], episode_of: Sequence[int], scalars: Dict[str, float],
                 turn_index: Optional[Sequence[int]] = None) -> List[float]:
    """A turn-level weight tree over per-turn rows. Turns without student tokens have no statistics:
    they are left out of the batch the tree sees (so zscore/softmax use non-empty turns only, and
    episode.turns counts non-empty turns) and get weight 0, as runtime/signals/tdur.ts."""
    keep = [r for r, m in enumerate(masks) if sum(m) > 0]
    stats = turn_stats([logp_student[r] for r in keep], [logp_teacher[r] for r in keep],
                       [masks[r] for r in keep], [episode_of[r] for r in keep],
                       [turn_index[r] for r in keep] if turn_index is not None else None)
    w = eval_turns(tree, TurnBatch([episode_of[r] for r in keep], stats, scalars))
    out = [0.0] * len(masks)
    for r, x in zip(keep, w):
        out[r] = x
    return out


def step_advantages(spec: dict, exprs: Dict[str, dict], step: int, total_steps: int,
                    logp_student: Sequence[Sequence[float]], logp_teacher: Sequence[Sequence[float]],
                    masks: Sequence[Sequence[float]], episode_of: Sequence[int], group_of_episode: Dict[int, int],
                    reward_of_episode: Dict[int, float], turn_index: Optional[Sequence[int]] = None) -> List[List[float]]:
    """The plan's Advantage terms and TurnWeights over ONE WHOLE explorer step (before any split).

    A = Σ_terms coef(step) · A_term (opd: k1 per token; grpo: group-normalised episode reward
    broadcast to the episode's student tokens); turn weights multiply A (a 0 stays 0). GRPO's group
    mean/std, T-DUR's z-scores over the step's turns and its per-episode softmax all need every row
    of the step: tcod's runtime computes them over the step's learner batch (runtime/engine.ts), and
    the plugin computes them in the explorer's experience pipeline, which receives every experience
    of one explore step (tcod_advantage.py `TcodStepAdvantage`), never on a train batch.
    """
    step_vars = {"step": float(step), "total_steps": float(total_steps)}
    out = [[0.0] * len(m) for m in masks]
    for term in spec["terms"]:
        coef = checked(term["coef"], eval_ref(term["coef"], exprs, step_vars), step, exprs)
        if term["kind"] == "opd":
            if term["estimator"] != "k1":
                raise ExprError(f"opd estimator {term['estimator']} needs teacher distributions Trinity does not return")
            for r, (s, t, m) in enumerate(zip(logp_student, logp_teacher, masks)):
                a = opd_advantages(s, t, m, coef)
                out[r] = [x + y for x, y in zip(out[r], a)]
        elif term["kind"] == "grpo":
            episodes = sorted(set(episode_of))
            pos = {e: i for i, e in enumerate(episodes)}
            adv = grpo_episode_advantages([reward_of_episode[e] for e in episodes],
                                          [group_of_episode[e] for e in episodes],
                                          normalize=term["normalize"], eps=term["eps"],
                                          std=term.get("std", "sample"), singleton=term.get("singleton", "zero"))
            for r, m in enumerate(masks):
                a = adv[pos[episode_of[r]]]
                out[r] = [x + (coef * a if mm else 0.0) for x, mm in zip(out[r], m)]
        else:
            raise ExprError(f"advantage term {term['kind']} is not supported in Trinity plugins")
    weights = spec.get("turnWeights")
    if weights is not None:
        w = turn_weights(exprs[weights["expr"]]["tree"], logp_student, logp_teacher, masks, episode_of,
                         {**step_vars, "episode.max_turns": float(spec.get("maxTurns", 0))}, turn_index)
        out = [[(0.0 if a == 0 else a * w[r]) for a in row] for r, row in enumerate(out)]
    return out


def train_batch_fold(spec: dict, exprs: Dict[str, dict], step: int, total_steps: int,
                     advantages_rows: Sequence[Sequence[float]], masks: Sequence[Sequence[float]]) -> Dict[str, object]:
    """The plan's loss aggregation over ONE train batch (runtime/nodes/update.ts: each optimiser
    batch gets its own weights). Trinity's loss_agg_mode is fixed for the run, so a `progressive`
    aggregation (a step-dependent mix of turn_mean and token_mean) rides on the advantages:
    s = N · w_progressive, and token_mean(s·A) = progressive(A) over this batch. That equality
    holds for a loss that averages tokens over the whole train batch; verl averages per
    micro-batch (use_dynamic_bsz packs micro-batches by tokens) and then over micro-batches, so
    on Trinity the fold-in is exact only when the train batch is one micro-batch, and otherwise
    weights micro-batches by 1/their token count instead of 1/N (docs/TRINITY.md). Other modes
    map to Trinity's loss_agg_mode unchanged.
    """
    agg = spec["aggregate"]
    if agg["kind"] == "progressive":
        weight = checked(agg["weight"], eval_ref(agg["weight"], exprs, {"step": float(step), "total_steps": float(total_steps)}),
                         step, exprs, PLAN_RANGES["blendWeight"])
        scale = token_mean_rescale(masks, "progressive", weight)
        out = [[a * s for a, s in zip(row, srow)] for row, srow in zip(advantages_rows, scale)]
        return {"advantages": out, "loss_agg_mode": "token-mean"}
    mode = {"token_mean": "token-mean", "seq_mean_token_mean": "seq-mean-token-mean",
            "turn_mean": "seq-mean-token-mean"}[agg["kind"]]
    return {"advantages": [list(r) for r in advantages_rows], "loss_agg_mode": mode}


def advantages(spec: dict, exprs: Dict[str, dict], step: int, total_steps: int,
               logp_student: Sequence[Sequence[float]], logp_teacher: Sequence[Sequence[float]],
               masks: Sequence[Sequence[float]], episode_of: Sequence[int], group_of_episode: Dict[int, int],
               reward_of_episode: Dict[int, float], turn_index: Optional[Sequence[int]] = None) -> Dict[str, object]:
    """The plan's Advantage (and TurnWeights) node for a step that is also one train batch:
    `step_advantages` then `train_batch_fold`. Returns the per-token advantages and the
    loss_agg_mode the trainer must use with them."""
    a = step_advantages(spec, exprs, step, total_steps, logp_student, logp_teacher, masks, episode_of,
                        group_of_episode, reward_of_episode, turn_index)
    return train_batch_fold(spec, exprs, step, total_steps, a, masks)


def parse_step(batch_id) -> int:
    """The explorer step from Trinity's task.batch_id: an int, or the leading digits of "12/eval"."""
    if isinstance(batch_id, int):
        return batch_id
    digits = ""
    for ch in str(batch_id):
        if not ch.isdigit():
            break
        digits += ch
    return int(digits) if digits else 0


def split_unique_id(uid: str):
    """Trinity experience ids `batch/task/run/step/suffix` → (episode key, task key, turn step)."""
    parts = str(uid).split("/")
    if len(parts) < 4:
        raise ValueError(f"unexpected experience id {uid!r}; expected batch/task/run/step[/suffix]")
    return "/".join(parts[:3]), "/".join(parts[:2]), int(parts[3]) if parts[3].isdigit() else 0


def group_rows(unique_ids: Sequence[str]):
    """Episode and task indices per row, rows of each episode ordered by turn step."""
    episode_index: Dict[str, int] = {}
    task_index: Dict[str, int] = {}
    episode_of, group_of = [], {}
    for uid in unique_ids:
        ep, task, _ = split_unique_id(uid)
        e = episode_index.setdefault(ep, len(episode_index))
        group_of[e] = task_index.setdefault(task, len(task_index))
        episode_of.append(e)
    return episode_of, group_of


def ordered_rows(unique_ids: Sequence[str]) -> List[int]:
    """Row order that puts each episode's turns together, in turn order (stable otherwise)."""
    keyed = [(split_unique_id(u)[0], split_unique_id(u)[2], i) for i, u in enumerate(unique_ids)]
    first: Dict[str, int] = {}
    for ep, _, i in keyed:
        first.setdefault(ep, i)
    return [i for _, _, i in sorted(keyed, key=lambda k: (first[k[0]], k[1], k[2]))]


def optional_int(x: Optional[object], default: int) -> int:
    return default if x is None else int(x)  # type: ignore[arg-type]


# ---- agent format (runtime/agent-format.ts) -----------------------------------------------------

_PLACEHOLDER = re.compile(
    r"\{(task|step|step_next|history|history_length|observation|admissible|admissible_lines|available_actions|action_templates|objects|n|observation_compact|action)\}")
COMPACT_ACTION_PLACEHOLDERS = ("{action_templates}", "{objects}")


def uses_compact_actions(agent: dict) -> bool:
    """Does the format show ScienceWorld's compact action list, which the env must supply?"""
    return any(p in agent[k] for k in ("template", "templateNoHistory") for p in COMPACT_ACTION_PLACEHOLDERS)


def _quoted(xs: Sequence[str]) -> str:
    return ", ".join(f"'{a}'" for a in xs)


def _fill(template: str, values: Dict[str, str]) -> str:
    """Substitutes the known `{name}` placeholders; others stay as written (they may be literal)."""
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), template)


def render_prompt(agent: dict, task: str, history: Sequence[tuple], observation: str,
                  admissible: Sequence[str], action_templates: Optional[Sequence[str]] = None,
                  objects: Optional[Sequence[str]] = None) -> str:
    """The user message of one turn (runtime/agent-format.ts `renderUserMessage`).

    `history` holds every earlier (observation, action) pair of the episode, expert replay included;
    {step} is its length and {step_next} its length + 1; the history-free template is used while
    fewer than `historyWindow` pairs exist; entries are numbered by env step (1-based) and joined by
    newlines; admissible commands are listed as 'a', 'b', and so are ScienceWorld's action templates
    and objects ({action_templates}, {objects}), which the env must supply when the format shows them.
    """
    if uses_compact_actions(agent) and (action_templates is None or objects is None):
        raise ValueError(f"tcod workflow: agent format {agent['name']!r} shows {{action_templates}}/{{objects}}, "
                         "but the env supplied none (only ScienceWorld does)")
    window = int(agent["historyWindow"])
    shown = list(history)[-window:] if window > 0 else []
    first = len(history) - len(shown)
    hist = "\n".join(
        _fill(agent["historyEntry"], {"n": str(first + i + 1), "observation": o, "observation_compact": compact_text(o),
                                      "action": a})
        for i, (o, a) in enumerate(shown)
    )
    use_history = window > 0 and len(history) >= window
    return _fill(agent["template"] if use_history else agent["templateNoHistory"], {
        "task": task,
        "step": str(len(history)),
        "step_next": str(len(history) + 1),
        "history": hist,
        "history_length": str(len(shown)),
        "observation": observation,
        "admissible": _quoted(admissible),
        # the official ALFWorld prompt: "'a'\n 'b'", without "help"
        "admissible_lines": "\n ".join(f"'{a}'" for a in admissible if a != "help"),
        # the official WebShop prompt: "a\nb", unquoted (TCOD webshop/utils.py _format_available_actions)
        "available_actions": "\n".join(admissible),
        "action_templates": _quoted(action_templates or []),
        "objects": _quoted(objects or []),
    })


def compact_text(text: str) -> str:
    """Text on one line, as the official WebShop prompt's history shows an observation
    ({observation_compact}; TCOD webshop/utils.py _compact_text; runtime/agent-format.ts compactText)."""
    return " ".join(line.strip() for line in text.splitlines() if line.strip())


def _non_empty(s: str) -> Optional[str]:
    t = s.strip()
    return t if t else None


# JavaScript's String.prototype.trim (runtime/agent-format.ts for action_pick "last" and
# on_invalid "pass"/"feedback"): its whitespace has \ufeff and lacks Python's \x1c-\x1f and \x85.
_JS_SPACE = "\t\n\v\f\r \xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"


def js_trim(s: str) -> str:
    """tcod's runtime trims replies with JavaScript's trim(); the plugin trims them the same way."""
    return s.strip(_JS_SPACE)


def _js_non_empty(s: str) -> Optional[str]:
    t = js_trim(s)
    return t if t else None


def parse_action(agent: dict, response: str) -> Optional[str]:
    """The action a response names, or None when it does not parse: no action, or an empty one
    (runtime/agent-format.ts parseAction).

    agent["actionPick"]: "first" is the official TCOD workflows' parse_action (their utils.py:
    response.split("<action>")[1].split("</action>")[0].strip(), the text after the first tag up to
    the next close or open tag, or the end of the reply); absent or "last" (tcod's default) takes the
    last complete pair. A react parser reads after the first or the last prefix."""
    parser = agent["parser"]
    kind = parser["kind"]
    first = agent.get("actionPick", "last") == "first"
    if kind == "tags":
        open_t, close_t = f"<{parser['tag']}>", f"</{parser['tag']}>"
        if first:
            if open_t not in response:
                return None
            return _non_empty(response.split(open_t)[1].split(close_t)[0])
        # The last complete <tag>…</tag> pair wins (a model may draft one inside its thinking).
        end = response.rfind(close_t)
        if end < 0:
            return None
        start = response.rfind(open_t, 0, end)
        if start < 0:
            return None
        return _js_non_empty(response[start + len(open_t):end])
    if kind == "react":
        at = response.find(parser["prefix"]) if first else response.rfind(parser["prefix"])
        if at < 0:
            return None
        return _js_non_empty(response[at + len(parser["prefix"]):].split("\n")[0])
    if kind == "raw":
        return _js_non_empty(response)
    raise ExprError(f"unknown action parser {kind}")


WEBSHOP_SEARCH_TEMPLATE = "search[<query>]"


def webshop_actions(available: dict) -> List[str]:
    """WebShop's available actions as tcod lists them (runtime/envs/agentgym/observation.ts
    `webshopActions`), as the official TCOD WebShop workflows do (webshop/utils.py
    _format_available_actions): the search form when the page has one, then click[x] per clickable."""
    out = [WEBSHOP_SEARCH_TEMPLATE] if available.get("has_search_bar") else []
    for c in available.get("clickables") or []:
        out.append(f"click[{c}]")
    return out


def webshop_instruction(observation: str) -> Optional[str]:
    """The instruction inside "WebShop [SEP] Instruction: [SEP] Find me … [SEP] Search"."""
    parts = [p.strip() for p in observation.split(" [SEP] ")]
    for i, p in enumerate(parts):
        if p == "Instruction:":
            return parts[i + 1] if i + 1 < len(parts) else None
    return None


def webshop_task(observation: str) -> str:
    """The task of a WebShop episode from its first page, as the official TCOD WebShop workflows
    read it (webshop/utils.py _extract_task_description): in `text_rich` observations the lines
    after "Instruction:" up to the first "[button]" line; the [SEP]-joined `text` form (AgentGym's
    server) by webshop_instruction; else the whole page on one line."""
    sep = webshop_instruction(observation)
    if sep is not None:
        return sep
    lines = [line.strip() for line in observation.splitlines()]
    if "Instruction:" not in lines:
        return compact_text(observation)
    task_lines = []
    for line in lines[lines.index("Instruction:") + 1:]:
        if not line:
            continue
        if line.startswith("[button]"):
            break
        task_lines.append(line)
    return " ".join(task_lines).strip() or compact_text(observation)


def alfworld_task(observation: str) -> str:
    """ALFWorld's goal sentence ("put some X on Y") from the first observation."""
    marker = "Your task is to: "
    return observation.split(marker, 1)[1].strip() if marker in observation else ""


# ---- episode semantics per env (plan/env-semantics.ts, shipped in spec.json) ---------------------

def _py_repr_list(xs: Sequence[str]) -> str:
    return repr(list(xs))


def check_action(semantics: dict, action: str, admissible: Sequence[str]) -> Optional[str]:
    """None when the env takes `action`; else the feedback it answers with, without a step
    (plan/env-semantics.ts `checkAction`; WebShop: the TCOD WebShop workflows' `validate_action`)."""
    if semantics["invalidAction"]["kind"] == "step":
        return None
    m = re.match(r"(.+)\[(.+)\]", action)  # the TCOD WebShop workflows' own pattern
    name = m.group(1) if m else action
    arg = m.group(2).lower() if m else None
    has_search = any(a.startswith("search[") for a in admissible)
    if name == "search" and arg is not None and arg != "" and has_search:
        return None
    if name == "click" and arg is not None and f"click[{arg}]" in admissible:
        return None
    if name == "search":
        if arg is None or arg == "":
            return "Invalid action, please type in the query you want to search in the square brackets here."
        return "Can not perform search action without search bar. Please click the Back to Search button first."
    if name == "click":
        clickables = [a[6:-1] for a in admissible if a.startswith("click[")]
        return ("Incorrect action format, make sure you have the correct button name that is within the current "
                f"page. The buttons you can click now are: {_py_repr_list(clickables)}")
    return "Invalid action. You should wrap your action with the <action> </action> tag and follow the action format."


def capped_reward(semantics: dict, plan_reward: float, reward_so_far: float) -> float:
    """Reward of an episode the curriculum cap cut before done (ScienceWorld keeps its score)."""
    return reward_so_far if semantics["truncation"]["kind"] == "score" else float(plan_reward)


# ---- one training episode (runtime/rollout.ts `runEpisode`) --------------------------------------

async def run_episode(*, agent: dict, task: str, first_observation: str, first_admissible: Sequence[str],
                      prefix_actions: Sequence[str], student_turns: int, capped: bool, truncated_reward: float,
                      env_step, chat, on_turn=None, semantics: Optional[dict] = None,
                      first_compact: Optional[dict] = None) -> dict:
    """Plays one episode the way tcod's runtime does; the Trinity workflow supplies the edges.

    env_step(action) -> (observation, reward, done, admissible[, compact])   (awaitable)
    chat(messages) -> (response_text, handle)                       (awaitable; handle = Trinity's Experience)
    on_turn(handle) -> None                                         (awaitable; e.g. teacher scoring)

    The expert prefix is replayed with no model call; replayed steps become history, not chat memory
    (the memory starts empty at the hand-off) and a replay that finishes the task ends the episode
    with `replay_finished`. The student then plays up to `student_turns` turns. An unparseable reply
    follows `agent.onInvalid`: feedback (reply `text` as the observation without stepping the env),
    pass (send the raw reply), end (stop, reward 0). Reward: the sum of env rewards when done; when not
    done, `truncated_reward` if the turn cap cut the episode (`capped`), else the sum.
    `semantics` (plan/env-semantics.ts): an action the env does not offer may be answered with
    feedback without a step (WebShop), and a capped episode may keep its score (ScienceWorld).
    `first_compact` / an env_step's fifth value: ScienceWorld's compact action list
    {"actionTemplates": [...], "objects": [...]}, which a format showing {action_templates}/{objects}
    needs (as tcod's ScienceWorld bridge answers it with every reset and step).
    """
    semantics = semantics or {"truncation": {"kind": "fixed"}, "invalidAction": {"kind": "step"}}
    history: List[tuple] = []
    observation, admissible = first_observation, list(first_admissible)
    compact = first_compact
    reward_sum = 0.0
    rec = {"turns": [], "reward": 0.0, "done": False, "truncated": False, "replay_finished": False,
           "invalid_actions": 0, "prefix": len(prefix_actions),
           # per student turn: was its parsed action one the env offered (the admissible rate of feedback)
           "admissible": []}
    for action in prefix_actions:
        obs, reward, done, adm, *more = await env_step(action)
        history.append((observation, action))
        observation, admissible, compact = obs, list(adm), (more[0] if more else None)
        reward_sum += float(reward)
        if done:
            rec.update(done=True, reward=reward_sum, replay_finished=True)
            return rec
    memory: List[dict] = []  # (user, assistant) message pairs of earlier student turns
    for _ in range(student_turns):
        user = {"role": "user", "content": render_prompt(
            agent, task, history, observation, admissible,
            (compact or {}).get("actionTemplates"), (compact or {}).get("objects"))}
        kept = memory
        if agent["memory"]["kind"] == "window":
            n = int(agent["memory"]["turns"])
            kept = memory[len(memory) - min(2 * n, len(memory)):]
        system = [{"role": "system", "content": agent["system"]}] if agent["system"] else []
        text, handle = await chat(system + kept + [user])
        rec["turns"].append(handle)
        if on_turn is not None:
            await on_turn(handle)
        memory += [user, {"role": "assistant", "content": text}]
        action = parse_action(agent, text)
        rec["admissible"].append(action is not None and action in admissible)
        if action is None and agent["onInvalid"]["kind"] == "empty":
            # The official TCOD workflows: an unparsed reply is the empty action "", which goes where
            # any action goes (WebShop answers it without a step; ALFWorld and ScienceWorld step it).
            rec["invalid_actions"] += 1
            feedback = check_action(semantics, "", admissible)
            if feedback is not None:
                history.append((observation, ""))
                observation = feedback
                continue
            action = ""
        elif action is None:
            rec["invalid_actions"] += 1
            how = agent["onInvalid"]["kind"]
            if how == "end":
                return rec
            if how == "feedback":
                history.append((observation, js_trim(text)))
                observation = agent["onInvalid"]["text"]
                continue
            # An env that validates actions (WebShop) answers a reply with no action as the empty
            # action (the TCOD workflows' parse_action returns ""): its message, no step.
            none = check_action(semantics, "", admissible)
            if none is not None:
                history.append((observation, ""))
                observation = none
                continue
            action = js_trim(text)
        else:
            feedback = check_action(semantics, action, admissible)
            if feedback is not None:
                rec["invalid_actions"] += 1
                history.append((observation, action))
                observation = feedback
                continue
        obs, reward, done, adm, *more = await env_step(action)
        history.append((observation, action))
        observation, admissible, compact = obs, list(adm), (more[0] if more else None)
        reward_sum += float(reward)
        if done:
            rec.update(done=True, reward=reward_sum)
            return rec
    if capped:
        rec.update(truncated=True, reward=capped_reward(semantics, truncated_reward, reward_sum))
    else:
        rec["reward"] = reward_sum
    return rec
