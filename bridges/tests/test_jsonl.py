"""The JSON-lines loop (tcod_bridges/jsonl.py) over a real subprocess, with a session that needs no Java."""
import json
import os
import subprocess
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

SERVER = r'''
import sys
from tcod_bridges.jsonl import ConfigError, EnvFault, serve

class S:
    closed = False
    def close(self):
        sys.stderr.write("closed\n")

def ops(s):
    def boom(_a):
        raise RuntimeError("simulator crashed")
    def bad(_a):
        raise ConfigError("no task 'x'", "valid: a, b")
    def done(_a):
        raise EnvFault("step after done", retryable=False)
    def nan(_a):
        return {"reward": float("nan")}
    def surrogate(_a):
        return {"observation": "a\udc80b"}
    def echo(a):
        print("noise from a library")  # must not reach the protocol stream
        return a
    return {"echo": echo, "boom": boom, "bad": bad, "done": done, "nan": nan, "surrogate": surrogate}

mode = sys.argv[1]
def start():
    if mode == "fatal":
        raise ConfigError("package missing", "pip install it")
    return S()
serve("fake", start, ops, lambda: {"fake": "1"})
'''


def run(mode, lines):
    env = dict(os.environ, PYTHONPATH=ROOT)
    p = subprocess.run([sys.executable, "-c", SERVER, mode], input="\n".join(lines) + "\n", capture_output=True,
                       text=True, env=env, timeout=60)
    return [json.loads(l) for l in p.stdout.splitlines()], p


class JsonLinesTest(unittest.TestCase):
    def test_ready_replies_errors_and_close(self):
        out, p = run("ok", [
            json.dumps({"id": 1, "op": "echo", "args": {"x": 1}}),
            "not json",
            json.dumps({"id": 2, "op": "bad"}),
            json.dumps({"id": 3, "op": "done"}),
            json.dumps({"id": 4, "op": "boom"}),
            json.dumps({"id": 5, "op": "nope"}),
            json.dumps({"id": 6, "op": "close"}),
            json.dumps({"id": 7, "op": "echo"}),
        ])
        self.assertEqual(out[0]["ready"], True)
        self.assertEqual(out[0]["versions"], {"fake": "1"})
        self.assertEqual(out[1], {"id": 1, "ok": True, "result": {"x": 1}})
        self.assertEqual(out[2]["error"]["kind"], "protocol")
        self.assertEqual(out[3]["error"], {"kind": "config", "message": "no task 'x'", "hint": "valid: a, b"})
        self.assertEqual(out[4]["error"], {"kind": "env", "message": "step after done", "retryable": False})
        self.assertEqual(out[5]["error"]["message"], "RuntimeError: simulator crashed")
        self.assertTrue(out[5]["error"]["retryable"])
        self.assertIn("unknown op 'nope'", out[6]["error"]["message"])
        self.assertEqual(out[7], {"id": 6, "ok": True, "result": True})
        self.assertEqual(len(out), 8)  # nothing after close
        self.assertIn("noise from a library", p.stderr)
        self.assertIn("closed", p.stderr)

    def test_values_json_cannot_carry(self):
        # NaN would go out as the bare word NaN (not JSON); a lone surrogate cannot be encoded as UTF-8.
        out, _p = run("ok", [json.dumps({"id": 1, "op": "nan"}), json.dumps({"id": 2, "op": "surrogate"})])
        self.assertEqual(out[1]["id"], 1)
        self.assertEqual(out[1]["error"]["kind"], "env")
        self.assertIn("Out of range float values are not JSON compliant", out[1]["error"]["message"])
        self.assertEqual(out[2], {"id": 2, "ok": True, "result": {"observation": "a\udc80b"}})

    def test_fatal_start(self):
        out, p = run("fatal", [])
        self.assertEqual(out, [{"fatal": "package missing", "hint": "pip install it"}])
        self.assertEqual(p.returncode, 3)


class TaskIdTest(unittest.TestCase):
    def test_scienceworld_ids(self):
        sys.path.insert(0, ROOT)
        from tcod_bridges.scienceworld_bridge import parse_task_id
        from tcod_bridges.jsonl import ConfigError
        self.assertEqual(parse_task_id("boil:3"), ("boil", 3))
        self.assertEqual(parse_task_id("1-1:0"), ("1-1", 0))
        for bad in ("boil", "boil:x", ":3"):
            with self.assertRaises(ConfigError):
                parse_task_id(bad)


if __name__ == "__main__":
    unittest.main()
