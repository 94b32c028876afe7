/**
 * The generated plugin's Python computes what the TypeScript runtime computes: the shared signal
 * vectors (test/vectors/signals.json) and, on seeded random inputs, the expression evaluator, the
 * agent format, the adaptive-depth rule and the pacing formulas. Pure Python: no torch, no Trinity.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkAction, semanticsOf } from "../../plan/env-semantics.js";
import { describe, expect, it } from "vitest";
import { evalScalar, evalTurns, type ExprTree, type TurnBatch } from "../../plan/expr.js";
import { compactText, parseAction, renderUserMessage } from "../../runtime/agent-format.js";
import { webshopActions, webshopTaskOf } from "../../runtime/envs/agentgym/observation.js";
import { coverageCap, divergenceCap, nextAdaptiveCap, probeProfile } from "../../runtime/adaptive-depth.js";
import { lossWeights } from "../../runtime/signals/aggregate.js";
import { layoutFromRows } from "../../runtime/signals/layout.js";
import { opdAdvantages } from "../../runtime/signals/opd.js";
import { grpoAdvantages } from "../../runtime/signals/grpo.js";
import { blendAdvantages, weightByTurn } from "../../runtime/signals/mixture.js";
import { tdurWeights } from "../../runtime/signals/tdur.js";
import { evalRef } from "../../plan/expr.js";
import { exportTrinity } from "../../targets/trinity/export.js";
import { readTemplates } from "../../targets/trinity/plugin/generate.js";
import { atodPlan } from "./plans.js";
import { officialB2f, officialF2b } from "../../targets/trinity/plugin/recognise.js";
import { b2fTree, f2bTree, TCOD_AGENT, tdurTree } from "./plans.js";
import { rng } from "../helpers/prng.js";

const SCRIPT = "test/trinity/py_parity.py";
const python = spawnSync("python3", ["--version"]).status === 0;
const run = python || process.env.CI ? it : it.skip;

type Call = { fn: string; args: unknown[] };
function rpc(calls: Call[]): unknown[] {
  const enc = (x: unknown): unknown =>
    typeof x === "number" ? (Number.isNaN(x) ? "NaN" : x === Infinity ? "Infinity" : x === -Infinity ? "-Infinity" : x)
      : Array.isArray(x) ? x.map(enc)
      : x && typeof x === "object" ? Object.fromEntries(Object.entries(x).map(([k, v]) => [k, enc(v)])) : x;
  const r = spawnSync("python3", [SCRIPT, "rpc"], { input: JSON.stringify(calls.map((c) => ({ ...c, args: enc(c.args) }))), encoding: "utf8", maxBuffer: 1 << 26 });
  if (r.status !== 0) throw new Error(`py_parity.py rpc failed: ${r.stderr}`);
  const dec = (x: unknown): unknown =>
    x === "NaN" ? NaN : x === "Infinity" ? Infinity : x === "-Infinity" ? -Infinity
      : Array.isArray(x) ? x.map(dec) : x && typeof x === "object" ? Object.fromEntries(Object.entries(x).map(([k, v]) => [k, dec(v)])) : x;
  return (JSON.parse(r.stdout) as { ok?: unknown; error?: string }[]).map((o) => {
    if (o.error) throw new Error(o.error);
    return dec(o.ok);
  });
}


const SCALAR_OPS = ["add", "sub", "mul", "div", "neg", "min", "max", "clamp", "floor", "ceil", "round", "abs", "exp", "log", "sqrt", "pow", "cos", "sin", "lt", "le", "gt", "ge", "eq", "ne", "and", "or", "not", "if"] as const;
const ARITY: Record<string, number> = { neg: 1, floor: 1, ceil: 1, round: 1, abs: 1, exp: 1, log: 1, sqrt: 1, cos: 1, sin: 1, not: 1, clamp: 3, if: 3 };
function randomTree(r: () => number, depth: number, vars: string[]): ExprTree {
  if (depth === 0 || r() < 0.25) {
    if (r() < 0.5) return { op: "var", name: vars[Math.floor(r() * vars.length)]! } as ExprTree;
    const vals = [0, 1, -1, 0.5, 2.5, -2.5, 3, 1e-3, 6];
    return { op: "const", value: vals[Math.floor(r() * vals.length)]! };
  }
  const op = SCALAR_OPS[Math.floor(r() * SCALAR_OPS.length)]!;
  const n = ARITY[op] ?? 2;
  return { op, args: Array.from({ length: n }, () => randomTree(r, depth - 1, vars)) } as ExprTree;
}

const same = (a: number, b: number) => (Number.isNaN(a) && Number.isNaN(b)) || a === b || Math.abs(a - b) <= 1e-9 * Math.max(1, Math.abs(b));

describe("generated Python ≡ TypeScript runtime", () => {
  run("matches the shared signal vectors on Trinity's per-turn rows (opd, grpo, turn stats, T-DUR, ATOD blend, loss weights)", () => {
    const r = spawnSync("python3", [SCRIPT, "vectors", "test/vectors/signals.json"], { encoding: "utf8" });
    const report = JSON.parse(r.stdout) as { checked: string[]; failures: unknown[] };
    expect(report.failures).toEqual([]);
    expect(r.status).toBe(0);
    expect(report.checked.length).toBeGreaterThanOrEqual(18);
    expect(report.checked).toContain("trinity_per_turn_rows: final_advantages (plugin advantages())");
  });

  run("per-env episode semantics: the shared episode vectors (test/vectors/episodes.json) through core.run_episode", () => {
    const dir = mkdtempSync(join(tmpdir(), "tcod-sem-"));
    const semantics = join(dir, "semantics.json");
    // What the exporter writes into spec.json `workflow.semantics`, per env kind.
    writeFileSync(semantics, JSON.stringify(Object.fromEntries(["alfworld", "webshop", "scienceworld"].map((k) => [k, semanticsOf(k)]))));
    const r = spawnSync("python3", [SCRIPT, "episodes", "test/vectors/episodes.json", semantics], { encoding: "utf8" });
    const report = JSON.parse(r.stdout) as { checked: string[]; failures: unknown[] };
    expect(report.failures).toEqual([]);
    expect(r.status).toBe(0);
    expect(report.checked.length).toBeGreaterThanOrEqual(6);
    expect(report.checked.some((n) => n.startsWith("scienceworld: the official prompt"))).toBe(true);
    expect(report.checked.filter((n) => n.startsWith("parse ")).length).toBeGreaterThanOrEqual(16);
  });

  run("WebShop's official prompt pieces: compactText ≡ core.compact_text, webshopActions ≡ core.webshop_actions, and the plugin reads the task off a text_rich first page as the official workflows do", () => {
    const texts = ["", "  one  ", "a\n\n  b \r\nc\rd", "\n[button] Search [button_]\n", "x\u2028y\x85z\x1c w", "tab\tin\u00a0\u3000line\u00a0\n\ufeffbom\ufeff", "\f\v"];
    expect(rpc(texts.map((t) => ({ fn: "compact_text", args: [t] })))).toEqual(texts.map(compactText));
    const pages = [{ has_search_bar: true, clickables: ["search"] }, { has_search_bar: false, clickables: ["back to search", "< prev", "buy now"] }, {}];
    expect(rpc(pages.map((a) => ({ fn: "webshop_actions", args: [a] })))).toEqual(pages.map(webshopActions));
    // WebAgentTextEnv(observation_mode="text_rich")'s first page; TCOD webshop/utils.py
    // _extract_task_description takes the lines after "Instruction:" up to the first "[button]".
    const richPage = "\nWebShop \n\nInstruction:  \n\ni need red shoes, and price lower than 50.00 dollars \n[button] Search [button_]";
    expect(rpc([
      { fn: "webshop_task", args: [richPage] },
      { fn: "webshop_task", args: ["WebShop [SEP] Instruction: [SEP] red shoes [SEP] Search"] },
      { fn: "webshop_task", args: ["no instruction\n here"] },
    ])).toEqual(["i need red shoes, and price lower than 50.00 dollars", "red shoes", "no instruction here"]);
    // tcod run's WebShop reads the task off the same rich page (the AgentGym adapter rebuilds it:
    // runtime/envs/agentgym/observation.ts webshopTaskOf) as the plugin does, on every recorded page.
    const recorded = (JSON.parse(readFileSync("test/fixtures/envs/webshop_pages.json", "utf8")) as { steps: { text_rich: string }[] }).steps.map((x) => x.text_rich);
    const rich: string[] = [richPage, "no instruction\n here", ...recorded];
    expect(rpc(rich.map((t) => ({ fn: "webshop_task", args: [t] })))).toEqual(rich.map(webshopTaskOf));
  });

  run("evaluates 400 random step/episode-level trees like plan/expr.ts evalScalar", () => {
    const r = rng(7);
    const vars = ["step", "total_steps", "episode.expert_length", "episode.max_turns"];
    const cases = Array.from({ length: 400 }, () => {
      const tree = randomTree(r, 4, vars);
      const v = { step: 1 + Math.floor(r() * 250), total_steps: 250, "episode.expert_length": Math.floor(r() * 31), "episode.max_turns": 30 };
      return { tree, v };
    });
    const got = rpc(cases.map((c) => ({ fn: "eval_scalar", args: [c.tree, c.v] }))) as number[];
    cases.forEach((c, i) => {
      const want = evalScalar(c.tree, c.v);
      if (!same(got[i]!, want)) throw new Error(`tree ${JSON.stringify(c.tree)} at ${JSON.stringify(c.v)}: python ${got[i]}, ts ${want}`);
    });
  });

  run("evaluates turn-level trees (T-DUR, reductions) like evalTurns", () => {
    const r = rng(11);
    const n = 13;
    const episodeOf = Int32Array.from({ length: n }, (_, i) => Math.floor(i / 4));
    const col = () => Float64Array.from({ length: n }, () => r() * 3 - 1);
    const batch: TurnBatch = { n, episodeOf, vars: { "turn.kl": col(), "turn.entropy": col(), "episode.turns": Float64Array.from(episodeOf, (e) => (e < 3 ? 4 : 1)), "turn.index": Float64Array.from({ length: n }, (_, i) => i % 4) }, scalars: { step: 17, total_steps: 100 } };
    const trees: ExprTree[] = [
      tdurTree(), tdurTree(0.3, 2, 0.5),
      { op: "episode_mean", args: [{ op: "var", name: "turn.kl" }] },
      { op: "batch_mean", args: [{ op: "mul", args: [{ op: "var", name: "turn.index" }, { op: "var", name: "step" }] }] },
      { op: "if", args: [{ op: "gt", args: [{ op: "zscore", args: [{ op: "var", name: "turn.entropy" }] }, { op: "const", value: 0 }] }, { op: "const", value: 2 }, { op: "const", value: 0.5 }] },
    ];
    const plain = { episodeOf: [...episodeOf], vars: Object.fromEntries(Object.entries(batch.vars).map(([k, v]) => [k, [...v!]])), scalars: batch.scalars };
    const got = rpc(trees.map((t) => ({ fn: "eval_turns", args: [t, plain] }))) as number[][];
    trees.forEach((t, i) => {
      const want = evalTurns(t, batch);
      want.forEach((w, j) => expect(same(got[i]![j]!, w), `tree ${i} turn ${j}: ${got[i]![j]} vs ${w}`).toBe(true));
    });
  });

  run("pacing: horizon_at / prefix_at of the stdlib trees are the official TCOD formulas", () => {
    const spec = (extra: object) => ({ maxTurns: 30, totalSteps: 250, ...extra });
    const calls: Call[] = [];
    const want: number[] = [];
    for (const t of [1, 5, 6, 7, 59, 60, 150, 250]) {
      calls.push({ fn: "horizon_at", args: [spec({ horizon: { expr: "h" } }), { h: { tree: f2bTree(6, 30) } }, t] });
      want.push(officialF2b(t, 6, 30));
      for (const L of [0, 1, 4, 14, 30]) {
        calls.push({ fn: "prefix_at", args: [spec({ prefix: { expr: "p" } }), { p: { tree: b2fTree(5) } }, t, L] });
        want.push(officialB2f(t, 5, L));
      }
    }
    expect(rpc(calls)).toEqual(want);
  });

  run("agent format: prompts and parsed actions equal runtime/agent-format.ts", () => {
    const history = [["You are in a room.", "go to desk 1"], ["On the desk 1 you see a cd 1.", "take cd 1 from desk 1"], ["You pick up the cd 1.", "go to dresser 1"]] as const;
    const calls: Call[] = [];
    const want: (string | null)[] = [];
    for (let h = 0; h <= 3; h++) {
      const hist = history.slice(0, h);
      calls.push({ fn: "render_prompt", args: [TCOD_AGENT, "put a cd in dresser", hist, "You arrive at dresser 1.", ["go to desk 1", "look"]] });
      want.push(renderUserMessage(TCOD_AGENT, { task: "put a cd in dresser", history: hist.map(([observation, action]) => ({ observation, action })), observation: "You arrive at dresser 1.", admissible: ["go to desk 1", "look"] }));
    }
    // {step_next} (std/agent tcod_format: "You are now at step {step_next}") and ScienceWorld's compact
    // action list ({action_templates}, {objects}: std/agent scienceworld_format).
    const compactAgent = { ...TCOD_AGENT, template: "{step}→{step_next} {history} [{action_templates}] [{objects}] [{admissible}]", templateNoHistory: "{step_next}: [{action_templates}] / [{objects}]" };
    for (let h = 0; h <= 3; h++) {
      const hist = history.slice(0, h);
      calls.push({ fn: "render_prompt", args: [compactAgent, "boil water", hist, "You are in the kitchen.", ["look around"], ["open OBJ", "go to LOC"], ["oven", "the kitchen"]] });
      want.push(renderUserMessage(compactAgent, { task: "boil water", history: hist.map(([observation, action]) => ({ observation, action })), observation: "You are in the kitchen.", admissible: ["look around"], actionTemplates: ["open OBJ", "go to LOC"], objects: ["oven", "the kitchen"] }));
    }
    // WebShop's official prompt (std/agent webshop_format): the actions unquoted one per line
    // ({available_actions}), history observations on one line ({observation_compact}).
    const shopAgent = { ...TCOD_AGENT, template: "{step}: {history}\n[\n{available_actions}\n]", historyEntry: "[{n} '{observation_compact}' / '{observation}' '{action}']" };
    const pages = [["WebShop\nInstruction:\n red shoes \n[button] Search [button_]", "search[red shoes]"], ["[button] B01 [button_]\n\n  Red Shoe\r\n$39.99", "click[b01]"], ["Thank you", "click[buy now]"]] as const;
    for (let h = 0; h <= 3; h++) {
      const hist = pages.slice(0, h);
      calls.push({ fn: "render_prompt", args: [shopAgent, "red shoes", hist, "Page 2", ["search[<query>]", "click[search]"]] });
      want.push(renderUserMessage(shopAgent, { task: "red shoes", history: hist.map(([observation, action]) => ({ observation, action })), observation: "Page 2", admissible: ["search[<query>]", "click[search]"] }));
    }
    const react = { ...TCOD_AGENT, parser: { kind: "react" as const, prefix: "Action:" } };
    const raw = { ...TCOD_AGENT, parser: { kind: "raw" as const } };
    // action_pick "first": the official TCOD workflows' parse_action.
    const first = { ...TCOD_AGENT, actionPick: "first" as const };
    const reactFirst = { ...react, actionPick: "first" as const };
    for (const [fmt, text] of [[TCOD_AGENT, "<think>maybe <action>x</action></think><action> go to desk 1 </action>"], [TCOD_AGENT, "<action>unclosed"], [TCOD_AGENT, "<action>  </action>"],
      [react, "Thought: hmm\nAction: open drawer 1\nmore"], [react, "no action here"], [raw, "  look  "], [raw, "   "],
      [first, "<think>maybe <action>x</action></think><action> go to desk 1 </action>"], [first, "<action>unclosed"], [first, "<action>  </action>"], [first, "a<action>b<action>c</action>"],
      [first, "</action><action>\u3000look\x1c</action>"], [first, "<action>\ufeffx\ufeff</action>"], [reactFirst, "Action: look\nAction: open drawer 1"], [reactFirst, "none"],
      // "last", react and raw trim as JavaScript does (\ufeff yes; \x1c and \x85 no), on both sides.
      [TCOD_AGENT, "<action>\ufeffx\x85</action>"], [raw, "\x1c look \ufeff"], [react, "Action: \ufeffgo\x1f"]] as const) {
      calls.push({ fn: "parse_action", args: [fmt, text] });
      want.push(parseAction(fmt, text));
    }
    // WebShop's validate_action pattern: Python's `.` stops only at \n, so "\r" and "\u2028" stay inside.
    const shop = semanticsOf("webshop");
    for (const a of ["click[a\rb]", "click[x\u2028]", "sea\u2029rch[q]", "click[b01]", "click[a\nb]"]) {
      calls.push({ fn: "check_action", args: [shop, a, ["click[a\rb]", "click[x\u2028]", "click[b01]"]] });
      want.push(checkAction(shop, a, ["click[a\rb]", "click[x\u2028]", "click[b01]"]));
    }
    expect(rpc(calls)).toEqual(want);
  });

  run("TurnOPD adaptive depth: profile, coverage, divergence and the next cap equal runtime/adaptive-depth.ts", () => {
    const r = rng(3);
    const calls: Call[] = [];
    const want: unknown[] = [];
    for (let i = 0; i < 40; i++) {
      const episodes = Array.from({ length: 1 + Math.floor(r() * 8) }, () => Array.from({ length: 1 + Math.floor(r() * 12) }, () => r() * (r() < 0.2 ? 5 : 0.5) - 0.05));
      const profile = probeProfile(episodes.map((turnKl) => ({ turnKl })));
      calls.push({ fn: "probe_profile", args: [episodes] });
      want.push(profile);
      const keep = [0.5, 0.9, 1][i % 3]!;
      const ratio = [1.5, 2, 4][i % 3]!;
      calls.push({ fn: "coverage_cap", args: [profile.running, keep] }, { fn: "divergence_cap", args: [profile.kl, ratio] });
      want.push(coverageCap(profile.running, keep), divergenceCap(profile.kl, ratio));
      const rule = { probeEvery: 10, probeEpisodes: episodes.length, rule: i % 2 ? { kind: "coverage" as const, keep } : { kind: "divergence" as const, ratio }, initial: 3, min: 2 };
      const last = 1 + Math.floor(r() * 12);
      calls.push({ fn: "next_adaptive_cap", args: [rule, profile, last, 10] });
      want.push(nextAdaptiveCap(rule, profile, last, 10));
    }
    const got = rpc(calls);
    got.forEach((g, i) => expect(JSON.stringify(g).replace(/"NaN"/g, "null"), `call ${i} ${calls[i]!.fn}`).toBe(JSON.stringify(want[i]).replace(/NaN/g, "null")));
  });

  run("episode mechanics and scheduling (test/trinity/test_core.py: f2b cap, b2f replay and hand-off, invalid replies, memory)", () => {
    const r = spawnSync("python3", ["test/trinity/test_core.py"], { encoding: "utf8" });
    expect(r.stderr).toMatch(/Ran 1\d tests[\s\S]*\nOK\n?$/);
    expect(r.status).toBe(0);
  });

  run("the exported ATOD plugin's advantages equal the runtime signals (κ/ρ schedules, GRPO, T-DUR) at several steps", () => {
    const e = exportTrinity(atodPlan(), { target: "tcod-fork" });
    // The plugin ships the template core verbatim, so the RPC runner's core is the plugin's.
    expect(e.plugin!["tcod_runtime/core.py"]).toBe(readTemplates()["tcod_runtime/core.py"]);
    const spec = JSON.parse(e.plugin!["tcod_runtime/spec.json"]!) as { advantage: { terms: { coef: { expr: string } }[] }; exprs: Record<string, never> };
    const r = rng(5);
    // 3 tasks × 2 rollouts, 1–4 turns each, 1–5 tokens per turn.
    const episodeOfRow: number[] = [];
    const rows: { s: number[]; t: number[]; m: number[] }[] = [];
    const rewards = [1, 0, 1, 1, 0, 0.5];
    for (let ep = 0; ep < 6; ep++) {
      for (let k = 0, n = 1 + Math.floor(r() * 4); k < n; k++) {
        const len = 1 + Math.floor(r() * 5);
        rows.push({ s: Array.from({ length: len }, () => -3 * r()), t: Array.from({ length: len }, () => -3 * r()), m: Array(len).fill(1) });
        episodeOfRow.push(ep);
      }
    }
    const groupOf = { 0: 0, 1: 0, 2: 1, 3: 1, 4: 2, 5: 2 };
    const rewardOf = Object.fromEntries(rewards.map((x, i) => [i, x]));
    for (const step of [1, 40, 150, 250]) {
      const [got] = rpc([{ fn: "advantages", args: [spec.advantage, spec.exprs, step, 250, rows.map((x) => x.s), rows.map((x) => x.t), rows.map((x) => x.m), episodeOfRow, groupOf, rewardOf] }]) as { advantages: number[][]; loss_agg_mode: string }[];
      const layout = layoutFromRows(rows.map((x) => ({ mask: x.m })));
      const flat = (k: "s" | "t") => Float64Array.from(rows.flatMap((x) => x[k]));
      const vars = { step, total_steps: 250 };
      const kappa = evalRef(atodPlan().graph.nodes.find((n) => n.kind === "Advantage")!.params.terms[0]!.coef as never, atodPlan().exprs, vars);
      const rho = evalRef({ expr: "rho" }, atodPlan().exprs, vars);
      const opd = opdAdvantages(layout, flat("s"), flat("t"));
      const grpo = grpoAdvantages(layout, Float64Array.from(rewards), Int32Array.from([0, 0, 1, 1, 2, 2]), Int32Array.from(episodeOfRow));
      const D = Float64Array.from(rows.map((x) => x.s.reduce((a, v, i) => a + v - x.t[i]!, 0) / x.s.length));
      const U = Float64Array.from(rows.map((x) => -x.s.reduce((a, v) => a + v, 0) / x.s.length));
      const w = tdurWeights(D, U, Int32Array.from(episodeOfRow));
      const tokenW = Float64Array.from(rows.flatMap((x, i) => x.m.map(() => w[i]!)));
      const want = weightByTurn(blendAdvantages(opd, grpo, kappa, rho), tokenW);
      const gotFlat = got!.advantages.flat();
      expect(gotFlat).toHaveLength(want.length);
      gotFlat.forEach((g, i) => expect(same(g, want[i]!), `step ${step} token ${i}: ${g} vs ${want[i]}`).toBe(true));
      expect(got!.loss_agg_mode).toBe("token-mean");
    }
  });

  run("progressive aggregation folded into advantages: token_mean(s·A) has the weights of lossWeights(progressive)", () => {
    const masks = [[1, 1, 1], [1, 1], [1, 1, 1, 1, 1, 1], [1]];
    const [scale] = rpc([{ fn: "token_mean_rescale", args: [masks, "progressive", 0.3] }]) as number[][][];
    const n = masks.flat().length;
    const want = lossWeights(layoutFromRows(masks.map((mask) => ({ mask }))), { kind: "progressive", weight: 0.3 });
    const got = scale!.flat().map((s) => s / n);
    got.forEach((g, i) => expect(same(g, want[i]!)).toBe(true));
  });
});
