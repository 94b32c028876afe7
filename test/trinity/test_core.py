"""Episode mechanics and scheduling of the generated plugin (tcod_runtime/core.py), with a scripted
env and model: the same rules as runtime/rollout.ts and runtime/nodes/episode-planner.ts.
Run: python3 test/trinity/test_core.py (test/trinity/python-parity.test.ts does)."""
import asyncio
import math
import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "targets", "trinity", "plugin"))
from tcod_runtime import core  # noqa: E402

AGENT = {
    "name": "tcod", "system": "SYS", "template": "T {task} | {history} | {observation} | {admissible}",
    "templateNoHistory": "N {task} | {observation}", "historyWindow": 2,
    "historyEntry": "[{n}: {observation} -> {action}]", "memory": {"kind": "accumulate"},
    "parser": {"kind": "tags", "tag": "action", "think": True}, "maxResponseTokens": 64, "thinking": True,
    "onInvalid": {"kind": "pass"},
}


class ScriptedEnv:
    """Done after `win_after` steps of the action 'win', else never; logs every action."""

    def __init__(self, finish_on=None):
        self.actions, self.finish_on = [], finish_on

    async def step(self, action):
        self.actions.append(action)
        done = self.finish_on is not None and len(self.actions) >= self.finish_on
        return f"obs{len(self.actions)}", (1.0 if done else 0.0), done, ["a", "b"]


def run(agent=AGENT, replies=None, prefix=(), turns=3, capped=False, finish_on=None, truncated_reward=0.0):
    env = ScriptedEnv(finish_on)
    seen = []
    replies = list(replies or ["<action>go</action>"] * 10)

    async def chat(messages):
        seen.append(messages)
        text = replies.pop(0)
        return text, {"text": text}

    rec = asyncio.run(core.run_episode(
        agent=agent, task="TASK", first_observation="obs0", first_admissible=["a"], prefix_actions=list(prefix),
        student_turns=turns, capped=capped, truncated_reward=truncated_reward, env_step=env.step, chat=chat))
    return rec, env, seen


class EpisodeTest(unittest.TestCase):
    def test_f2b_cap_truncates_with_the_plans_reward(self):
        rec, env, _ = run(turns=2, capped=True, truncated_reward=-0.5)
        self.assertEqual(len(rec["turns"]), 2)
        self.assertTrue(rec["truncated"])
        self.assertEqual(rec["reward"], -0.5)
        self.assertEqual(env.actions, ["go", "go"])

    def test_uncapped_budget_exhausted_keeps_env_reward(self):
        rec, _, _ = run(turns=2, capped=False)
        self.assertFalse(rec["truncated"])
        self.assertEqual(rec["reward"], 0.0)

    def test_b2f_replay_becomes_history_and_memory_starts_empty(self):
        rec, env, seen = run(prefix=["e1", "e2", "e3"], turns=1)
        self.assertEqual(env.actions, ["e1", "e2", "e3", "go"])
        first = seen[0]
        self.assertEqual([m["role"] for m in first], ["system", "user"])
        self.assertEqual(first[1]["content"], "T TASK | [2: obs1 -> e2]\n[3: obs2 -> e3] | obs3 | 'a', 'b'")
        self.assertEqual(rec["prefix"], 3)

    def test_replay_that_finishes_yields_nothing(self):
        rec, _, seen = run(prefix=["e1", "e2"], finish_on=2)
        self.assertTrue(rec["replay_finished"])
        self.assertEqual(rec["turns"], [])
        self.assertEqual(seen, [])

    def test_done_reward_and_accumulating_memory(self):
        rec, _, seen = run(turns=5, finish_on=3)
        self.assertTrue(rec["done"])
        self.assertEqual(rec["reward"], 1.0)
        self.assertEqual(len(rec["turns"]), 3)
        self.assertEqual([m["role"] for m in seen[2]], ["system", "user", "assistant", "user", "assistant", "user"])
        self.assertEqual(seen[0][1]["content"], "N TASK | obs0")  # fewer than 2 history entries

    def test_window_memory_keeps_the_last_turns(self):
        agent = dict(AGENT, memory={"kind": "window", "turns": 1})
        _, _, seen = run(agent=agent, turns=3)
        self.assertEqual([m["role"] for m in seen[2]], ["system", "user", "assistant", "user"])

    def test_invalid_feedback_does_not_step_the_env(self):
        agent = dict(AGENT, onInvalid={"kind": "feedback", "text": "Invalid Action."})
        rec, env, seen = run(agent=agent, replies=["no tags", "<action>go</action>"], turns=2)
        self.assertEqual(env.actions, ["go"])
        self.assertEqual(rec["invalid_actions"], 1)
        self.assertIn("Invalid Action.", seen[1][-1]["content"])

    def test_invalid_end_and_pass(self):
        rec, env, _ = run(agent=dict(AGENT, onInvalid={"kind": "end"}), replies=["??"], turns=3)
        self.assertEqual((len(rec["turns"]), rec["reward"], env.actions), (1, 0.0, []))
        _, env, _ = run(agent=dict(AGENT, onInvalid={"kind": "pass"}), replies=["  raw text  "], turns=1)
        self.assertEqual(env.actions, ["raw text"])


