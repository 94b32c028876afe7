#!/usr/bin/env python3
"""Runs the generated plugin's pure-Python core (targets/trinity/plugin/tcod_runtime/core.py)
for tcod's tests, with no torch, numpy or Trinity installed.

  py_parity.py vectors PATH   check the shared signal vectors (test/vectors/signals.json) for every
                              case with per-turn rows (Trinity's layout); prints a JSON summary
  py_parity.py episodes PATH SEMANTICS
                              run the per-env episode vectors (test/vectors/episodes.json) through
                              core.run_episode with the semantics JSON the exporter ships
  py_parity.py rpc            read [{"fn": name, "args": [...]}, ...] as JSON on stdin, call
                              core.<fn>(*args) for each and print the results as JSON (NaN/±inf as
                              the strings "NaN", "Infinity", "-Infinity")
"""
import json
import math
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "targets", "trinity", "plugin"))
from tcod_runtime import core  # noqa: E402

TOL = 1e-9


def tdur_tree(alpha, beta, tau):
    """stdlib tdur() as the compiler lowers it: n · softmax_over_turns((α·z(kl) + β·z(entropy)) / τ)."""
    c = lambda v: {"op": "const", "value": v}  # noqa: E731
    v = lambda n: {"op": "var", "name": n}  # noqa: E731
    o = lambda op, *a: {"op": op, "args": list(a)}  # noqa: E731
    return o("mul", o("softmax_over_turns", o("div", o("add", o("mul", c(alpha), o("zscore", v("turn.kl"))),
                                                         o("mul", c(beta), o("zscore", v("turn.entropy")))), c(tau))),
             v("episode.turns"))


def close(a, b):
    if isinstance(a, list) or isinstance(b, list):
        return isinstance(a, list) and isinstance(b, list) and len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if a is None or b is None:
        return a is b
    return abs(a - b) <= TOL * max(1.0, abs(b))


def check_case(case):
    """Yields (quantity, ok, got, expected) for each quantity Trinity's layout can express."""
    rows, eps, p, exp = case["rows"], case["episodes"], case["params"], case["expected"]
    masks = [r["mask"] for r in rows]
    s = [r["logp_student"] for r in rows]
    t = [r["logp_teacher"] for r in rows]
    ep = [r["episode"] for r in rows]
    opd = [core.opd_advantages(a, b, m, p["opd"]["coef"]) for a, b, m in zip(s, t, masks)]
    yield "opd_advantages", opd, exp["opd_advantages"]
    g = p["grpo"]
    ge = core.grpo_episode_advantages([e["reward"] for e in eps], [e["group"] for e in eps],
                                      normalize=g["normalize"], eps=g["eps"], std=g["std"], singleton=g["singleton"])
    yield "grpo_episode_advantages", ge, exp["grpo_episode_advantages"]
    stats = core.turn_stats(s, t, masks, ep)
    yield "turn_stats.kl_mean", [None if math.isnan(x) else x for x in stats["turn.kl"]], \
        [x.get("kl_mean") for x in exp["turn_stats"]]
    yield "turn_stats.entropy_mean", [None if math.isnan(x) else x for x in stats["turn.entropy"]], \
        [x.get("entropy_mean") for x in exp["turn_stats"]]
    td = p["tdur"]
    weights = core.turn_weights(tdur_tree(td["alpha"], td["beta"], td["temperature"]), s, t, masks, ep, {})
    yield "tdur_weights (plan tree tdur())", weights, exp["tdur_weights"]
    spec = {
        "terms": [
            {"kind": "opd", "coef": {"expr": "kappa"}, "estimator": "k1"},
            {"kind": "grpo", "coef": {"expr": "rho"}, "normalize": g["normalize"], "eps": g["eps"],
             "std": g["std"], "singleton": g["singleton"]},
        ],
        "aggregate": {"kind": "token_mean"},
        "turnWeights": {"expr": "w"},
        "maxTurns": 30,
    }
    exprs = {
        "kappa": {"tree": {"op": "mul", "args": [{"op": "const", "value": p["kappa"]}, {"op": "const", "value": p["opd"]["coef"]}]}},
        "rho": {"tree": {"op": "const", "value": p["rho"]}},
        "w": {"tree": tdur_tree(td["alpha"], td["beta"], td["temperature"])},
    }
    group_of = {i: e["group"] for i, e in enumerate(eps)}
    reward_of = {i: e["reward"] for i, e in enumerate(eps)}
    full = core.advantages(spec, exprs, 1, 1, s, t, masks, ep, group_of, reward_of)
    yield "final_advantages (plugin advantages())", full["advantages"], exp["final_advantages"]
    for mode in ("token_mean", "seq_mean_token_mean", "turn_mean"):
        if mode in exp["loss_weights"]:
            yield f"loss_weights.{mode}", core.loss_weights(masks, mode), exp["loss_weights"][mode]
    agg = p["loss_aggregation"]
    if agg["kind"] == "progressive" and "progressive" in exp["loss_weights"]:
        yield "loss_weights.progressive", core.loss_weights(masks, "progressive", agg["weight"]), exp["loss_weights"]["progressive"]


