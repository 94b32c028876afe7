/**
 * Inline SVG charts for the static report: no external JS or CSS, deterministic markup.
 * Every data point is an element with a `data-x`/`data-y` (or `data-value`) attribute, so a test (or
 * a curious reader with devtools) can check what is drawn.
 */

/**
 * A line; `band` (x, lo, hi) draws a translucent area behind it (e.g. min–max over seeds); `width` is
 * the stroke width (default 1.8): a wide line stays visible under a thin one that coincides with it.
 */
export interface Series { name: string; points: [number, number][]; dashed?: boolean; width?: number; band?: [number, number, number][] }

const W = 640, H = 260, ML = 52, MR = 140, MT = 28, MB = 36;
const COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf"];

const esc = (s: string): string => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
const fmt = (v: number): string => (Math.abs(v) >= 1000 || (Math.abs(v) < 0.01 && v !== 0) ? v.toExponential(1) : String(Math.round(v * 1000) / 1000));

/** "Nice" tick values covering [lo, hi]. */
export function ticks(lo: number, hi: number, n = 5): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.round(v / step) * step);
  return out;
}

export function lineChart(id: string, title: string, series: Series[], opts: { xLabel?: string; yMin?: number; yMax?: number } = {}): string {
  const all = series.flatMap((s) => [...s.points, ...(s.band ?? []).flatMap(([x, lo, hi]) => [[x, lo], [x, hi]] as [number, number][])])
    .filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
  if (all.length === 0) return `<figure id="${id}" class="chart empty"><figcaption>${esc(title)}</figcaption><p>no data</p></figure>`;
  let x0 = Math.min(...all.map((p) => p[0])), x1 = Math.max(...all.map((p) => p[0]));
  let y0 = opts.yMin ?? Math.min(...all.map((p) => p[1])), y1 = opts.yMax ?? Math.max(...all.map((p) => p[1]));
  if (x1 === x0) { x0 -= 1; x1 += 1; }
  if (y1 === y0) { y0 -= 0.5; y1 += 0.5; }
  const sx = (x: number) => ML + ((x - x0) / (x1 - x0)) * (W - ML - MR);
  const sy = (y: number) => H - MB - ((y - y0) / (y1 - y0)) * (H - MT - MB);
  const parts: string[] = [];
  parts.push(`<rect x="${ML}" y="${MT}" width="${W - ML - MR}" height="${H - MT - MB}" fill="#fff" stroke="#ccc"/>`);
  for (const t of ticks(y0, y1)) {
    parts.push(`<line x1="${ML}" x2="${W - MR}" y1="${sy(t).toFixed(1)}" y2="${sy(t).toFixed(1)}" stroke="#eee"/>`);
    parts.push(`<text x="${ML - 6}" y="${(sy(t) + 4).toFixed(1)}" text-anchor="end" font-size="11">${fmt(t)}</text>`);
  }
  for (const t of ticks(x0, x1, 6)) {
    parts.push(`<text x="${sx(t).toFixed(1)}" y="${H - MB + 16}" text-anchor="middle" font-size="11">${fmt(t)}</text>`);
  }
  parts.push(`<text x="${(ML + W - MR) / 2}" y="${H - 4}" text-anchor="middle" font-size="11">${esc(opts.xLabel ?? "step")}</text>`);
  series.forEach((s, i) => {
    const c = COLORS[i % COLORS.length]!;
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y));
    if (pts.length === 0) return;
    parts.push(`<g class="series" data-series="${esc(s.name)}">`);
    const band = (s.band ?? []).filter(([x, lo, hi]) => Number.isFinite(x) && Number.isFinite(lo) && Number.isFinite(hi));
    if (band.length > 1 && band.some(([, lo, hi]) => hi > lo)) {
      const outline = [...band.map(([x, , hi]) => `${sx(x).toFixed(1)},${sy(hi).toFixed(1)}`), ...band.slice().reverse().map(([x, lo]) => `${sx(x).toFixed(1)},${sy(lo).toFixed(1)}`)];
      parts.push(`<polygon class="band" fill="${c}" fill-opacity="0.15" stroke="none" points="${outline.join(" ")}"/>`);
    }
    parts.push(`<polyline fill="none" stroke="${c}" stroke-width="${s.width ?? 1.8}"${s.width && s.width > 2 ? ' stroke-opacity="0.55"' : ""}${s.dashed ? ' stroke-dasharray="5 3"' : ""} points="${pts.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(" ")}"/>`);
    for (const [x, y] of pts) parts.push(`<circle class="pt" r="2.2" fill="${c}" cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" data-x="${x}" data-y="${y}"><title>${esc(s.name)} @ ${x}: ${fmt(y)}</title></circle>`);
    parts.push(`</g>`);
    parts.push(`<rect x="${W - MR + 10}" y="${MT + i * 18}" width="12" height="3" fill="${c}"/><text x="${W - MR + 26}" y="${MT + i * 18 + 5}" font-size="11">${esc(s.name)}</text>`);
  });
  return `<figure id="${id}" class="chart"><figcaption>${esc(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(title)}">${parts.join("")}</svg></figure>`;
}

