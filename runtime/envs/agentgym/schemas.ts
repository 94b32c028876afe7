/**
 * The shapes of AgentGym env-server answers (reference §1.2), as zod schemas: what each route must
 * answer for the adapter to use it. Optional lists may be absent or null (servers differ); a value
 * of the wrong type is a malformed answer. Unknown keys are allowed and never walked, so a deeply
 * nested extra value costs nothing. `parseAnswer` turns a mismatch into a retryable EnvError that
 * names the server, the route and the first wrong field — the engine retries the episode on a fresh
 * instance and stops the run cleanly if the server keeps answering wrongly.
 */
import { z } from "zod";
import { EnvError } from "../env.js";
import { preview } from "./http.js";

const num = z.number().refine(Number.isFinite, "expected a finite number");
/** A list of strings, absent or null where the server has none. */
const strList = z.array(z.string()).nullish();

export const CreateAnswer = z.looseObject({ id: num });
export const AlfworldReset = z.looseObject({ observation: z.string(), task_type: z.unknown().optional(), available_actions: strList });
export const AlfworldStep = z.looseObject({ observation: z.string(), reward: num, done: z.boolean(), available_actions: strList });
export const WebshopReset = z.tuple([z.string()], z.unknown());
export const WebshopAvailable = z.looseObject({ has_search_bar: z.boolean().nullish(), clickables: strList });
export const WebshopStep = z.looseObject({ state: z.string(), reward: num, done: z.boolean() });
export const SciworldReset = z.looseObject({ task_description: z.string(), observation: z.string() });
export const SciworldStep = z.looseObject({ observation: z.string(), score: num, done: z.boolean() });
export const TextcraftReset = z.looseObject({ observation: z.string() });
export const TextcraftStep = z.looseObject({ observation: z.string(), reward: num, done: z.boolean() });

/** Validates a server answer; a malformed one is a retryable EnvError naming the route and field. */
export function parseAnswer<S extends z.ZodType>(kind: string, route: string, schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const i = r.error.issues[0]!;
  const at = i.path.length ? i.path.map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`)).join("") : "the answer";
  throw new EnvError(`${kind} server: ${route} answered a malformed value: ${at}: ${i.message} (got ${preview(body)})`, kind);
}
