/**
 * `tcod explain FILE CURRICULUM --graph` and `tcod plot FILE --graph`: the plan/2 execution graph as
 * text, Mermaid and SVG (plan/graph-view.ts), checked against the compiled plan's own nodes and edges.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { compileFile } from "../../compiler/index.js";
import { graphMermaid, graphSvg, graphText } from "../../plan/graph-view.js";
import type { Plan } from "../../plan/schema.js";

const ROOT = resolve(import.meta.dirname, "../..");
const tcod = (...args: string[]) => spawnSync(process.execPath, [join(ROOT, "bin/tcod.mjs"), ...args], { cwd: ROOT, encoding: "utf8" });
const planOf = (file: string): Plan => compileFile(join(ROOT, file)).plans[0]!.plan;

describe("graph views (plan/graph-view.ts)", () => {
  const plan = planOf("examples/texthouse/turnopd.tcod");

  it("text: every node with its kind, phase and ports; every edge with its data type; clock edges marked", () => {
    const text = graphText(plan);
    expect(text.split("\n")[0]).toBe(`graph of texthouse_turnopd (tcod.plan/2): ${plan.graph.nodes.length} nodes, ${plan.graph.edges.length} edges`);
    for (const n of plan.graph.nodes) expect(text).toMatch(new RegExp(`^  ${n.id} +${n.kind} \\(`, "m"));
    for (const e of plan.graph.edges) expect(text).toContain(`${e.from} → ${e.to}`);
    expect(text).toMatch(/^ {2}sync\.policy → rollout\.policy +Weights {2}\(through the step clock: next step\)$/m);
    expect(text).toMatch(/^ {2}depth\.depth → planner\.depth +DepthCap$/m);
    expect(text).toContain("demos: Demonstrations (optional, unconnected)");
  });

  it("Mermaid: one box per node in its phase's subgraph, one arrow per edge, dashed through the clock", () => {
    const m = graphMermaid(plan);
    expect(m.startsWith("flowchart LR\n")).toBe(true);
    expect(m.match(/^ {4}n\d+\["/gm)).toHaveLength(plan.graph.nodes.length);
    expect(m.match(/ --> | \.-> /g)).toHaveLength(plan.graph.edges.length);
    expect(m.match(/ \.-> /g)).toHaveLength(plan.graph.edges.filter((e) => e.clock).length);
    expect(m).toMatch(/subgraph explore[\s\S]*subgraph learn[\s\S]*subgraph clock/);
  });

  it("SVG: a rect per node, a path per edge, ids escaped; an edited graph draws what it says", () => {
    const svg = graphSvg(plan);
    expect(svg.match(/<rect /g)).toHaveLength(plan.graph.nodes.length);
    expect(svg.match(/marker-end="url\(#arrow\)"/g)).toHaveLength(plan.graph.edges.length);
    expect(svg.match(/stroke-dasharray/g)).toHaveLength(plan.graph.edges.filter((e) => e.clock).length);
    const edited: Plan = { ...plan, name: "a<b", graph: { nodes: plan.graph.nodes.filter((n) => n.id !== "checkpoint"), edges: plan.graph.edges.slice(1) } };
    const svg2 = graphSvg(edited);
    expect(svg2.match(/<rect /g)).toHaveLength(plan.graph.nodes.length - 1);
    expect(svg2.match(/marker-end/g)).toHaveLength(plan.graph.edges.length - 1);
    expect(svg2).toContain("a&lt;b");
    expect(graphText(edited)).not.toContain("tasks.tasks → planner.tasks");
  });
});

describe("the CLI", () => {
  it("explain --graph prints the listing; --json gives nodes and edges", () => {
    const r = tcod("explain", "examples/texthouse/tcod-f2b.tcod", "texthouse_tcod_f2b", "--graph");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("graph of texthouse_tcod_f2b (tcod.plan/2)");
    expect(r.stdout).toContain("planner.plans → rollout.plans");
    const j = tcod("explain", "examples/texthouse/tcod-f2b.tcod", "texthouse_tcod_f2b", "--graph", "--json");
    expect(j.status, j.stderr).toBe(0);
    const line = JSON.parse(j.stdout.trim().split("\n").at(-1)!) as { nodes: { id: string }[]; edges: unknown[] };
    const plan = planOf("examples/texthouse/tcod-f2b.tcod");
    expect(line.nodes.map((n) => n.id)).toEqual(plan.graph.nodes.map((n) => n.id));
    expect(line.edges).toEqual(plan.graph.edges);
  });

  it("explain --graph takes a curriculum, not a field", () => {
    const r = tcod("explain", "examples/texthouse/tcod-f2b.tcod", "texthouse_tcod_f2b.horizon", "--graph");
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(/error TC7009: target texthouse_tcod_f2b.horizon: with --graph, name a curriculum alone; a target is CURRICULUM\n  hint: /);
  });

  it("plot --graph prints Mermaid and writes NAME.graph.svg and NAME.graph.mmd", () => {
    const out = mkdtempSync(join(tmpdir(), "tcod-graph-"));
    const r = tcod("plot", "examples/texthouse/atod.tcod", "--graph", "-o", out);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("flowchart LR");
    const plan = planOf("examples/texthouse/atod.tcod");
    expect(readFileSync(join(out, `${plan.name}.graph.mmd`), "utf8")).toBe(graphMermaid(plan));
    expect(readFileSync(join(out, `${plan.name}.graph.svg`), "utf8")).toBe(graphSvg(plan));
  });
});
