/** Defined from 0.5 on (it throws below): a schedule that calls it has points where it throws. */
export function partial(x: number): number {
  if (x < 0.5) throw new Error("undefined below 0.5");
  return x;
}
