/**
 * A tokenizer that lives on the inference server (`/tokenize`, `/detokenize`), exposed through the
 * synchronous `Tokenizer` contract, with chat rendering as token segments taken from the server's own
 * chat template (docs/REFERENCES.md#vllm: vLLM's messages form gives "the server's exact
 * chat-template ids").
 *
 * Chat segments are cut out of whole renderings by difference, so they are the template's ids and
 * never a re-tokenisation of rendered text:
 *   renderSystem(t)   = render([system: t])
 *   renderUser(t)     = render([system: S, user: t]) − render([system: S])
 *   assistantPrefix() = render([S, U], add_generation_prompt) − render([S, U])
 *   assistantSuffix() = render([S, U, assistant: A]) − (render([S, U], gen) + encode(A))
 * Servers without a messages form (SGLang's /tokenize) take the template as text (`chatTemplate`).
 *
 * Calls block for one round trip (sync-http.ts) and are cached; encode is on the rollout's path, so
 * run the tokenizer server on the same host.
 */
import type { Tokenizer } from "../backend.js";
import type { OpenAIClient } from "./client.js";
import type { DialectName } from "./dialects/dialect.js";
import { asArray, asObject, asString, asTokenId, type Json } from "./dialects/shape.js";
import { excerpt, HttpBackendError } from "./errors.js";
import { fingerprintOf, fingerprintParts } from "./fingerprint.js";
import { SyncPoster } from "./sync-http.js";
import { BodyTooLarge } from "../../http-body.js";

export interface ChatMessage { role: "system" | "user" | "assistant"; content: string }

/** The chat template as text with `{content}` holes, for servers that cannot render messages. */
export interface ChatTemplateText {
  system: string;
  user: string;
  assistantPrefix: string;
  assistantSuffix: string;
}

/** How one dialect spells tokenizer requests. */
export interface TokenizerWire {
  encode(text: string): { path: string; body: unknown };
  parseEncode(json: Json): number[];
  /** Undefined where the server has no chat-template tokenization. */
  chat?(messages: ChatMessage[], addGenerationPrompt: boolean): { path: string; body: unknown };
  decode(ids: number[]): { path: string; body: unknown };
  parseDecode(json: Json): string;
}

function ids(v: Json, path: string): number[] {
  return asArray(v, path).map((x, i) => asTokenId(x, `${path}[${i}]`));
}

/** vLLM §5.4: `{count, max_model_len, tokens}` and `{prompt}`; `add_special_tokens: false` so no BOS sneaks in. */
export function vllmTokenizerWire(model: string): TokenizerWire {
  return {
    encode: (text) => ({ path: "/tokenize", body: { model, prompt: text, add_special_tokens: false } }),
    parseEncode: (j) => ids(asObject(j, "").tokens, "tokens"),
    chat: (messages, gen) => ({ path: "/tokenize", body: { model, messages, add_generation_prompt: gen, add_special_tokens: false } }),
    decode: (tokens) => ({ path: "/detokenize", body: { model, tokens } }),
    parseDecode: (j) => asString(asObject(j, "").prompt, "prompt"),
  };
}

/** SGLang §6.2 lists /tokenize and /detokenize; they take a prompt, not messages. */
export function sglangTokenizerWire(): TokenizerWire {
  return {
    encode: (text) => ({ path: "/tokenize", body: { prompt: text, add_special_tokens: false } }),
    parseEncode: (j) => ids(asObject(j, "").tokens, "tokens"),
    decode: (tokens) => ({ path: "/detokenize", body: { tokens } }),
    parseDecode: (j) => {
      const o = asObject(j, "");
      return asString(o.text ?? o.prompt, o.text !== undefined ? "text" : "prompt");
    },
  };
}

export function tokenizerWire(dialect: DialectName, model: string): TokenizerWire {
  // The tcod worker answers /tokenize and /detokenize in vLLM's shape (worker/tcod_worker/worker.py).
  return dialect === "sglang" ? sglangTokenizerWire() : vllmTokenizerWire(model);
}

export interface RemoteTokenizerOptions {
  /** Vocabulary size where the server does not report it (/info); 0 = unknown. */
  vocabSize?: number;
  /** Stop ids; default: the server's (/info) or else the first id of the assistant suffix (end of turn). */
  stopTokens?: number[];
  /** For servers without chat-template tokenization. */
  chatTemplate?: ChatTemplateText;
  /** Encode-cache entries kept (default 20 000). */
  cacheSize?: number;
}

/** Anchors used to cut segments out of renderings; plain words every tokenizer has. */
const ANCHOR_SYSTEM = "you are an agent";
const ANCHOR_USER = "look";
const ANCHOR_ASSISTANT = "go";

