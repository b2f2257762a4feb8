import { describe, expect, it } from "vitest";
import { PSI_ALERT } from "../../protocol/drift.ts";
import { wilson } from "../../protocol/wilson.ts";
import { auditDataPoint, type RequestRecord, requestDataPoint } from "./data-point.ts";
import { edgeFigures, type StoredPoint, weightedQuantile } from "./figures.ts";

const stored = (point: AnalyticsEngineDataPoint, sampleInterval = 1): StoredPoint => ({
  blobs: point.blobs as string[],
  doubles: point.doubles!,
  sampleInterval,
});
const request = (r: Partial<RequestRecord>, sampleInterval = 1) =>
  stored(
    requestDataPoint({
      tier: "edge",
      model: "m",
      version: "1",
      colo: "FRA",
      tenant: "t",
      status: 200,
      label: "a",
      traceId: "x",
      latencyMs: 0,
      rows: 1,
      confidence: 0.9,
      ...r,
    }),
    sampleInterval,
  );
const BASELINES = { m: { labels: ["a", "b", "c", "d"], versions: { "1": [25, 25, 25, 25] } } };

describe("edgeFigures", () => {
  it("shares of the tiers and the degraded reasons, weighted by the sample interval; errors apart", () => {
    const figures = edgeFigures(
      [
        request({ tier: "edge" }, 6),
        request({ tier: "cache" }, 2),
        request({ tier: "regional" }),
        request({ tier: "degraded", degraded: "too-far" }),
        request({ tier: "error", status: 400, label: "" }, 5),
      ],
      BASELINES,
    );
    expect(figures.models.m).toMatchObject({
      answered: 10,
      edge: 6,
      errors: 5,
      edgeShare: 0.6,
      cacheShare: 0.2,
      degradedRate: 0.1,
      degradedReasons: { "too-far": 1 },
    });
  });

  it("p95 and p99 per colo, weighted", () => {
    const points = [
      ...Array.from({ length: 90 }, (_, i) => request({ colo: "FRA", latencyMs: i % 10 })),
      request({ colo: "FRA", latencyMs: 50 }, 10),
      request({ colo: "NRT", latencyMs: 3 }),
    ];
    const { latency } = edgeFigures(points, BASELINES);
    expect(latency.FRA).toEqual({ requests: 100, p95Ms: 50, p99Ms: 50 });
    expect(latency.NRT).toEqual({ requests: 1, p95Ms: 3, p99Ms: 3 });
    expect(
      weightedQuantile(
        [
          { value: 1, weight: 95 },
          { value: 9, weight: 5 },
        ],
        0.95,
      ),
    ).toBe(1);
  });

  it("audit agreement with its Wilson interval; failed audits counted apart", () => {
    const audit = (agreeing: number, rows: number, outcome: "agree" | "disagree" | "failed") =>
      stored(
        auditDataPoint({
          model: "m",
          version: "1",
          region: "eu",
          tenant: "t",
          outcome,
          status: "200",
          traceId: "x",
          regionMs: 1,
          rows,
          agreeing,
        }),
      );
    const { audits } = edgeFigures([audit(2, 2, "agree"), audit(0, 1, "disagree"), audit(0, 1, "failed")], BASELINES);
    const w = wilson(2, 3);
    expect(audits.m).toEqual({
      rows: 3,
      agreeing: 2,
      failed: 1,
      agreement: 2 / 3,
      interval: { lower: w.lower, upper: w.upper },
    });
  });

  it("drift: the held-out mix is none, a two-class stream is over the threshold", () => {
    const mix = ["a", "b", "c", "d"].flatMap((label) => Array.from({ length: 30 }, () => request({ label })));
    expect(edgeFigures(mix, BASELINES).drift.m?.["1"]).toMatchObject({ predictions: 120, psi: 0, drifted: false });
    const two = ["a", "b"].flatMap((label) => Array.from({ length: 60 }, () => request({ label, confidence: 0.97 })));
    const drift = edgeFigures(two, BASELINES).drift.m!["1"]!;
    expect(drift.psi).toBeGreaterThan(PSI_ALERT);
    expect(drift.confidence["0.99"]).toBe(120);
  });
});
