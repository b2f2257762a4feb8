import { describe, expect, it } from "vitest";
import { tradeoffSvg } from "./chart.ts";

const points = [
  { threshold: 0.9, p95Ms: 14, accuracy: 0.978, edgeShare: 0.9 },
  { threshold: 0.5, p95Ms: 6, accuracy: 0.97, edgeShare: 0.99 },
  { threshold: 0.678, p95Ms: 7, accuracy: 0.9778, edgeShare: 0.975 },
];

describe("tradeoffSvg", () => {
  const svg = tradeoffSvg(points, { targetMs: 10, calibrated: 0.678 });

  it("is a standalone SVG with one line per measure, a point per threshold, in threshold order", () => {
    expect(svg.startsWith('<svg xmlns="http://www.w3.org/2000/svg"')).toBe(true);
    expect(svg.endsWith("</svg>")).toBe(true);
    const lines = [...svg.matchAll(/<polyline [^>]*points="([^"]+)"/g)].map((m) => m[1]!.split(" "));
    expect(lines).toHaveLength(2);
    for (const line of lines) {
      expect(line).toHaveLength(3);
      const xs = line.map((p) => Number(p.split(",")[0]));
      expect(xs).toEqual([...xs].sort((a, b) => a - b));
    }
    expect(svg.match(/<circle /g)).toHaveLength(6);
  });

  it("puts a slower p95 higher up (smaller y) and marks the target and the calibrated threshold", () => {
    const latency = [...svg.matchAll(/<polyline [^>]*points="([^"]+)"/g)][0]![1]!.split(" ");
    const ys = latency.map((p) => Number(p.split(",")[1]));
    expect(ys[2]).toBeLessThan(ys[0]!); // 14 ms at 0.9 above 6 ms at 0.5
    expect(svg).toContain("p95 target 10 ms");
    expect(svg).toContain("calibrated 0.678");
  });

  it("refuses to draw nothing", () => {
    expect(() => tradeoffSvg([], { targetMs: 10, calibrated: 0.5 })).toThrow("no trade-off points");
  });
});
