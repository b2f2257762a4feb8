import { nearestRank } from "../../protocol/quantile.ts";
import { PROBE_PATHS, type ProbePath, type ProbeResult, type ProbeSummary } from "./summary.ts";

const COLORS: Record<ProbePath, string> = {
  cache: "#2a9d8f",
  edge: "#457b9d",
  regional: "#e9c46a",
  degraded: "#f4a261",
  error: "#e63946",
};
const W = 720;
const H = 260;
const PAD = { left: 56, right: 16, top: 16, bottom: 40 };

const esc = (s: string) => s.replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]!);
const fmt = (v: number) => (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2));

/**
 * The x axis range: past the 99th percentile and the target, so that a few outliers do not flatten the
 * plot; slower requests land in the last histogram bucket and at the CDF's right edge.
 */
function xMax(latencies: number[], targetMs: number): number {
  const sorted = [...latencies].sort((a, b) => a - b);
  const p99 = sorted.length ? nearestRank(sorted, 0.99) : 1;
  return Math.max(targetMs * 1.5, p99 * 1.1);
}

function axes(maxX: number, yLabel: string, targetMs: number): string {
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const x = (v: number) => PAD.left + (v / maxX) * plotW;
  const ticks = Array.from({ length: 6 }, (_, i) => (maxX * i) / 5);
  return [
    `<line x1="${PAD.left}" y1="${PAD.top + plotH}" x2="${PAD.left + plotW}" y2="${PAD.top + plotH}" stroke="#333"/>`,
    `<line x1="${PAD.left}" y1="${PAD.top}" x2="${PAD.left}" y2="${PAD.top + plotH}" stroke="#333"/>`,
    ...ticks.map(
      (t) =>
        `<text x="${x(t).toFixed(1)}" y="${H - 22}" font-size="11" text-anchor="middle">${fmt(t)}</text>` +
        `<line x1="${x(t).toFixed(1)}" y1="${PAD.top + plotH}" x2="${x(t).toFixed(1)}" y2="${PAD.top + plotH + 4}" stroke="#333"/>`,
    ),
    `<text x="${PAD.left + plotW / 2}" y="${H - 4}" font-size="12" text-anchor="middle">latency (ms)</text>`,
    `<text x="14" y="${PAD.top + plotH / 2}" font-size="12" text-anchor="middle" transform="rotate(-90 14 ${PAD.top + plotH / 2})">${yLabel}</text>`,
    targetMs <= maxX
      ? `<line x1="${x(targetMs)}" y1="${PAD.top}" x2="${x(targetMs)}" y2="${PAD.top + plotH}" stroke="#e63946" stroke-dasharray="4 3"/>` +
        `<text x="${x(targetMs) + 4}" y="${PAD.top + plotH - 6}" font-size="11" fill="#e63946">target ${targetMs} ms</text>`
      : "",
  ].join("");
}

