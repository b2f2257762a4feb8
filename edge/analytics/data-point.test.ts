import { describe, expect, it } from "vitest";
import { auditDataPoint, requestDataPoint } from "./data-point.ts";
import { BLOBS, column, DOUBLES } from "./layout.ts";

describe("data points", () => {
  it("a request's: the model as index, the issue's blobs and doubles in the documented order", () => {
    const point = requestDataPoint({
      tier: "degraded",
      degraded: "regions-failed",
      model: "digits",
      version: "1",
      colo: "FRA",
      region: "eu",
      tenant: "acme",
      status: 200,
      label: "7",
      traceId: "a".repeat(32),
      latencyMs: 12,
      edgeTop: 0.6,
      regionMs: 0,
      rows: 1,
      confidence: 0.6,
    });
    expect(point.indexes).toEqual(["digits"]);
    expect(point.blobs).toEqual([
      "degraded",
      "regions-failed",
      "digits",
      "1",
      "FRA",
      "eu",
      "acme",
      "200",
      "7",
      "a".repeat(32),
    ]);
    expect(point.doubles).toEqual([12, 0.6, 0, 1, 0, 0.6]);
    expect(point.blobs).toHaveLength(BLOBS.length);
    expect(point.doubles).toHaveLength(DOUBLES.length);
    // The layout's names are where the values are.
    expect(point.blobs?.[BLOBS.indexOf("colo")]).toBe("FRA");
    expect(point.doubles?.[DOUBLES.indexOf("edge_top")]).toBe(0.6);
    expect([column("tier"), column("trace"), column("latency_ms"), column("confidence")]).toEqual([
      "blob1",
      "blob10",
      "double1",
      "double6",
    ]);
  });

  it("an error's: empty fields and -1 where nothing was measured", () => {
    const point = requestDataPoint({
      tier: "error",
      tenant: "anonymous",
      status: 400,
      traceId: "b".repeat(32),
      latencyMs: 0,
      rows: 0,
    });
    expect(point.indexes).toEqual([""]);
    expect(point.blobs).toEqual(["error", "", "", "", "", "", "anonymous", "400", "", "b".repeat(32)]);
    expect(point.doubles).toEqual([0, -1, 0, 0, 0, -1]);
  });

  it("an audit's: its own index, its outcome and counts", () => {
    const point = auditDataPoint({
      model: "digits",
      version: "2",
      region: "us",
      tenant: "acme",
      outcome: "disagree",
      status: "200",
      traceId: "c".repeat(32),
      regionMs: 3,
      rows: 2,
      agreeing: 1,
    });
    expect(point.indexes).toEqual(["digits:audit"]);
    expect(point.blobs?.[0]).toBe("audit");
    expect(point.blobs?.[8]).toBe("disagree");
    expect(point.doubles).toEqual([3, -1, 3, 2, 1, -1]);
  });
});