export class RemoteTokenizer implements Tokenizer {
  readonly vocabSize: number;
  readonly stopTokens: number[];
  private readonly poster: SyncPoster;
  private readonly cache = new Map<string, number[]>();
  private readonly cacheSize: number;
  private prefix: number[] = [];
  private suffix: number[] = [];
  private userBase: number[] = [];
  private print = "";

  private constructor(private readonly client: OpenAIClient, private readonly wire: TokenizerWire, headers: Record<string, string>,
    timeoutMs: number, private readonly opts: RemoteTokenizerOptions, info: { vocabSize?: number; stopTokens?: number[] }) {
    this.poster = new SyncPoster(headers, timeoutMs, client.maxBodyBytes);
    this.cacheSize = opts.cacheSize ?? 20_000;
    this.vocabSize = opts.vocabSize ?? info.vocabSize ?? 0;
    this.stopTokens = opts.stopTokens ?? info.stopTokens ?? [];
  }

  /**
   * Builds the tokenizer and derives the chat segments; fails with a clear error where the server
   * cannot tokenize or its template cannot be cut into segments.
   */
  static create(client: OpenAIClient, wire: TokenizerWire, o: { token?: string; timeoutMs: number; info?: { vocabSize?: number; stopTokens?: number[] } } & RemoteTokenizerOptions): RemoteTokenizer {
    const headers: Record<string, string> = { "content-type": "application/json", accept: "application/json" };
    const token = o.token ?? client.bearer;
    if (token) headers.authorization = `Bearer ${token}`;
    const t = new RemoteTokenizer(client, wire, headers, o.timeoutMs, o, o.info ?? {});
    t.deriveSegments();
    if (t.stopTokens.length === 0) {
      const first = t.suffix[0];
      if (first === undefined) {
        throw client.fail("/tokenize", "unsupported", false, "cannot tell which token ends an assistant turn: the chat template adds nothing after a reply",
          "Pass stopTokens (the model's EOS / end-of-turn ids) in the backend options.");
      }
      t.stopTokens.push(first);
    }
    t.print = fingerprintOf(fingerprintParts(t));
    return t;
  }

  encode(text: string): number[] {
    const hit = this.cache.get(text);
    if (hit) {
      this.cache.delete(text); // LRU: re-insert as newest
      this.cache.set(text, hit);
      return [...hit];
    }
    const out = this.call(this.wire.encode(text), (j) => this.wire.parseEncode(j));
    if (this.cache.size >= this.cacheSize) this.cache.delete(this.cache.keys().next().value as string);
    this.cache.set(text, out);
    return [...out];
  }

  decode(tokens: number[]): string {
    if (tokens.length === 0) return "";
    return this.call(this.wire.decode(tokens), (j) => this.wire.parseDecode(j));
  }

  renderSystem(text: string): number[] {
    if (this.opts.chatTemplate) return this.fromText(this.opts.chatTemplate.system, text);
    return this.render([{ role: "system", content: text }], false);
  }

  renderUser(text: string): number[] {
    if (this.opts.chatTemplate) return this.fromText(this.opts.chatTemplate.user, text);
    const whole = this.render([{ role: "system", content: ANCHOR_SYSTEM }, { role: "user", content: text }], false);
    return this.cut(whole, this.userBase, "renderUser");
  }

  assistantPrefix(): number[] { return [...this.prefix]; }
  assistantSuffix(): number[] { return [...this.suffix]; }
  fingerprint(): string { return this.print; }

  close(): Promise<void> { return this.poster.close(); }

