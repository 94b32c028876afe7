/**
 * A run against a broken AgentGym server (textcraft routes, served here on 127.0.0.1): whatever the
 * server does, the run ends — completed, or failed with a checkpoint and a message naming the env and
 * the server's URL, coded TC7016 — never a hang, never an internal error escaping the engine.
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import { existsSync, mkdtempSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { composeRuntime } from "../../bin/compose.js";
import { runPlan } from "../../runtime/engine.js";
import { agentGymFromSpec } from "../../runtime/envs/agentgym/index.js";
import { readMetrics, type TrainRowMetrics } from "../../runtime/metrics.js";
import { ScriptedStudent, ScriptedTeacher } from "../runtime/doubles.js";
import { testPlan } from "../runtime/plans.js";

composeRuntime();

type Step = (body: Record<string, unknown>, res: ServerResponse, n: number) => unknown;
let servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.map((s) => new Promise<void>((r) => { s.closeAllConnections(); s.close(() => r()); })));
  servers = [];
});

/** A TextCraft server: /create → fresh ids, /reset → a goal, /step as `step` says (JSON value, or it answers itself). */
async function textcraft(step: Step): Promise<{ url: string; server: Server }> {
  let ids = 0;
  let steps = 0;
  const server = createServer((req, res) => {
    let data = "";
    req.on("data", (c: Buffer) => { data += c.toString(); });
    req.on("end", () => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      const body = data ? JSON.parse(data) as Record<string, unknown> : {};
      const send = (v: unknown, status = 200) => { if (!res.headersSent) { res.writeHead(status, { "content-type": "application/json" }); res.end(JSON.stringify(v)); } };
      if (path === "/create") return send({ id: ids++ });
      if (path === "/reset") return send({ id: body.id, observation: "Crafting commands: ...\nGoal: craft stick." });
      if (path === "/close") return send("closed");
      if (path === "/step") { const v = step(body, res, ++steps); if (v !== undefined) send(v); return; }
      send({ detail: "Not Found" }, 404);
    });
  });
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

function run(url: string, maxTurns = 4) {
  const runDir = mkdtempSync(join(tmpdir(), "tcod-agentgym-run-"));
  const plan = testPlan({ steps: 2, tasksPerStep: 2, maxTurns, pool: 2 });
  const student = new ScriptedStudent();
  const env = () => agentGymFromSpec("textcraft", { kind: "textcraft", split: "train", maxTurns, pool: 2, server: url, params: { ranges: { train: [0, 4] }, step_timeout_s: 2 } });
  const res = runPlan(plan, {
    runDir, faults: { maxRetries: 2, backoffMs: 0 },
    models: async () => ({ student, teacher: new ScriptedTeacher(), tokenizer: student.tokenizer }),
    envFactory: env,
  });
  return { runDir, res };
}

describe("a run against a broken AgentGym server", () => {
  it("an episode that never ends is cut at max turns; the run completes", async () => {
    const { url } = await textcraft(() => ({ observation: "Nothing happens.", reward: 0, done: false }));
    const { runDir, res } = run(url, 3);
    expect((await res).status).toBe("completed");
    const rows = readMetrics(join(runDir, "metrics.jsonl")).filter((r): r is TrainRowMetrics => r.kind === "train");
    expect(rows).toHaveLength(2);
    for (const r of rows) expect(r.turns).toBe(2 * 3); // both episodes of the step, cut at 3 turns each
  });

  it("a server that dies mid-run: the run fails with a checkpoint and a message naming the env and URL", async () => {
    const fake = await textcraft((_b, res, n) => {
      if (n >= 3) { fake.server.closeAllConnections(); fake.server.close(); res.destroy(); return undefined; }
      return { observation: "ok", reward: 0, done: false };
    });
    const { runDir, res } = run(fake.url);
    const r = await res;
    expect(r.status).toBe("failed");
    expect(r.code).toBe("TC7016"); // `tcod run error TC7016: …`
    expect(r.message).toContain(`env textcraft: textcraft server ${fake.url}`);
    expect(r.message).toContain(`--resume ${runDir}`);
    expect(existsSync(join(runDir, "checkpoint", "state.json"))).toBe(true);
  });

  it("an answer retrying cannot mend (HTTP 404 for the env's id, a redirect) stops the run the same way, not as an internal error", async () => {
    for (const answer of [(res: ServerResponse) => { res.writeHead(404, { "content-type": "application/json" }); res.end('{"detail":"env 0 not found"}'); },
      (res: ServerResponse) => { res.writeHead(302, { location: "http://elsewhere.invalid/step" }); res.end(); }]) {
      const { url } = await textcraft((_b, res) => { answer(res); return undefined; });
      const { runDir, res } = run(url);
      const r = await res;
      expect(r.status).toBe("failed");
      expect(r.code).toBe("TC7016");
      expect(r.message).toMatch(new RegExp(`env textcraft: textcraft server ${url.replace(/\./g, "\\.")}: /step answered HTTP (404|302)`));
      expect(existsSync(join(runDir, "checkpoint", "state.json"))).toBe(true);
    }
  });
});
