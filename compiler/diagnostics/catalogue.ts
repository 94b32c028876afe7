/**
 * Every message the compiler can print, with its stable code. No message text lives anywhere else.
 * `{name}` placeholders become typed parameters of the accessor (see index.ts), so a wrong code or a
 * missing argument is a type error. docs/diagnostics.md is generated from this table.
 */
export interface CatalogueEntry {
  readonly name: string;
  readonly severity: "error" | "warning";
  readonly message: string;
  readonly hint?: string;
  /**
   * The message depends on a value (a constant, a range, a divisor), so it is not raised while a
   * function body is checked with symbolic parameters (the evaluator's abstract mode).
   */
  readonly valueDependent?: boolean;
  /**
   * The CLI prints no source excerpt under the message: the file's text read as UTF-8 means nothing
   * (a UTF-16 or UTF-32 file shows as U+FFFD and NULs between its characters).
   */
  readonly noExcerpt?: boolean;
}

export const catalogue = {
  // ---- TC1xxx: syntax --------------------------------------------------------------------------
  TC1001: { name: "unexpectedToken", severity: "error", message: "Unexpected {found}; expected {expected}.{suggestion}", hint: "Check the syntax near here against docs/LANGUAGE.md." },
  TC1002: { name: "unterminatedString", severity: "error", message: "Unterminated string literal.", hint: "Close the string with `\"` on the same line." },
  TC1003: { name: "invalidCharacter", severity: "error", message: "Invalid character {char}.", hint: "Only ASCII identifiers, numbers, strings, comments and the operators of docs/LANGUAGE.md are allowed; control characters (a NUL U+0000, an ESC U+001B; all but tab, line breaks, vertical tab and form feed) are not, even inside a string or comment." },
  TC1004: { name: "missingToken", severity: "error", message: "Missing {expected}.", hint: "Insert {expected} here." },
  TC1005: { name: "unterminatedComment", severity: "error", message: "Unterminated block comment.", hint: "Close the comment with `*/`." },
  TC1006: { name: "invalidEscape", severity: "error", message: "Invalid escape sequence {char} in a string.", hint: "Strings support the escapes \\\", \\\\, \\n and \\t; write \\\\ for a backslash." },
  TC1007: { name: "nestingTooDeep", severity: "error", message: "Nesting too deep (brackets, `if`s and prefix operators, 32 levels at most); the rest of the file was not parsed.", hint: "Split the expression with `let` bindings." },
  TC1008: { name: "invalidUtf8", severity: "error", message: "Not valid UTF-8: {what}.", hint: "Save the file as UTF-8 (a Latin-1 'é' is the byte 0xE9; in UTF-8 it is 0xC3 0xA9). A U+FFFD a file holds (the bytes 0xEF 0xBF 0xBD) is a character like any other in a string or comment; in an editor's buffer, which arrives already decoded, every U+FFFD is refused: it cannot be told from one that replaced such bytes." },
  TC1009: { name: "wrongEncoding", severity: "error", noExcerpt: true, message: "The file is encoded as {encoding}; tcod reads source files as UTF-8.", hint: "Save it as UTF-8: in an editor, save with encoding UTF-8; in PowerShell, `Get-Content in.tcod | Set-Content -Encoding utf8 out.tcod` (Windows PowerShell's `>` and Out-File write UTF-16). Where UTF-16 follows UTF-8 text (Windows PowerShell's `>>` appends UTF-16 to a UTF-8 file), write that part again as UTF-8, e.g. in an editor." },
  TC1010: { name: "bidiControl", severity: "error", message: "Bidirectional control character {char}: it can make the code read differently than it runs.", hint: "Remove it: bidi embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069) reorder how editors and terminals show the text after them, so a comment or string can seem to end where it does not (\"Trojan Source\", CVE-2021-42574). Right-to-left text in a string or comment shows as such without them." },

  // ---- TC11xx: modules -------------------------------------------------------------------------
  TC1101: { name: "moduleNotFound", severity: "error", message: "Cannot find module '{spec}' (looked for {tried}).", hint: "{hint}" },
  TC1102: { name: "importCycle", severity: "error", message: "Import cycle: {chain}.", hint: "Move the shared definitions into a module that both import." },
  TC1103: { name: "missingExport", severity: "error", message: "Module '{spec}' has no export '{name}'.{suggestion}", hint: "Exports of '{spec}': {available}." },
  TC1104: { name: "importOutsideRoot", severity: "error", message: "Import '{spec}' leaves the project root.", hint: "Imports reach files under the project root, the stdlib (`std/NAME`) or an installed package (`pkg/file`, no `..`); symlinks count where they point." },
  TC1105: { name: "duplicateDeclaration", severity: "error", message: "'{name}' is declared twice in this module.", hint: "Rename one of the declarations." },
  TC1107: { name: "packageSubpathNotExported", severity: "error", message: "Package '{pkg}' is installed but its package.json `exports` has no entry for '{subpath}'.", hint: "Import one of its exported paths: {exported}." },
  TC1106: { name: "notExported", severity: "error", message: "'{name}' is declared in '{spec}' but not exported.", hint: "Write `export` before its declaration in '{spec}'." },
  TC1108: { name: "sourceTooLarge", severity: "error", message: "'{file}' is {size}, more than the {limit} tcod reads of a source file; it was not read.", hint: "Split it into modules that import one another (each file may be up to {limit}), or generate less source." },
  TC1109: { name: "unreadableSource", severity: "error", message: "Cannot read '{file}': {reason}.", hint: "Give a .tcod file that you may read: not a folder, a device, a pipe, a socket or a loop of symbolic links." },
  TC1110: { name: "selfImport", severity: "error", message: "'{file}' imports itself ('{spec}' is this file).", hint: "Remove this import: a module's own declarations are already in scope." },
  TC1111: { name: "importTooDeep", severity: "error", message: "Import '{spec}' nests imports more than {limit} files deep ({chain}).", hint: "tcod follows imports at most {limit} files deep from the file it compiles: import what the deep modules define from fewer, larger modules, or merge modules of the chain." },
  TC1112: { name: "importNeedsSavedFile", severity: "error", message: "Import '{spec}' in an unsaved buffer: relative and package imports are found from the file's folder, and it has none yet.", hint: "Save the file in the project it belongs to, and its imports are checked; `std/…` imports work unsaved." },

  // ---- TC2xxx: names, types, units ---------------------------------------------------------------
  TC2001: { name: "unitMismatch", severity: "error", message: "Unit mismatch: expected {expected}, got {actual}.", hint: "Write the unit explicitly, e.g. `{suggestion}`." },
  TC2002: { name: "unknownName", severity: "error", message: "Cannot find name '{name}'.{suggestion}", hint: "Declare it with `let`, or import it from the module that exports it (see docs/stdlib.md)." },
  TC2003: { name: "typeMismatch", severity: "error", message: "Type mismatch: expected {expected}, got {actual}.", hint: "{hint}" },
  TC2004: { name: "unknownField", severity: "error", message: "Unknown field '{field}' in {owner}.{suggestion}", hint: "Fields of {owner}: {available}." },
  TC2005: { name: "missingField", severity: "error", message: "{owner} is missing the required field '{field}'.", hint: "Add `{field}: {example}`." },
  TC2006: { name: "unknownArgument", severity: "error", message: "'{fn}' has no parameter '{arg}'.{suggestion}", hint: "Parameters of '{fn}': {available}." },
  TC2007: { name: "missingArgument", severity: "error", message: "Call to '{fn}' is missing the argument '{param}'.", hint: "Pass it as `{param}: ...`." },
  TC2008: { name: "tooManyArguments", severity: "error", message: "'{fn}' takes {max} positional argument(s), got {count}.", hint: "Name the extra arguments, e.g. `{example}`." },
  TC2009: { name: "duplicateField", severity: "error", message: "Field '{field}' is given twice.", hint: "Remove one of them." },
  TC2010: { name: "recursiveFunction", severity: "error", message: "'{name}' depends on itself: {chain}.", hint: "tcod functions and values are inlined and cannot recurse; write the closed form." },
  TC2011: { name: "notCallable", severity: "error", message: "'{name}' is a {type}, not a function.", hint: "Only functions (`fn`) and stdlib builtins can be called." },
  TC2012: { name: "missingUnit", severity: "error", message: "A bare number where {expected} is expected.", hint: "Write the unit, e.g. `{suggestion}`." },
  TC2013: { name: "noSuchMember", severity: "error", message: "{owner} has no member '{member}'.{suggestion}", hint: "Members of {owner}: {available}." },
  TC2014: { name: "notAConstant", severity: "error", valueDependent: true, message: "{what} must be known at compile time, but this value is {level}-level.", hint: "Use a constant here; schedules are allowed only in fields that accept them." },
  TC2015: { name: "divisionByZero", severity: "error", valueDependent: true, message: "Division by zero.", hint: "Check the divisor." },
  TC2016: { name: "duplicateArgument", severity: "error", message: "Argument '{arg}' is given twice.", hint: "Remove one of them." },
  TC2017: { name: "unknownCurriculum", severity: "error", message: "Cannot find curriculum '{name}'.{suggestion}", hint: "Curricula in {where}: {available}." },
  TC2018: { name: "invalidValue", severity: "error", message: "Invalid {what}: {detail}.", hint: "{hint}" },
  TC2019: { name: "inliningBudget", severity: "error", message: "Evaluating '{name}' inlines more than {limit} function calls.", hint: "Every call is inlined, so a function that calls another twice doubles the work at each level: compute a shared value once with `let`, or write the closed form." },
  TC2020: { name: "evaluationTooDeep", severity: "error", message: "'{name}' nests calls or values that read values more than {limit} levels deep.", hint: "Shorten the chain: merge intermediate functions, or compute the value in fewer steps." },
  TC2021: { name: "expressionTooDeep", severity: "error", message: "The schedule of {what} is {depth} operators deep; a plan holds expressions at most {limit} deep.", hint: "Write it as a closed form (e.g. `n * x` instead of `x + x + …`)." },
  TC2023: { name: "fieldUnits", severity: "error", message: "'{field}' takes {expected}, and this expression is not in {expected} ({first}).", hint: "Write `{field}: {fix}` (checked: it is in {expected})." },
  TC2022: { name: "stackExhausted", severity: "error", message: "The compiler ran out of stack while {phase}: the file nests too deeply.", hint: "Split long or deeply nested expressions and chains of values with `let` bindings." },

  // ---- TC3xxx: binding time ----------------------------------------------------------------------
  TC3001: { name: "levelTooHigh", severity: "error", message: "'{field}' accepts values known at {max} level, but this expression is {level}-level (it reads {reads}).", hint: "{hint}" },

  // ---- TC4xxx: ranges ---------------------------------------------------------------------------
  // Ranges are checked exactly (constants) or at every step and expert length (schedules), so a
  // value is either in range or an error; TC4002 ("may leave range", a warning) is retired. Past
  // 200,000 points (steps × expert lengths) a schedule is checked at a sample that holds the run's
  // first and last steps (compiler/lower.ts `rangeSample`), and TC4003 says the check was a sample.
  TC4001: { name: "outOfRange", severity: "error", valueDependent: true, message: "{what} must be {range}, got {value}.", hint: "{hint}" },
  TC4003: { name: "rangeSampled", severity: "warning", valueDependent: true, message: "{what} was range-checked at a sample of the run: {checked}; a value out of range at a step between them is not found before the run.", hint: "Runs of up to {dense} points (steps × expert lengths) are checked at every point; otherwise keep the schedule bounded by construction, e.g. with `min`, `max` or `clamp`." },

  // ---- TC45xx: environment semantics (plan/env-semantics.ts) --------------------------------------
  TC4501: { name: "noExpertActions", severity: "warning", message: "b2f on {env}: the official {env} tasksets carry no expert actions ({source}), so unless the rows of this env's task file have an \"actions\" list, no prefix is replayed and every episode plays as plain OPD.", hint: "Add an \"actions\" list (the expert's env commands, in order) to each taskset row, or use `horizon: f2b(…)` or plain OPD on {env}; `tcod run` warns again when the rows it reads have none." },
  TC4502: { name: "noCompactActions", severity: "error", message: "Agent format '{agent}' shows ScienceWorld's compact action list ({placeholders}), but {env} does not supply it ({why}).", hint: "Use an agent that lists every available action instead, e.g. `agent: tcod_format()`, or ScienceWorld through tcod's bridge (`scienceworld()` without `server:`)." },

  TC4503: { name: "noExpertPolicy", severity: "error", message: "sft(noise: {noise}) plays DART demonstrations, whose expert must act from any state the noise leads to, but the expert of {env} replays recorded paths only.", hint: "Use `sft(noise: 0)` on {env} (its recorded expert paths), or DART on an env whose expert is a policy: {kinds}." },
  TC4504: { name: "noiseSourceWithoutNoise", severity: "warning", message: "sft(noise_from: \"{source}\") chooses where DART's noise commands come from, but noise is 0: no turn runs a noise command, and the demonstrations are the expert's clean paths.", hint: "Give the share of noise turns, e.g. `sft(noise: 0.2, noise_from: \"{source}\")`, or drop noise_from." },

  // ---- TC5xxx: overrides and sweeps ---------------------------------------------------------------
  TC5001: { name: "badOverride", severity: "error", message: "Cannot parse override '{text}'.", hint: "Write `--set CURRICULUM.FIELD=VALUE` or `--set NAME=VALUE`, e.g. `--set {example}`." },
  TC5002: { name: "unknownOverrideTarget", severity: "error", message: "Override target '{target}' is neither a curriculum field nor a `let` of this file.{suggestion}", hint: "Targets: {available}." },
  TC5003: { name: "zipLengthMismatch", severity: "error", message: "zip sweep '{name}' has lists of different lengths ({lengths}).", hint: "Give every axis of a zip sweep the same number of values, or use `product`." },
  TC5005: { name: "nestedOverrideNotCall", severity: "error", message: "Override '{target}' sets the argument '{arg}' of field '{field}', but {what}.", hint: "Set the whole field instead, e.g. `--set {whole}=…`." },
  TC5004: { name: "emptySweep", severity: "error", message: "Sweep '{name}' has an empty axis '{axis}'.", hint: "Give at least one value." },
  TC5006: { name: "sweepTooLarge", severity: "error", message: "The sweeps of this file expand to {size} points ({sizes}), more than the limit of {max}.", hint: "Shrink the sweep, split it into several files, or raise the limit with `--max-points N` (each point is a plan to compile and a run of its own)." },
  TC5007: { name: "overrideOfSweptTarget", severity: "error", message: "`--set {target}` would give every point of sweep '{sweep}' one value, but the sweep varies '{swept}' over [{values}].", hint: "Drop the --set to run every point, pick one point with `--curriculum {example}`, or edit the sweep in the file." },
  TC5008: { name: "identicalSweepPoints", severity: "warning", message: "Sweep points {points} compile to identical plans: the swept {vars} changes nothing in curriculum '{curriculum}'.", hint: "Each point is a run of its own; read the swept value in the curriculum, or remove it from the sweep." },

  // ---- TC6xxx: TypeScript extensions ------------------------------------------------------------
  TC6001: { name: "unmappableSignature", severity: "error", message: "The signature of '{name}' ({signature}) does not map to a tcod type: {reason}.", hint: "Extensions take numbers or a TurnStats/StepStats object and return a number, e.g. `(t: TurnStats) => number`." },
  TC6002: { name: "tsExportNotFound", severity: "error", message: "'{file}' exports no function '{name}'.{suggestion}", hint: "Exported functions: {available}." },
  TC6003: { name: "tsError", severity: "error", message: "TypeScript error in '{file}': {message}", hint: "Fix the TypeScript file; tcod bundles it with esbuild." },

  // ---- TC9xxx: internal ---------------------------------------------------------------------------
  TC9001: { name: "internalError", severity: "error", message: "Internal compiler error: {message}", hint: "This is a bug in tcod; please report it with the input file." },
} as const satisfies Record<string, CatalogueEntry>;

