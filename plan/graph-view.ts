/**
 * Views of a plan's execution graph (tcod.plan/2): a text listing of nodes, ports and edges
 * (`tcod explain FILE CURRICULUM --graph`), Mermaid flowchart text and a standalone SVG
 * (`tcod plot FILE --graph`). Pure functions of the plan; port types and phases come from
 * plan/nodes.ts, so what is drawn is what plan/graph.ts checks and the runtime schedules.
 */
import { NODE_SPECS, type PortSpec } from "./nodes.js";
import type { Plan, PlanNode } from "./schema.js";

type Edge = Plan["graph"]["edges"][number];

interface EdgeView { from: string; fromPort: string; to: string; toPort: string; type: string; clock: boolean }

function split(ref: string): [string, string] {
  const dot = ref.indexOf(".");
  return dot < 0 ? [ref, ""] : [ref.slice(0, dot), ref.slice(dot + 1)];
}

function edgeViews(plan: Plan): EdgeView[] {
  const kindOf = new Map(plan.graph.nodes.map((n) => [n.id, n.kind]));
  return plan.graph.edges.map((e: Edge) => {
    const [from, fromPort] = split(e.from);
    const [to, toPort] = split(e.to);
    const k = kindOf.get(from);
    const port = k ? (NODE_SPECS[k].out as readonly PortSpec[]).find((p) => p.name === fromPort) : undefined;
    return { from, fromPort, to, toPort, type: port?.type ?? "?", clock: e.clock === true };
  });
}

const portList = (ports: readonly PortSpec[], connected: (p: string) => boolean, inputs: boolean) =>
  ports.map((p) => `${p.name}: ${p.type}${inputs ? (p.required ? "" : connected(p.name) ? " (optional)" : " (optional, unconnected)") : ""}`).join(", ");

/** The graph as text: one block per node (kind, phase, ports), then the edges with their data types. */
export function graphText(plan: Plan): string {
  const edges = edgeViews(plan);
  const width = Math.max(...plan.graph.nodes.map((n) => n.id.length), 4);
  const lines = [`graph of ${plan.name} (${plan.schema}): ${plan.graph.nodes.length} nodes, ${edges.length} edges`, "", "nodes:"];
  for (const n of plan.graph.nodes) {
    const spec = NODE_SPECS[n.kind];
    const connectedIn = (p: string) => edges.some((e) => e.to === n.id && e.toPort === p);
    lines.push(`  ${n.id.padEnd(width)}  ${n.kind} (${spec.phase}): ${spec.doc}`);
    if (spec.in.length) lines.push(`  ${"".padEnd(width)}    in:  ${portList(spec.in, connectedIn, true)}`);
    if (spec.out.length) lines.push(`  ${"".padEnd(width)}    out: ${portList(spec.out, () => true, false)}`);
  }
  lines.push("", "edges:");
  const refs = edges.map((e) => `${e.from}.${e.fromPort} → ${e.to}.${e.toPort}`);
  const refWidth = Math.max(...refs.map((r) => r.length), 4);
  edges.forEach((e, i) => lines.push(`  ${refs[i]!.padEnd(refWidth)}  ${e.type}${e.clock ? "  (through the step clock: next step)" : ""}`));
  return lines.join("\n");
}

const PHASES = ["explore", "learn", "clock"] as const;

