/**
 * In-test AgentGym servers that follow reference §1.2 to the letter (routes, shapes, ids vs env_idx,
 * errors as HTTP 200 {"error"}), for the envs whose data cannot be downloaded here (ALFWorld, WebShop),
 * plus a server that accepts connections and never answers (timeouts).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeServer { url: string; server: Server; calls: { route: string; body: unknown }[]; close(): Promise<void> }

type Handler = (route: string, body: Record<string, unknown>, query: URLSearchParams) => unknown;

export async function serve(handler: Handler): Promise<FakeServer> {
  const calls: { route: string; body: unknown }[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let data = "";
    req.on("data", (c: Buffer) => { data += c.toString(); });
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://x");
      const body = data ? JSON.parse(data) as Record<string, unknown> : {};
      calls.push({ route: url.pathname, body });
      const out = handler(url.pathname, body, url.searchParams);
      if (out === HANG) return; // never answer
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(out));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`, server, calls,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

export const HANG = Symbol("hang");

/** agentenv-alfworld: ids from /create, game index on /reset, reward = float(won), no /close. */
export function fakeAlfworld(games: Map<number, string>, plan: { winAfter: string[]; suffixForm?: boolean }): Handler {
  const envs = new Map<number, { game?: number; done: boolean; steps: string[] }>();
  let next = 0;
  return (route, body) => {
    if (route === "/") return "This is environment AlfWorld.";
    if (route === "/create") { envs.set(next, { done: false, steps: [] }); return { id: next++ }; }
    const id = body.id as number;
    const e = envs.get(id);
    if (!e) return { error: `The id ${id} is not valid.` };
    if (route === "/reset") {
      const key = games.get(body.game as number);
      if (key === undefined) return { error: "list index out of range" };
      Object.assign(e, { game: body.game, done: false, steps: [] });
      return { id, observation: "You are in the middle of a room. Looking quickly around you, you see a diningtable 1.\nYour task is to: heat some plate and put it in fridge.",
        available_actions: ["go to diningtable 1", "look", "inventory"], task_type: key };
    }
    if (route === "/step") {
      if (e.done) return { error: `The task with environment ${id} has finished.` };
      e.steps.push(body.action as string);
      const won = plan.winAfter.every((a, i) => e.steps[i] === a) && e.steps.length === plan.winAfter.length;
      e.done = won;
      const obs = plan.winAfter.includes(body.action as string) ? `You did: ${body.action}.` : "Nothing happens.";
      return plan.suffixForm
        ? { observation: `${obs}\nAVAILABLE ACTIONS: go to fridge 1,open fridge 1,look`, reward: won ? 1 : 0, done: won }
        : { observation: obs, reward: won ? 1 : 0, available_actions: ["go to fridge 1", "look"], done: won };
    }
    return { detail: "Not Found" };
  };
}

/** agentenv-webshop: /create → bare int, env_idx keys, /reset → [obs, null], reward on click[Buy Now]. */
export function fakeWebshop(): Handler {
  const envs = new Map<number, { page: "search" | "results" | "item" }>();
  return (route, body, query) => {
    if (route === "/") return "This is environment WebShop.";
    if (route === "/create") { const idx = 48_000_000 + envs.size; envs.set(idx, { page: "search" }); return idx; }
    const idx = (route === "/available_actions" ? Number(query.get("env_idx")) : body.env_idx) as number;
    const e = envs.get(idx);
    if (!e) return { error: `env_idx ${idx} not found` };
    if (route === "/reset") {
      e.page = "search";
      return [`WebShop [SEP] Instruction: [SEP] Find me slip resistant men's shoes, price lower than 50.00 dollars (goal ${body.session_id}) [SEP] Search`, null];
    }
    if (route === "/available_actions") {
      return e.page === "search" ? { has_search_bar: true, clickables: ["search"] }
        : e.page === "results" ? { has_search_bar: false, clickables: ["back to search", "b07xyz"] }
          : { has_search_bar: false, clickables: ["back to search", "buy now", "description"] };
    }
    if (route === "/step") {
      const a = body.action as string;
      if (a.startsWith("search[")) { e.page = "results"; return { state: "Back to Search [SEP] Page 1 [SEP] B07XYZ [SEP] Shoe", reward: 0, done: false, info: null }; }
      if (a === "click[b07xyz]") { e.page = "item"; return { state: "Shoe [SEP] Buy Now", reward: 0, done: false, info: null }; }
      if (a === "click[buy now]") return { state: "Thank you for shopping with us!", reward: 0.75, done: true, info: null };
      return { state: "Invalid action!", reward: 0, done: false, info: null };
    }
    return { detail: "Not Found" };
  };
}

/** A recorded WebShop episode (test/fixtures/envs/webshop_pages.json) served as agentenv-webshop
 *  answers it: /reset gives the first page, each /step the next recorded page when the action is the
 *  recorded one, /available_actions the current page's. */
export interface RecordedWebshopStep { action: string | null; text: string; available: { has_search_bar: boolean; clickables: string[] }; reward: number; done: boolean }
export function recordedWebshop(steps: readonly RecordedWebshopStep[]): Handler {
  let at = 0;
  return (route, body) => {
    if (route === "/") return "This is environment WebShop.";
    if (route === "/create") return 7;
    if (route === "/reset") { at = 0; return [steps[0]!.text, null]; }
    if (route === "/available_actions") return steps[at]!.available;
    if (route === "/step") {
      const next = steps[at + 1];
      if (!next || next.action !== body.action) return { error: `recorded episode: step ${at + 1} is ${JSON.stringify(next?.action)}, not ${JSON.stringify(body.action)}` };
      at++;
      return { state: next.text, reward: next.reward, done: next.done, info: null };
    }
    return { detail: "Not Found" };
  };
}
