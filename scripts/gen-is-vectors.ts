/**
 * Writes test/vectors/importance-sampling.json: vectors of the importance-sampling policy loss, the
 * one definition every trainer of tcod implements (runtime/signals/losses.ts and the embedded student,
 * worker/tcod_worker/losses.py, and Trinity-RFT's importance_sampling_policy_loss.py that an exported
 * plan trains with). Expected values are the closed form, computed here on their own:
 *
 *   ℓ = −A·exp(clamp(lp − old, −c, c)),  dℓ/dlp = ℓ where −c < lp − old < c, else 0;  c = null: no clamp.
 *
 * At exactly ±c the gradient is 0: torch.clamp's autograd passes none at its bounds (torch 2.15).
 *
 *   npx esbuild scripts/gen-is-vectors.ts --bundle --platform=node --format=esm --outfile=dist/gen-is-vectors.mjs && node dist/gen-is-vectors.mjs
 *
 * Checked by test/signals/is-vectors.test.ts (TypeScript), worker/tests/test_shared_vectors.py (the
 * worker) and test/trinity/is_vectors.py via test/trinity/is-vectors.test.ts (Trinity-RFT).
 */
import { writeFileSync } from "node:fs";

interface Case { name: string; clamp: number | null; lp: number[]; old: number[]; adv: number[] }

const cases: Case[] = [
  { name: "inside the clamp (the usual case: small policy moves)", clamp: 20,
    lp: [-1.0, -2.0, -0.5, -3.25], old: [-1.0, -1.5, -1.0, -3.0], adv: [2.0, -1.0, 0.5, 1.5] },
  { name: "beyond ±20: the ratio is e^±20 and the gradient 0, at exactly ±20 too (as torch.clamp)", clamp: 20,
    lp: [0.0, -40.0, -5.0, -25.0, -0.25], old: [-25.0, -10.0, -25.0, -5.0, -0.25], adv: [1.0, -2.0, 0.5, 1.0, -1.0] },
  { name: "a tighter clamp (c = 2)", clamp: 2,
    lp: [-4.0, -3.0, -1.5, -1.0, 0.0], old: [-1.0, -1.0, -2.0, -3.0, -3.0], adv: [1.0, -1.0, 2.0, 0.5, -0.5] },
  { name: "no clamp (Tinker's importance_sampling)", clamp: null,
    lp: [-1.0, 0.0, -7.0], old: [-4.0, -1.0, -2.0], adv: [0.5, -1.0, 2.0] },
];

const round = (x: number) => Number(x.toPrecision(15));
const out = {
  schema: "tcod.is-vectors/1",
  generator: "scripts/gen-is-vectors.ts (closed form)",
  definition: "loss = −A·exp(clamp(lp − old, −c, c)); dloss/dlp = loss where −c < lp − old < c, else 0 (torch.clamp passes no gradient at its bounds); clamp null = no clamp. Per token, before aggregation.",
  cases: cases.map((c) => {
    const loss: number[] = [], grad: number[] = [];
    c.lp.forEach((lp, i) => {
      const d = lp - c.old[i]!;
      const inside = c.clamp === null || Math.abs(d) < c.clamp;
      const l = -c.adv[i]! * Math.exp(c.clamp === null || Math.abs(d) <= c.clamp ? d : Math.sign(d) * c.clamp);
      loss.push(round(l));
      grad.push(inside ? round(l) : 0);
    });
    return { ...c, loss, grad };
  }),
};
writeFileSync(new URL("../test/vectors/importance-sampling.json", import.meta.url), JSON.stringify(out, null, 2) + "\n");
console.log("wrote test/vectors/importance-sampling.json");