  private deriveSegments(): void {
    const tpl = this.opts.chatTemplate;
    if (tpl) {
      for (const [k, v] of Object.entries(tpl)) {
        if ((k === "system" || k === "user") && !v.includes("{content}")) {
          throw this.client.fail("/tokenize", "unsupported", false, `chatTemplate.${k} has no {content} hole`, "Write it like \"<|im_start|>user\\n{content}<|im_end|>\\n\".");
        }
      }
      this.prefix = this.encodeSpecial(tpl.assistantPrefix);
      this.suffix = this.encodeSpecial(tpl.assistantSuffix);
      return;
    }
    if (!this.wire.chat) {
      throw this.client.fail("/tokenize", "unsupported", false, "the server cannot render chat messages into token ids",
        "Pass chatTemplate ({system, user, assistantPrefix, assistantSuffix} with {content} holes, copied from the model's chat template) in the backend options.");
    }
    const sys = { role: "system" as const, content: ANCHOR_SYSTEM };
    const user = { role: "user" as const, content: ANCHOR_USER };
    try {
      this.userBase = this.render([sys], false);
    } catch (e) {
      if (e instanceof HttpBackendError && e.status !== undefined && e.status >= 400 && e.status < 500) {
        throw this.client.fail(e.endpoint, "unsupported", false, `the server did not render chat messages into token ids (${e.message})`,
          "Pass chatTemplate ({system, user, assistantPrefix, assistantSuffix} with {content} holes, copied from the model's chat template) in the backend options.", e.status);
      }
      throw e;
    }
    const closed = this.render([sys, user], false);
    const open = this.render([sys, user], true);
    this.prefix = this.cut(open, closed, "assistantPrefix");
    const replied = this.render([sys, user, { role: "assistant", content: ANCHOR_ASSISTANT }], false);
    const reply = this.cut(replied, open, "assistantSuffix");
    const content = this.encode(ANCHOR_ASSISTANT);
    const at = lastIndexOfSeq(reply, content);
    if (at < 0) {
      throw this.client.fail("/tokenize", "unsupported", false,
        `cannot find the assistant's content ids [${content.join(", ")}] in the rendered reply [${reply.join(", ")}]`,
        "The chat template rewrites assistant messages; pass chatTemplate explicitly in the backend options.");
    }
    this.suffix = reply.slice(at + content.length);
  }

  /** `whole` minus the leading `base`; an error naming the segment when the template does not nest. */
  private cut(whole: number[], base: number[], what: string): number[] {
    if (base.length > whole.length || base.some((x, i) => x !== whole[i])) {
      throw this.client.fail("/tokenize", "unsupported", false,
        `the chat template does not render ${what} as an extension of the shorter conversation ([${excerpt(base.join(","), 80)}] is not a prefix of [${excerpt(whole.join(","), 80)}])`,
        "This template re-renders earlier turns (e.g. strips reasoning); token-in/token-out needs a template whose turns nest. Pass chatTemplate explicitly.");
    }
    return whole.slice(base.length);
  }

  private render(messages: ChatMessage[], gen: boolean): number[] {
    const call = this.wire.chat!(messages, gen);
    return this.call(call, (j) => this.wire.parseEncode(j));
  }

  private fromText(template: string, content: string): number[] {
    const [before, after] = template.split("{content}") as [string, string?];
    return [...this.encodeSpecial(before), ...this.encode(content), ...this.encodeSpecial(after ?? "")];
  }

  /** Template text (with special-token strings) to ids; empty text is no ids. */
  private encodeSpecial(text: string): number[] {
    return text === "" ? [] : this.encode(text);
  }

  /** One blocking call with two quick retries for transient failures. */
  private call<T>(c: { path: string; body: unknown }, parse: (j: Json) => T): T {
    let last: HttpBackendError | undefined;
    for (let attempt = 1; attempt <= 3; attempt++) {
      if (attempt > 1) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100 * 4 ** (attempt - 2));
      const a = this.poster.post(this.client.url + c.path, c.body);
      if ("error" in a && a.error === "too-large") throw this.client.bodyTooLarge(c.path, new BodyTooLarge(a.cap, a.declared), a.status, attempt);
      if ("error" in a) {
        last = a.error === "timeout"
          ? this.client.fail(c.path, "timeout", true, `tokenizer call got no answer (${a.detail}) (attempt ${attempt})`, "Check the server's load; raise timeoutMs.", undefined, attempt)
          : this.client.fail(c.path, "unreachable", true, `unreachable (${a.detail}) (attempt ${attempt})`, `Is the ${this.client.label} server running at ${this.client.url}?`, undefined, attempt);
        continue;
      }
      if (a.status >= 300 && a.status < 400) {
        throw this.client.fail(c.path, "http", false, `HTTP ${a.status}: a redirect${a.location ? ` to ${excerpt(a.location, 200)}` : ""}, which tcod does not follow`,
          "Write the server's own address in the backend spec's `url` (scheme, host, port; no /v1).", a.status);
      }
      if (a.status >= 500) {
        last = this.client.fail(c.path, "http", true, `HTTP ${a.status}: ${excerpt(a.text)} (attempt ${attempt})`, "The server failed internally; see its log.", a.status, attempt);
        continue;
      }
      if (a.status >= 400) {
        throw this.client.fail(c.path, "http", false, `HTTP ${a.status}: ${excerpt(a.text)}`,
          a.status === 404 ? `This server has no ${c.path}; the remote tokenizer needs it (vLLM and the tcod worker have it).` : "The server rejected the tokenizer request.", a.status);
      }
      return this.client.parseJson(c.path, a, parse);
    }
    throw last!;
  }
}

function lastIndexOfSeq(hay: number[], needle: number[]): number {
  if (needle.length === 0) return -1;
  outer: for (let i = hay.length - needle.length; i >= 0; i--) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

