/** `model NAME { path: … serve: … }` → a model object. */
import type { ModelDecl } from "../grammar/ast.js";
import { d, didYouMean } from "./diagnostics/index.js";
import type { Evaluator } from "./evaluate.js";
import { invalid, type Scope, type Value } from "./values.js";

export const MODEL_FIELDS: Record<string, { type: string; required: boolean; doc: string }> = {
  path: { type: "string", required: true, doc: "Hugging Face id or local path of the weights." },
  serve: { type: "backend", required: false, doc: "Where it runs: embedded() (default), openai(url), worker(url)." },
  tokenizer: { type: "string", required: false, doc: "Tokenizer path, when it differs from `path`." },
  lora: { type: "string", required: false, doc: "A LoRA adapter to load on top of `path`." },
};

export function evalModel(decl: ModelDecl, scope: Scope, ev: Evaluator): Value {
  const fields = new Map<string, Value>();
  let ok = true;
  for (const f of decl.fields) {
    const spec = MODEL_FIELDS[f.name];
    if (!spec) {
      const names = Object.keys(MODEL_FIELDS);
      ev.report(d.unknownField({ field: f.name, owner: `model '${decl.name}'`, suggestion: didYouMean(f.name, names), available: names.join(", ") }), f.nameSpan);
      ok = false;
      continue;
    }
    if (fields.has(f.name)) { ev.report(d.duplicateField({ field: f.name }), f.nameSpan); ok = false; continue; }
    const v = ev.check.type(ev.expr(f.value, scope), ev.types.of(spec.type), f.value.span, `model field '${f.name}'`);
    if (v.kind === "invalid") ok = false;
    fields.set(f.name, v);
  }
  for (const [name, spec] of Object.entries(MODEL_FIELDS)) {
    if (spec.required && !fields.has(name)) {
      ev.report(d.missingField({ owner: `model '${decl.name}'`, field: name, example: '"Qwen/Qwen2.5-1.5B-Instruct"' }), decl.nameSpan);
      ok = false;
    }
  }
  if (!ok) return invalid(decl.span);
  fields.set("name", { kind: "string", value: decl.name, span: decl.nameSpan });
  return { kind: "object", type: "model", fields, span: decl.span, origin: [] };
}
