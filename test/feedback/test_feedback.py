"""The Trinity plugin's feedback rules (tcod_runtime/core.py) on the shared vectors
test/vectors/feedback.json (traces in, schedules out), the same file the TypeScript runtime is
checked on (test/feedback/vectors.test.ts, which also runs this file); plus the per-step
observation the generated workflow builds from its episodes, against hand-computed numbers.
Run: python3 test/feedback/test_feedback.py, or pytest."""
import json
import math
import os
import sys
import unittest

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
sys.path.insert(0, os.path.join(ROOT, "targets", "trinity", "plugin"))
from tcod_runtime import core  # noqa: E402

with open(os.path.join(ROOT, "test", "vectors", "feedback.json"), encoding="utf-8") as f:
    VECTORS = json.load(f)


def close(a, b):
    if a is None or b is None:
        return a is b
    return a == b or abs(a - b) <= 1e-9 * max(1.0, abs(b))


class SharedVectors(unittest.TestCase):
    def test_schema_and_cases(self):
        self.assertEqual(VECTORS["schema"], "tcod.feedback-vectors/1")
        self.assertGreaterEqual(len(VECTORS["cases"]), 4)

    def test_every_case_step_by_step(self):
        for c in VECTORS["cases"]:
            with self.subTest(case=c["name"]):
                replay = core.replay_trace(c["exprs"], c["trace"], c["steps"], c["staleness"])
                exp = c["expected"]
                for field in ("horizon", "prefix"):
                    if field not in c:
                        continue
                    for li, length in enumerate(c["expertLengths"]):
                        got = []
                        for t in range(1, c["steps"] + 1):
                            r = replay[t - 1]
                            v = core.pacing_vars(t, c["steps"], c["maxTurns"], length)
                            v.update(r["vars"])
                            got.append(core.eval_ref(c[field], c["exprs"], v, r["view"]))
                        for t, (g, e) in enumerate(zip(got, exp[field][li]), start=1):
                            self.assertTrue(close(g, e), f"{c['name']} {field} L={length} step {t}: {g} vs {e}")
                for t in range(1, c["steps"] + 1):
                    s = replay[t - 1]["summary"]
                    self.assertEqual(s["step"], exp["feedbackStep"][t - 1])
                    self.assertEqual(sorted(s["values"]), sorted(exp["summaries"][t - 1]))
                    for k, e in exp["summaries"][t - 1].items():
                        self.assertTrue(close(s["values"][k], e), f"{c['name']} {k} step {t}: {s['values'][k]} vs {e}")
                    self.assertEqual(sorted(s["stages"]), sorted(exp["stages"][t - 1]))
                    for k, e in exp["stages"][t - 1].items():
                        g = s["stages"][k]
                        self.assertEqual((g["stage"], g["streak"], g["advancedAt"]), (e["stage"], e["streak"], e["advancedAt"]))
                        self.assertTrue(close(g["signal"], e["signal"]), f"{c['name']} {k} signal step {t}")

    def test_plan_episode_with_the_tracker(self):
        c = next(c for c in VECTORS["cases"] if c["name"] == "paced_f2b_at_most")
        spec = {"maxTurns": c["maxTurns"], "totalSteps": c["steps"], "truncatedReward": 0, "horizon": c["horizon"]}
        tracker = core.FeedbackTracker(c["exprs"])
        caps = []
        for t in range(1, c["steps"] + 1):
            for o in c["trace"]:
                if o["step"] == t - 1:
                    tracker.observe(o, core.observe_clock(o["step"], 0, c["steps"]))
            caps.append(core.plan_episode(spec, c["exprs"], t, 0, feedback=tracker)["cap"])
        self.assertEqual(caps, [int(h) for h in c["expected"]["horizon"][0]])

    def test_snapshot_restore_continues_identically(self):
        c = VECTORS["cases"][2]
        a = core.FeedbackTracker(c["exprs"])
        for o in c["trace"][:8]:
            a.observe(o, core.observe_clock(o["step"], 0, c["steps"]))
        b = core.FeedbackTracker(c["exprs"])
        b.restore(json.loads(json.dumps(a.snapshot())))
        for o in c["trace"][8:]:
            a.observe(o, core.observe_clock(o["step"], 0, c["steps"]))
            b.observe(o, core.observe_clock(o["step"], 0, c["steps"]))
        self.assertEqual(a.summary(), b.summary())

    def test_without_feedback_the_tree_asks_for_a_trace(self):
        c = VECTORS["cases"][0]
        with self.assertRaises(core.ExprError):
            core.eval_ref(c["horizon"], c["exprs"], core.pacing_vars(1, c["steps"], c["maxTurns"]))


