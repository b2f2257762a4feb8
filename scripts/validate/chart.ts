/** One cascade threshold's measured point of the trade-off. */
export interface TradeoffPoint {
  threshold: number;
  /** Overall p95 latency measured through the stack, in ms. */
  p95Ms: number;
  /** Cascade accuracy on the held-out rows, 0-1. */
  accuracy: number;
  /** Share of requests answered at the edge (cache, edge model, degraded), 0-1. */
  edgeShare: number;
}

const W = 720;
const H = 360;
const PAD = { left: 60, right: 70, top: 40, bottom: 50 };
const LATENCY = "#457b9d";
const ACCURACY = "#e76f51";

const fmt = (v: number, digits: number) => v.toFixed(digits);

/**
 * The trade-off an operator chooses from, as a standalone SVG: p95 latency (left axis) and accuracy (right
 * axis) against the cascade threshold, with the p95 target and the calibrated threshold marked. Pure.
 */
export function tradeoffSvg(
  points: readonly TradeoffPoint[],
  options: { targetMs: number; calibrated: number },
): string {
  if (points.length === 0) throw new Error("no trade-off points to draw");
  const sorted = [...points].sort((a, b) => a.threshold - b.threshold);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const maxMs = Math.max(options.targetMs * 1.5, ...sorted.map((p) => p.p95Ms)) * 1.05;
  const accs = sorted.map((p) => p.accuracy * 100);
  const accLo = Math.floor(Math.min(...accs) - 0.5);
  const accHi = Math.ceil(Math.max(...accs) + 0.5);
  const x = (t: number) => PAD.left + t * plotW;
  const yMs = (ms: number) => PAD.top + plotH - (ms / maxMs) * plotH;
  const yAcc = (pct: number) => PAD.top + plotH - ((pct - accLo) / (accHi - accLo)) * plotH;
  const line = (color: string, ys: number[]) =>
    `<polyline fill="none" stroke="${color}" stroke-width="2" points="${sorted.map((p, i) => `${fmt(x(p.threshold), 1)},${fmt(ys[i]!, 1)}`).join(" ")}"/>` +
    sorted
      .map((p, i) => `<circle cx="${fmt(x(p.threshold), 1)}" cy="${fmt(ys[i]!, 1)}" r="3.5" fill="${color}"/>`)
      .join("");
  const ticksX = [0, 0.2, 0.4, 0.6, 0.8, 1];
  const ticksMs = Array.from({ length: 6 }, (_, i) => (maxMs * i) / 5);
  const ticksAcc = Array.from({ length: 6 }, (_, i) => accLo + ((accHi - accLo) * i) / 5);
  const bottom = PAD.top + plotH;
  return [
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" font-family="sans-serif">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${W / 2}" y="22" font-size="14" text-anchor="middle">p95 latency and accuracy by cascade threshold</text>`,
    `<line x1="${PAD.left}" y1="${bottom}" x2="${PAD.left + plotW}" y2="${bottom}" stroke="#333"/>`,
    `<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${bottom}" stroke="${LATENCY}"/>`,
    `<line x1="${PAD.left + plotW}" y1="${PAD.top}" x2="${PAD.left + plotW}" y2="${bottom}" stroke="${ACCURACY}"/>`,
    ...ticksX.map(
      (t) => `<text x="${fmt(x(t), 1)}" y="${bottom + 16}" font-size="11" text-anchor="middle">${fmt(t, 1)}</text>`,
    ),
    ...ticksMs.map(
      (ms) =>
        `<text x="${PAD.left - 6}" y="${fmt(yMs(ms) + 4, 1)}" font-size="11" text-anchor="end" fill="${LATENCY}">${fmt(ms, 1)}</text>`,
    ),
    ...ticksAcc.map(
      (pct) =>
        `<text x="${PAD.left + plotW + 6}" y="${fmt(yAcc(pct) + 4, 1)}" font-size="11" fill="${ACCURACY}">${fmt(pct, 1)}%</text>`,
    ),
    `<text x="${PAD.left + plotW / 2}" y="${H - 12}" font-size="12" text-anchor="middle">cascade threshold (edge answers when its top probability ≥ threshold)</text>`,
    `<text x="16" y="${PAD.top + plotH / 2}" font-size="12" text-anchor="middle" fill="${LATENCY}" transform="rotate(-90 16 ${PAD.top + plotH / 2})">p95 latency (ms)</text>`,
    `<text x="${W - 12}" y="${PAD.top + plotH / 2}" font-size="12" text-anchor="middle" fill="${ACCURACY}" transform="rotate(90 ${W - 12} ${PAD.top + plotH / 2})">accuracy (held-out)</text>`,
    `<line x1="${PAD.left}" y1="${fmt(yMs(options.targetMs), 1)}" x2="${PAD.left + plotW}" y2="${fmt(yMs(options.targetMs), 1)}" stroke="#e63946" stroke-dasharray="5 4"/>`,
    `<text x="${PAD.left + 4}" y="${fmt(yMs(options.targetMs) - 4, 1)}" font-size="11" fill="#e63946">p95 target ${options.targetMs} ms</text>`,
    `<line x1="${fmt(x(options.calibrated), 1)}" y1="${PAD.top}" x2="${fmt(x(options.calibrated), 1)}" y2="${bottom}" stroke="#888" stroke-dasharray="2 3"/>`,
    `<text x="${fmt(x(options.calibrated) + 4, 1)}" y="${PAD.top + 12}" font-size="11" fill="#555">calibrated ${fmt(options.calibrated, 3)}</text>`,
    line(
      LATENCY,
      sorted.map((p) => yMs(p.p95Ms)),
    ),
    line(
      ACCURACY,
      sorted.map((p) => yAcc(p.accuracy * 100)),
    ),
    "</svg>",
  ].join("\n");
}