/** Stacked histogram of latencies by path, as inline SVG. */
export function histogramSvg(results: readonly ProbeResult[], targetMs: number, buckets = 48): string {
  const maxX = xMax(
    results.map((r) => r.latencyMs),
    targetMs,
  );
  const counts = new Map<ProbePath, number[]>(PROBE_PATHS.map((p) => [p, new Array<number>(buckets).fill(0)]));
  for (const r of results) {
    const b = Math.min(buckets - 1, Math.floor((r.latencyMs / maxX) * buckets));
    counts.get(r.path)![b]!++;
  }
  const totals = Array.from({ length: buckets }, (_, b) => PROBE_PATHS.reduce((s, p) => s + counts.get(p)![b]!, 0));
  const maxY = Math.max(1, ...totals);
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const bw = plotW / buckets;
  const bars: string[] = [];
  for (let b = 0; b < buckets; b++) {
    let y = PAD.top + plotH;
    for (const p of PROBE_PATHS) {
      const c = counts.get(p)![b]!;
      if (!c) continue;
      const h = (c / maxY) * plotH;
      y -= h;
      bars.push(
        `<rect x="${(PAD.left + b * bw).toFixed(1)}" y="${y.toFixed(1)}" width="${Math.max(1, bw - 1).toFixed(1)}" height="${h.toFixed(1)}" fill="${COLORS[p]}"><title>${p}: ${c}</title></rect>`,
      );
    }
  }
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="latency histogram">${axes(maxX, `requests (max ${maxY})`, targetMs)}${bars.join("")}</svg>`;
}

/** Cumulative distribution per path and overall, as inline SVG. */
export function cdfSvg(results: readonly ProbeResult[], targetMs: number): string {
  const maxX = xMax(
    results.map((r) => r.latencyMs),
    targetMs,
  );
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const x = (v: number) => PAD.left + (Math.min(v, maxX) / maxX) * plotW;
  const y = (q: number) => PAD.top + plotH - q * plotH;
  const line = (values: number[], color: string, name: string, width: number) => {
    const sorted = [...values].sort((a, b) => a - b);
    const step = Math.max(1, Math.floor(sorted.length / 400));
    const points: string[] = [`${x(0).toFixed(1)},${y(0).toFixed(1)}`];
    for (let i = 0; i < sorted.length; i += step)
      points.push(`${x(sorted[i]!).toFixed(1)},${y((i + 1) / sorted.length).toFixed(1)}`);
    points.push(`${x(sorted.at(-1)!).toFixed(1)},${y(1).toFixed(1)}`);
    return `<polyline fill="none" stroke="${color}" stroke-width="${width}" points="${points.join(" ")}"><title>${name}</title></polyline>`;
  };
  const lines = PROBE_PATHS.flatMap((p) => {
    const values = results.filter((r) => r.path === p).map((r) => r.latencyMs);
    return values.length ? [line(values, COLORS[p], p, 1.5)] : [];
  });
  if (results.length)
    lines.push(
      line(
        results.map((r) => r.latencyMs),
        "#111",
        "overall",
        2.5,
      ),
    );
  const p95 = `<line x1="${PAD.left}" y1="${y(0.95)}" x2="${PAD.left + plotW}" y2="${y(0.95)}" stroke="#999" stroke-dasharray="2 3"/><text x="${PAD.left + 4}" y="${y(0.95) - 3}" font-size="11" fill="#666">p95</text>`;
  return `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="latency CDF">${axes(maxX, "share of requests", targetMs)}${p95}${lines.join("")}</svg>`;
}

/** A self-contained HTML report: summary table, histogram and CDF (no external resources). */
export function renderReport(summary: ProbeSummary, results: readonly ProbeResult[]): string {
  const rows = [
    ...PROBE_PATHS.flatMap((p) => (summary.paths[p] ? [[p, summary.paths[p]!] as const] : [])),
    ["overall", summary.overall] as const,
  ];
  const table = rows
    .map(
      ([name, s]) =>
        `<tr><td><span class="dot" style="background:${name === "overall" ? "#111" : COLORS[name as ProbePath]}"></span>${name}</td><td>${s.count}</td><td>${fmt(s.p50Ms)}</td><td>${fmt(s.p95Ms)}</td><td>${fmt(s.p99Ms)}</td><td>${fmt(s.maxMs)}</td></tr>`,
    )
    .join("");
  const verdict = summary.target.holds
    ? `<p class="ok">p95 target of ${summary.target.p95Ms} ms holds (measured ${summary.target.measuredP95Ms} ms).</p>`
    : `<p class="bad">p95 target of ${summary.target.p95Ms} ms does NOT hold (measured ${summary.target.measuredP95Ms ?? "∞"} ms).</p>`;
  const regions = Object.entries(summary.regions)
    .map(([r, n]) => `${esc(r)}: ${n}`)
    .join(", ");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>edgecascade probe report</title>
<style>body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#111;max-width:760px}table{border-collapse:collapse}
td,th{padding:4px 10px;border-bottom:1px solid #ddd;text-align:right}td:first-child,th:first-child{text-align:left}
.dot{display:inline-block;width:10px;height:10px;border-radius:50%;margin-right:6px}.ok{color:#2a7a2a;font-weight:600}
.bad{color:#c1121f;font-weight:600}svg{max-width:100%;height:auto}</style></head><body>
<h1>edgecascade probe report</h1>
<p>${esc(summary.url)} · started ${esc(summary.startedAt)} · ${summary.durationS} s at ${summary.rateRps} req/s ·
sent ${summary.sent} · answered ${summary.completed} · errors ${summary.errors} (${(summary.errorRate * 100).toFixed(2)}%) ·
label mismatches ${summary.mismatches}${regions ? ` · regions ${regions}` : ""}</p>
${verdict}
<table><thead><tr><th>path</th><th>count</th><th>p50 ms</th><th>p95 ms</th><th>p99 ms</th><th>max ms</th></tr></thead><tbody>${table}</tbody></table>
${
  summary.floor
    ? `<p>The probe's own floor (the same requests and schedule against a no-op server): p50 ${summary.floor.p50Ms.toFixed(2)} ms,
p95 ${summary.floor.p95Ms.toFixed(2)} ms, p99 ${summary.floor.p99Ms.toFixed(2)} ms. Every latency above includes about this much of the probe's own.</p>`
    : ""
}
<h2>Latency histogram</h2>
${histogramSvg(results, summary.target.p95Ms)}
<h2>Cumulative distribution</h2>
${cdfSvg(results, summary.target.p95Ms)}
${summary.errorSamples.length ? `<h2>Errors</h2><ul>${summary.errorSamples.map((e) => `<li>${esc(e)}</li>`).join("")}</ul>` : ""}
</body></html>
`;
}