/** Mermaid flowchart text: one subgraph per phase, solid edges within a step, dashed through the clock. */
export function graphMermaid(plan: Plan): string {
  const id = new Map(plan.graph.nodes.map((n, i) => [n.id, `n${i}`]));
  const q = (s: string) => s.replace(/"/g, "#quot;");
  const lines = ["flowchart LR"];
  for (const phase of PHASES) {
    const nodes = plan.graph.nodes.filter((n) => NODE_SPECS[n.kind].phase === phase);
    if (nodes.length === 0) continue;
    lines.push(`  subgraph ${phase}`);
    for (const n of nodes) lines.push(`    ${id.get(n.id)}["${q(n.id)}<br/><small>${n.kind}</small>"]`);
    lines.push("  end");
  }
  for (const e of edgeViews(plan)) {
    const label = q(`${e.fromPort} → ${e.toPort}: ${e.type}`);
    const a = id.get(e.from) ?? e.from, b = id.get(e.to) ?? e.to;
    lines.push(e.clock ? `  ${a} -. "${label} (next step)" .-> ${b}` : `  ${a} -- "${label}" --> ${b}`);
  }
  return lines.join("\n") + "\n";
}

/** Column of each node: the longest path to it from a node without inputs, clock edges left out. */
function layers(plan: Plan, edges: EdgeView[]): Map<string, number> {
  const layer = new Map(plan.graph.nodes.map((n) => [n.id, 0]));
  const within = edges.filter((e) => !e.clock);
  // The step graph without clock edges is acyclic (plan/graph.ts): |nodes| relaxations settle it.
  for (let round = 0; round < plan.graph.nodes.length; round++) {
    let changed = false;
    for (const e of within) {
      const want = (layer.get(e.from) ?? 0) + 1;
      if ((layer.get(e.to) ?? 0) < want) { layer.set(e.to, want); changed = true; }
    }
    if (!changed) break;
  }
  return layer;
}

const xml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** A standalone SVG of the graph: nodes in columns by dependency depth, edges labelled with their ports. */
export function graphSvg(plan: Plan): string {
  const edges = edgeViews(plan);
  const layer = layers(plan, edges);
  const W = 170, H = 46, GX = 90, GY = 34, M = 20, TOP = 40;
  const rowOf = new Map<string, number>();
  const rowsPerLayer = new Map<number, number>();
  for (const n of plan.graph.nodes) {
    const l = layer.get(n.id) ?? 0;
    const r = rowsPerLayer.get(l) ?? 0;
    rowOf.set(n.id, r);
    rowsPerLayer.set(l, r + 1);
  }
  const cols = Math.max(...layer.values(), 0) + 1;
  const rows = Math.max(...rowsPerLayer.values(), 1);
  const width = M * 2 + cols * W + (cols - 1) * GX;
  const height = TOP + M * 2 + rows * H + (rows - 1) * GY + 40;
  const pos = (id: string) => ({ x: M + (layer.get(id) ?? 0) * (W + GX), y: TOP + M + (rowOf.get(id) ?? 0) * (H + GY) });
  const fill: Record<string, string> = { explore: "#e8f1fb", learn: "#fdf0e3", clock: "#eeeeee" };
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<title>${xml(`${plan.name}: execution graph`)}</title>`,
    `<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse"><path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker></defs>`,
    `<text x="${M}" y="${M + 6}" font-size="14" font-weight="bold">${xml(`${plan.name} (${plan.schema})`)}</text>`,
  ];
  edges.forEach((e) => {
    const a = pos(e.from), b = pos(e.to);
    const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
    const label = xml(`${e.fromPort} → ${e.toPort}`);
    if (e.clock || x2 <= x1) {
      // Back to an earlier column (the step clock): an arc under the drawing.
      const low = height - 24;
      out.push(`<path d="M${a.x + W / 2},${a.y + H} C${a.x + W / 2},${low} ${b.x + W / 2},${low} ${b.x + W / 2},${b.y + H}" fill="none" stroke="#444" stroke-dasharray="5,4" marker-end="url(#arrow)"/>`);
      out.push(`<text x="${(a.x + b.x + W) / 2}" y="${low - 4}" text-anchor="middle" fill="#555">${label} (next step)</text>`);
    } else {
      const mx = (x1 + x2) / 2;
      out.push(`<path d="M${x1},${y1} C${mx},${y1} ${mx},${y2} ${x2},${y2}" fill="none" stroke="#444" marker-end="url(#arrow)"/>`);
      out.push(`<text x="${mx}" y="${(y1 + y2) / 2 - 5}" text-anchor="middle" fill="#555">${label}</text>`);
    }
  });
  for (const n of plan.graph.nodes as PlanNode[]) {
    const { x, y } = pos(n.id);
    const phase = NODE_SPECS[n.kind].phase;
    out.push(`<g><rect x="${x}" y="${y}" width="${W}" height="${H}" rx="6" fill="${fill[phase]}" stroke="#333"/>`
      + `<text x="${x + W / 2}" y="${y + 19}" text-anchor="middle" font-weight="bold">${xml(n.id)}</text>`
      + `<text x="${x + W / 2}" y="${y + 35}" text-anchor="middle" fill="#555">${xml(`${n.kind} · ${phase}`)}</text></g>`);
  }
  out.push("</svg>");
  return out.join("\n") + "\n";
}