class Observation(unittest.TestCase):
    def test_hand_computed(self):
        eps = [
            {"won": True, "reward": 1.0, "horizon": 3, "prefix": 1, "student_turns": 2,
             "turns": [{"kl_sum": 2.0, "tokens": 4, "admissible": True}, {"kl_sum": 1.0, "tokens": 1, "admissible": False}]},
            {"won": False, "reward": 0.0, "horizon": 3, "prefix": 0, "student_turns": 3,
             "turns": [{"kl_sum": 0.6, "tokens": 2, "admissible": True}]},
        ]
        o = core.observation_of_episodes(7, eps)
        self.assertEqual(o["step"], 7)
        self.assertEqual(o["successRate"], 0.5)
        self.assertEqual(o["meanReward"], 0.5)
        self.assertTrue(math.isclose(o["kl"]["mean"], 3.6 / 7))          # token-weighted: (2 + 1 + 0.6) / (4 + 1 + 2)
        self.assertEqual(o["kl"]["perTurn"], [(0.5 + 0.3) / 2, 1.0])    # turn 0: mean of 2/4 and 0.6/2; turn 1: 1/1
        self.assertTrue(math.isclose(o["admissibleRate"], 2 / 3))
        self.assertEqual((o["horizon"], o["prefix"], o["studentTurns"]), (3.0, 0.5, 2.5))
        self.assertEqual(core.observation_of_episodes(1, [])["kl"], {"mean": 0.0, "perTurn": []})


class WorkflowGlue(unittest.TestCase):
    """What the generated workflow reports per episode (core.episode_report) and the step
    observation its feedback actor builds from them."""

    def test_episode_report_from_a_played_episode(self):
        import asyncio

        agent = {"name": "t", "system": "", "template": "{observation}", "templateNoHistory": "{observation}", "historyWindow": 0,
                 "historyEntry": "", "memory": {"kind": "accumulate"}, "parser": {"kind": "tags", "tag": "action", "think": False},
                 "maxResponseTokens": 8, "thinking": False, "onInvalid": {"kind": "pass"}}
        replies = iter(["<action>a</action>", "<action>zzz</action>", "<action>b</action>"])
        steps = []

        async def env_step(action):
            steps.append(action)
            return f"o{len(steps)}", (1.0 if len(steps) == 3 else 0.0), len(steps) == 3, ["a", "b"]

        async def chat(messages):
            return next(replies), object()

        rec = asyncio.run(core.run_episode(agent=agent, task="t", first_observation="o0", first_admissible=["a", "b"],
                                           prefix_actions=[], student_turns=3, capped=False, truncated_reward=0.0,
                                           env_step=env_step, chat=chat))
        self.assertEqual(rec["admissible"], [True, False, True])
        r = core.episode_report(rec, {"cap": 3, "student_turns": 3}, [0.4, 1.0, 0.2], [2, 4, 1])
        self.assertEqual(r["won"], True)
        self.assertEqual([t["admissible"] for t in r["turns"]], [True, False, True])
        o = core.observation_of_episodes(1, [r])
        self.assertTrue(math.isclose(o["kl"]["mean"], 1.6 / 7))
        self.assertTrue(math.isclose(o["admissibleRate"], 2 / 3))
        self.assertEqual(o["successRate"], 1.0)


if __name__ == "__main__":
    unittest.main()