def vectors(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    report = {"checked": [], "skipped": [], "failures": []}
    for case in data["cases"]:
        if any("turn" in r for r in case["rows"]):
            report["skipped"].append(f"{case['name']}: trajectory rows (Trinity trains on per-turn rows)")
            continue
        if "clip" in case["params"]["opd"] or "discount" in case["params"]["opd"]:
            report["skipped"].append(f"{case['name']}: OPD clip/discount (not in Trinity's multi_turn_opd)")
            continue
        for name, got, want in check_case(case):
            ok = close(got, want)
            report["checked"].append(f"{case['name']}: {name}")
            if not ok:
                report["failures"].append({"case": case["name"], "quantity": name, "got": got, "expected": want})
    print(json.dumps(report))
    return 1 if report["failures"] else 0


def encode(x):
    if isinstance(x, float):
        if math.isnan(x):
            return "NaN"
        if math.isinf(x):
            return "Infinity" if x > 0 else "-Infinity"
        return x
    if isinstance(x, (list, tuple)):
        return [encode(v) for v in x]
    if isinstance(x, dict):
        return {k: encode(v) for k, v in x.items()}
    return x


def decode(x):
    if x == "NaN":
        return math.nan
    if x == "Infinity":
        return math.inf
    if x == "-Infinity":
        return -math.inf
    if isinstance(x, list):
        return [decode(v) for v in x]
    if isinstance(x, dict):
        return {k: decode(v) for k, v in x.items()}
    return x


def rpc():
    calls = json.load(sys.stdin)
    out = []
    for c in calls:
        fn = getattr(core, c["fn"])
        args = [decode(a) for a in c["args"]]
        if c["fn"] == "advantages":  # JSON object keys are strings; episodes are ints
            args[8] = {int(k): v for k, v in args[8].items()}
            args[9] = {int(k): v for k, v in args[9].items()}
        if c["fn"] == "eval_turns":
            b = args[1]
            args[1] = core.TurnBatch(b["episodeOf"], b["vars"], b["scalars"])
        try:
            out.append({"ok": encode(fn(*args))})
        except Exception as e:  # reported, not raised: the caller compares errors too
            out.append({"error": f"{type(e).__name__}: {e}"})
    print(json.dumps(out))
    return 0


TAGS_AGENT = {
    "name": "test-tags", "system": "You act.",
    "template": "Task: {task}. Taken {step}. Last {history_length}:\n{history}\nNow: {observation}. Choose from [{admissible}].",
    "templateNoHistory": "Task: {task}. Taken {step}. Now: {observation}. Choose from [{admissible}].",
    "historyWindow": 2, "historyEntry": "[Observation {n}: '{observation}', Action {n}: '{action}']",
    "memory": {"kind": "accumulate"}, "parser": {"kind": "tags", "tag": "action", "think": False},
    "onInvalid": {"kind": "pass"},
}


def episodes(path, semantics_path):
    """The per-env episode vectors (test/vectors/episodes.json) through core.run_episode, with each
    env's semantics as the exporter ships them (semantics_path: {kind: semantics} from
    plan/env-semantics.ts). Prints {"checked": [...], "failures": [...]}."""
    import asyncio

    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    cases, agents = data["cases"], data.get("agents", {})
    with open(semantics_path, encoding="utf-8") as f:
        semantics = json.load(f)
    checked, failures = [], []
    for c in cases:
        stepped, prompts = [], []
        replies = iter(c["responses"])

        def compact(x):
            """ScienceWorld's compact action list, where the case gives one."""
            return {"actionTemplates": x["actionTemplates"], "objects": x["objects"]} if "objects" in x else None

        async def env_step(action, c=c, stepped=stepped):
            stepped.append(action)
            t = c["transitions"][action]
            return t["observation"], t["reward"], t["done"], t["admissible"], compact(t)

        async def chat(messages, prompts=prompts, replies=replies):
            prompts.append(messages[-1]["content"])
            return next(replies, "<action>none</action>"), None

        rec = asyncio.run(core.run_episode(
            agent=agents[c["agent"]] if "agent" in c else TAGS_AGENT, task=c["first"]["task"],
            first_observation=c["first"]["observation"], first_admissible=c["first"]["admissible"],
            first_compact=compact(c["first"]), prefix_actions=[], student_turns=c["student_turns"],
            capped=c["capped"], truncated_reward=c["plan_truncated_reward"], env_step=env_step, chat=chat,
            semantics=semantics[c["kind"]],
        ))
        e = c["expected"]
        got = {"reward": rec["reward"], "done": rec["done"], "truncated": rec["truncated"],
               "invalid_actions": rec["invalid_actions"], "env_actions": stepped}
        want = {k: e[k] for k in got}
        ok = all(close(got[k], want[k]) if k == "reward" else got[k] == want[k] for k in got)
        ok = ok and all(any(fb in p for p in prompts) for fb in e.get("feedback", []) + e.get("shown", []))
        # the exact user message of every student turn, where the case gives them
        ok = ok and ("prompts" not in e or prompts == e["prompts"])
        checked.append(c["name"])
        if not ok:
            failures.append({"case": c["name"], "got": got, "expected": want, "prompts": prompts})
    # replies and the action each format reads from them (core.parse_action)
    for p in data.get("parses", []):
        got = core.parse_action(agents[p["agent"]], p["response"])
        checked.append(f"parse {p['agent']}: {p['response']!r}")
        if got != p["action"]:
            failures.append({"parse": p, "got": got})
    print(json.dumps({"checked": checked, "failures": failures}))
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) >= 4 and sys.argv[1] == "episodes":
        sys.exit(episodes(sys.argv[2], sys.argv[3]))
    if len(sys.argv) >= 3 and sys.argv[1] == "vectors":
        sys.exit(vectors(sys.argv[2]))
    if len(sys.argv) >= 2 and sys.argv[1] == "rpc":
        sys.exit(rpc())
    print(__doc__)
    sys.exit(2)