def f2b(k, hmax, h0=1):
    c = lambda v: {"op": "const", "value": v}  # noqa: E731
    return {"op": "min", "args": [{"op": "add", "args": [c(h0), {"op": "floor", "args": [{"op": "div", "args": [{"op": "var", "name": "step"}, c(k)]}]}]}, c(hmax)]}


def b2f(k):
    c = lambda v: {"op": "const", "value": v}  # noqa: E731
    L = {"op": "var", "name": "episode.expert_length"}
    lm1 = {"op": "sub", "args": [L, c(1)]}
    return {"op": "clamp", "args": [{"op": "sub", "args": [lm1, {"op": "floor", "args": [{"op": "div", "args": [{"op": "var", "name": "step"}, c(k)]}]}]}, c(0), lm1]}


class PlanTest(unittest.TestCase):
    def test_f2b_schedule(self):
        spec = {"maxTurns": 30, "totalSteps": 250, "horizon": {"expr": "h"}}
        ex = {"h": {"tree": f2b(6, 30)}}
        self.assertEqual(core.plan_episode(spec, ex, 13, 0), {"cap": 3, "prefix": 0, "student_turns": 3, "capped": True})
        self.assertEqual(core.plan_episode(spec, ex, 250, 0), {"cap": 30, "prefix": 0, "student_turns": 30, "capped": False})

    def test_b2f_schedule(self):
        spec = {"maxTurns": 30, "totalSteps": 250, "prefix": {"expr": "p"}}
        ex = {"p": {"tree": b2f(5)}}
        self.assertEqual(core.plan_episode(spec, ex, 12, 8), {"cap": 30, "prefix": 5, "student_turns": 25, "capped": False})
        self.assertEqual(core.plan_episode(spec, ex, 12, 0)["prefix"], 0)

    def test_adaptive_cap_and_bad_horizon(self):
        spec = {"maxTurns": 30, "totalSteps": 250}
        self.assertEqual(core.plan_episode(spec, {}, 5, 0, adaptive_cap=4)["student_turns"], 4)
        bad = {"maxTurns": 30, "totalSteps": 250, "horizon": {"expr": "h"}}
        with self.assertRaisesRegex(core.TcodError, "TC7005: the expression h evaluates to 0.5 at step 3; horizon must be ≥ 1 turn"):
            core.plan_episode(bad, {"h": {"tree": {"op": "const", "value": 0.5}}}, 3, 0)

    def test_parse_step_and_ids(self):
        self.assertEqual(core.parse_step("12/alfworld_eval_seen"), 12)
        self.assertEqual(core.parse_step(7), 7)
        self.assertEqual(core.split_unique_id("3/1/0/2/ab12cd"), ("3/1/0", "3/1", 2))
        self.assertEqual(core.ordered_rows(["3/0/0/1/x", "3/1/0/0/x", "3/0/0/0/x"]), [2, 0, 1])
        self.assertTrue(math.isnan(core.pointwise("div", [0.0, 0.0])))


if __name__ == "__main__":
    unittest.main()
