/**
 * The canonical response text the oracle teacher expects for an action, per agent format
 * (the same text an expert demonstration uses, so SFT demos and the oracle agree):
 *   tags  `<think></think><tag>A</tag>` when the parser reads thinking and the format thinks,
 *         else `<tag>A</tag>`;
 *   react `PREFIX A` (e.g. `Action: go to kitchen`; the free "Thought:" part is left out);
 *   raw   `A`.
 * (The literal tokens and fixed words of an agent format, which every backend's tokenizer needs,
 * are in runtime/agent-format.ts.)
 */
import type { AgentFormat } from "../../../plan/schema.js";

/** Think delimiters, when the response of this format opens with a think block. */
export function thinkMarkers(agent: AgentFormat): { open: string; close: string } | null {
  const p = agent.parser;
  return p.kind === "tags" && p.think && agent.thinking ? { open: "<think>", close: "</think>" } : null;
}

/** The response text for `action` with an empty think block (where the format has one). */
export function oracleResponseText(agent: AgentFormat, action: string): string {
  const p = agent.parser;
  switch (p.kind) {
    case "tags": {
      const think = thinkMarkers(agent);
      return (think ? think.open + think.close : "") + `<${p.tag}>${action}</${p.tag}>`;
    }
    case "react":
      return `${p.prefix} ${action}`;
    case "raw":
      return action;
  }
}
