/**
 * WebShop's page text through an AgentGym server: the server sends web_agent_site's `text` form (one
 * [SEP]-joined line); the official TCOD WebShop workflows see its `text_rich` form. The adapter
 * rebuilds the rich form (runtime/envs/agentgym/observation.ts webshopRichText); this checks it on a
 * recorded episode (test/fixtures/envs/webshop_pages.json: pages rendered from web_agent_site's
 * templates and converted by its own convert_html_to_text in both modes), no network.
 */
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EnvSpec } from "../../plan/schema.js";
import { agentGymFromSpec, webshopRichText, WebshopSession, webshopTaskOf } from "../../runtime/envs/agentgym/index.js";
import { EnvConfigError } from "../../runtime/envs/env.js";
import { recordedWebshop, serve, type FakeServer, type RecordedWebshopStep } from "./fake-agentgym.js";

interface Fixture { session_id: number; task: string; steps: (RecordedWebshopStep & { text_rich: string })[] }
const FIXTURE = JSON.parse(readFileSync("test/fixtures/envs/webshop_pages.json", "utf8")) as Fixture;
const spec = (params: Record<string, unknown>, server: string): EnvSpec => ({ kind: "webshop", split: "train", maxTurns: 30, pool: 1, params, server, taskFile: undefined });

/** The one difference the [SEP] form cannot recover: a plain text node's own trailing whitespace. */
const trimLineEnds = (s: string) => s.replace(/[ \t]+$/gm, "");

describe("WebShop page text: the official workflows' text_rich, rebuilt from an AgentGym server's [SEP] form", () => {
  let fake: FakeServer;
  beforeAll(async () => { fake = await serve(recordedWebshop(FIXTURE.steps)); });
  afterAll(() => fake.close());

  it("every page of a recorded episode: buttons, option labels and product links, clicked options and visited products, across back-to-search and paging", async () => {
    const env = agentGymFromSpec("webshop", spec({}, fake.url));
    const obs = await env.reset({ id: String(FIXTURE.session_id), split: "train" });
    expect(obs.task).toBe(FIXTURE.task);
    const shown = [obs.text];
    for (const s of FIXTURE.steps.slice(1)) shown.push((await env.step(s.action!)).observation);
    const want = FIXTURE.steps.map((s) => s.text_rich);
    expect(shown.map(trimLineEnds)).toEqual(want.map(trimLineEnds));
    // Exact but for trailing spaces: the only lines of the recorded pages with one are the search
    // page's "Instruction: " (its template writes `<h4>Instruction: <br>`) and the done page's
    // "Your code: " (a text node before a <span>).
    const differs = shown.flatMap((s, i) => s === want[i] ? [] : [i]);
    expect(differs.map((i) => FIXTURE.steps[i]!.action)).toEqual([null, "click[back to search]", "click[buy now]"]);
    for (const i of differs) expect(shown[i]).toBe(want[i]!.replace("Instruction: \n", "Instruction:\n").replace("Your code: \n", "Your code:\n"));
    // The pieces the recorded episode exercises.
    expect(want.some((w) => w.includes("You have clicked blue | white.\nYou have clicked large.\n"))).toBe(true);
    expect(want.some((w) => w.includes("\n[clicked button] B01A2B3C4D [clicked button_]"))).toBe(true);
    expect(want.some((w) => w.includes("  [button] small [button_]\n  [button] medium [button_]\n  [clicked button] large"))).toBe(true);
  });

  it("the task is read off the rich first page as _extract_task_description reads it", () => {
    const s = new WebshopSession();
    const first = FIXTURE.steps[0]!;
    expect(webshopTaskOf(webshopRichText({ text: first.text, clickables: first.available.clickables }, s))).toBe(FIXTURE.task);
    expect(webshopTaskOf("no instruction here\n  at all ")).toBe("no instruction here at all");
  });

  it("a node BeautifulSoup collapsed to one space is a [SEP] segment of its own, a line of one space in the rich form", () => {
    expect(webshopRichText({ text: "a [SEP]  [SEP] b", clickables: [] }, new WebshopSession())).toBe("a\n \nb");
  });

  it("page_text: \"text\" shows the server's line as it comes; any other value is refused", async () => {
    const env = agentGymFromSpec("webshop", spec({ page_text: "text" }, fake.url));
    const obs = await env.reset({ id: String(FIXTURE.session_id), split: "train" });
    expect(obs.text).toBe(FIXTURE.steps[0]!.text);
    expect(obs.task).toBe(FIXTURE.task);
    expect((await env.step(FIXTURE.steps[1]!.action!)).observation).toBe(FIXTURE.steps[1]!.text);
    expect(() => agentGymFromSpec("webshop", spec({ page_text: "html" }, fake.url))).toThrow(EnvConfigError);
  });
});
