import { describe, expect, it } from "vitest";
import { cdfSvg, histogramSvg, renderReport } from "./report-html.ts";
import { type ProbeResult, summarize } from "./summary.ts";

const results: ProbeResult[] = [
  ...Array.from({ length: 30 }, (_, i) => ({ path: "cache", latencyMs: 0.5 + i * 0.01, status: 200 }) as ProbeResult),
  ...Array.from({ length: 10 }, (_, i) => ({ path: "edge", latencyMs: 3 + i * 0.1, status: 200 }) as ProbeResult),
  { path: "regional", latencyMs: 18, status: 200, region: "eu" },
  { path: "error", latencyMs: 5, status: 0, error: "<refused>" },
];

describe("probe HTML report", () => {
  it("draws one bar segment per non-empty bucket and path, summing to the requests", () => {
    const svg = histogramSvg(results, 10, 20);
    const titles = [...svg.matchAll(/<title>(\w+): (\d+)<\/title>/g)];
    const total = titles.reduce((s, m) => s + Number(m[2]), 0);
    expect(total).toBe(results.length);
    expect(new Set(titles.map((m) => m[1]))).toEqual(new Set(["cache", "edge", "regional", "error"]));
    expect(svg).toContain("target 10 ms");
  });

  it("draws a CDF line per path plus overall", () => {
    const svg = cdfSvg(results, 10);
    expect([...svg.matchAll(/<polyline/g)]).toHaveLength(5);
    expect(svg).toContain("<title>overall</title>");
  });

  it("renders a self-contained page with the verdict and escaped errors", () => {
    const summary = summarize(results, {
      url: "http://edge",
      startedAt: "now",
      durationS: 1,
      rateRps: 42,
      sent: 42,
      targetP95Ms: 2,
    });
    const html = renderReport(summary, results);
    expect(html).toContain("<!doctype html>");
    expect(html).not.toMatch(/<(script|link|img)\b[^>]*(src|href)=/);
    expect(html).toContain("p95 target of 2 ms does NOT hold (measured 3.9 ms)");
    expect(html).toContain("&lt;refused&gt;");
    expect(html).toContain("sent 42");
  });
});