export type Code = keyof typeof catalogue;

/**
 * The fixed wording of hints that several call sites fill (the `{hint}` of TC1101, TC2003, TC2018,
 * TC3001, TC4001), with their parameters: `h.chooseValue({ range })` in diagnostics/index.ts. Like
 * the messages above, no hint text lives at a call site.
 */
/**
 * The fixed wording of TC2018's `{detail}` (what is wrong with the value), with its parameters:
 * `dt.notOneOf({ value, options, suggestion })` in diagnostics/index.ts. No detail text lives at a
 * call site either.
 */
export const details = {
  notOneOf: "'{value}' is not one of {options}{suggestion}",
  pointsAndValues: "{points} points and {values} values",
  pointsMustIncrease: "the points must increase",
  forwardKlNotABackendOption: "forward KL is a loss of the curriculum now, not a backend option",
  alreadyWeighted: "this loss is already weighted",
  placeholderNotFilled: "{placeholder} is not filled by the runtime{suggestion}",
  placeholderSuggestion: " (did you mean {placeholder}?)",
  aggregatesDiffer: "the terms aggregate differently ('{a}' and '{b}')",
  bothWeighted: "both terms carry turn weights",
  grpoGroupMismatch: "group: {group} but the batch has {rollouts} rollout(s) per task",
  grpoNeedsGroup: "GRPO needs at least 2 rollouts per task to form a group",
  clipNeedsK1: "clip clamps the k1 estimator's per-token advantage; the '{estimator}' estimator trains on an exact KL, which has no advantage to clamp",
  noRollouts: "0 rollouts per task samples no student episodes, but the {terms} term(s) learn from them (only a loss of sft terms alone trains on demonstrations without them)",
  quoted: "'{value}'",
  trajectoryWindow: "'trajectory' with an agent whose chat memory is a window of {window} turns (episodes run to {maxTurns} turns): a later prompt drops earlier turns, so an episode is not one sequence",
} as const;