/** Heatmap of values[x][y] (x: step, y: turn index); missing cells (null) are left blank. */
export function heatmap(id: string, title: string, xs: number[], ys: number, values: (number | null)[][], opts: { xLabel?: string; yLabel?: string } = {}): string {
  const flat = values.flat().filter((v): v is number => v !== null && Number.isFinite(v));
  if (flat.length === 0 || xs.length === 0 || ys === 0) return `<figure id="${id}" class="chart empty"><figcaption>${esc(title)}</figcaption><p>no data</p></figure>`;
  const lo = Math.min(...flat), hi = Math.max(...flat);
  const cw = (W - ML - MR) / xs.length, ch = (H - MT - MB) / ys;
  const color = (v: number) => {
    const t = hi > lo ? (v - lo) / (hi - lo) : 0.5;
    // white → dark red, a colour-blind-safe single-hue ramp
    const r = Math.round(255 - t * 130), g = Math.round(245 - t * 225), b = Math.round(240 - t * 220);
    return `rgb(${r},${g},${b})`;
  };
  const parts: string[] = [];
  xs.forEach((x, i) => {
    for (let h = 0; h < ys; h++) {
      const v = values[i]?.[h];
      if (v === null || v === undefined || !Number.isFinite(v)) continue;
      parts.push(`<rect class="cell" x="${(ML + i * cw).toFixed(1)}" y="${(H - MB - (h + 1) * ch).toFixed(1)}" width="${Math.max(cw, 0.5).toFixed(2)}" height="${ch.toFixed(2)}" fill="${color(v)}" data-x="${x}" data-turn="${h}" data-value="${v}"><title>step ${x}, turn ${h}: ${fmt(v)}</title></rect>`);
    }
  });
  for (const t of ticks(0, ys - 1, Math.min(ys, 6))) parts.push(`<text x="${ML - 6}" y="${(H - MB - (t + 0.5) * ch + 4).toFixed(1)}" text-anchor="end" font-size="11">${t}</text>`);
  for (const t of ticks(xs[0]!, xs[xs.length - 1]!, 6)) {
    const i = xs.findIndex((x) => x >= t);
    if (i >= 0) parts.push(`<text x="${(ML + (i + 0.5) * cw).toFixed(1)}" y="${H - MB + 16}" text-anchor="middle" font-size="11">${fmt(t)}</text>`);
  }
  parts.push(`<text x="${(ML + W - MR) / 2}" y="${H - 4}" text-anchor="middle" font-size="11">${esc(opts.xLabel ?? "step")}</text>`);
  parts.push(`<text x="12" y="${(MT + H - MB) / 2}" font-size="11" transform="rotate(-90 12 ${(MT + H - MB) / 2})" text-anchor="middle">${esc(opts.yLabel ?? "turn index")}</text>`);
  parts.push(`<rect x="${W - MR + 10}" y="${MT}" width="12" height="12" fill="${color(hi)}"/><text x="${W - MR + 26}" y="${MT + 10}" font-size="11">${fmt(hi)}</text>`);
  parts.push(`<rect x="${W - MR + 10}" y="${MT + 18}" width="12" height="12" fill="${color(lo)}" stroke="#ccc"/><text x="${W - MR + 26}" y="${MT + 28}" font-size="11">${fmt(lo)}</text>`);
  return `<figure id="${id}" class="chart"><figcaption>${esc(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(title)}">${parts.join("")}</svg></figure>`;
}

export { esc };
