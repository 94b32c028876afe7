/**
 * Keystrokes that change values: the first curriculum's `steps` one higher, then with one more digit;
 * the first number of a `let` or function (else of a call in a curriculum) changed likewise; the first
 * name a curriculum field reads with its last letter deleted (an unknown name), then typed again.
 */
export function valueEdits(text: string): string[] {
  const out: string[] = [];
  const steps = /(\n\s*steps:\s*)(\d+)/.exec(text);
  if (steps) for (const n of [Number(steps[2]) + 1, Number(steps[2]) * 10 + 1]) out.push(text.slice(0, steps.index) + steps[1] + n + text.slice(steps.index + steps[0].length));
  const num = /\n(?:export )?(?:let|fn) [^\n]*?[^\w.](\d+)(?![\w.])/.exec(text) ?? /\n\s*\w+:\s*\w+\([^\n]*?[^\w.](\d+)(?![\w.])/.exec(text);
  if (num) {
    const at = num.index + num[0].length - num[1]!.length;
    for (const n of [`${Number(num[1]) + 1}`, `${num[1]}0`]) out.push(text.slice(0, at) + n + text.slice(at + num[1]!.length));
  }
  const name = /(\ncurriculum [^]*?\n\s*\w+:\s*)([A-Za-z_]\w{2,})/.exec(text);
  if (name) out.push(text.slice(0, name.index + name[0].length - 1) + text.slice(name.index + name[0].length), text);
  return out;
}