export const hints = {
  // ranges (TC4001)
  chooseValue: "Choose a value {range}.",
  /** For a range that names a kind of value ("an integer ≥ 1", "a finite number"): see `chooseHint`. */
  chooseKind: "Choose {range}.",
  stayInRange: "The value must stay {range} over the whole run.",
  boundFromStart: "The value must stay {range} from the first step on: bound it with `max`, `min` or `clamp`.",
  checkArithmetic: "Check the arithmetic of the values this field is built from.",
  batchExample: "e.g. `16 tasks × 8 rollouts`.",
  batchLimit: "A step's episodes are held in memory together; the limit is {limit} (docs/LANGUAGE.md#limits). Use fewer tasks or rollouts a step, e.g. `64 tasks × 8 rollouts`, and more steps.",
  betasExample: "e.g. `betas: [0.9, 0.999]`.",
  piecewiseLengths: "Give as many values as points, at least one.",
  piecewiseSorted: "Sort the points: `at: [0 steps, 100 steps, …]`.",
  decayMoves: "decay 1 never moves: choose a value in [0, 1), e.g. 0.9.",
  // allowed values (TC2018)
  useOneOf: "Use one of {options}.",
  placeholdersOf: "Placeholders of {field}: {names}.",
  forwardKlIsALoss: "Drop forward_kl and write `loss: gkd(beta: 1.0)` (import { gkd } from \"std/loss\"): beta is the share of forward KL; gkd(beta: 0) is opd(estimator: \"full\").",
  weightedOnce: "Apply `weighted` once.",
  weightedOnceOnSum: "Apply `weighted(...)` once, to the whole sum.",
  sameAggregate: "Give every term of a sum the same `aggregate`, or set it on one term only.",
  feedbackStepLevel: "A feedback rule observes one value per finished step: use step-level metrics (`feedback.kl`, `feedback.success`, …), not per-episode or per-turn values.",
  grpoBatch: "Write `batch: {tasks} tasks × {rollouts} rollouts`.",
  clipWithK1: "Drop clip, or use `estimator: \"k1\"` with it.",
  rowsValues: "Use \"turn\" (Trinity) or \"trajectory\" (tinker).",
  oldLogprobsValues: "Use \"trainer\" (recomputed by the trainer, Trinity) or \"sampler\" (the rollout's log-probs).",
  trajectoryNeedsMemory: "Use an agent whose memory accumulates (e.g. `listed_format(memory: \"accumulate\")`), or `rows: \"turn\"` (one row per turn).",
  // types (TC2003)
  sameBranchTypes: "Both branches of `if` must have the same type.",
  lossDivision: "A loss can be divided by a number, not the other way round.",
  lossAlgebra: "Losses combine as `a * loss1 + b * loss2`.",
  unknownGenericType: "Unknown type '{type}'.",
  unknownType: "Unknown type '{type}'; see docs/LANGUAGE.md#types.",
  quoteString: "Write the value in quotes, e.g. `\"token_mean\"`.",
  callFunction: "Call the function: add `(...)`.",
  buildLoss: "Build a loss with `opd()`, `grpo()` or `sft()` from std/loss.",
  makeEnv: "Make an env with a constructor from std/envs, e.g. `texthouse(split: \"train\")`.",
  declareModel: "Declare a model with `model NAME { path: \"...\" serve: embedded() }`.",
  expectedA: "Expected a {type} here.",
  // levels (TC3001)
  useConstant: "Use a constant here.",
  levelVariables: "Only values known at {max} level ({variables}) can be used here.",
  feedbackNotStepClock: "This value reads the run's own metrics (feedback level), and this field takes values of the step clock alone; pace `horizon` or `prefix` with feedback instead.",
  // modules (TC1101)
  cannotRead: "Nothing is there ({reason}): check the path's spelling and the folder it is relative to.",
  // tcod explain (a target it cannot find)
  explainFields: "Fields: {fields}.",
  explainMembers: "Members of '{owner}': {members}.",
  explainValueItself: "Explain the value itself: {target} (its `from:` line shows the call and its arguments).",
  explainDefault: "Explain the field itself: {target} (its default and what it means); set it in the curriculum to give it members.",
} as const;
