import { describe, expect, it } from "vitest";
import { RequestCounts } from "./counts.ts";

describe("RequestCounts", () => {
  const all = { model: () => true, tenant: () => true };

  it("counts answers per model by tier and per tenant by model", () => {
    const counts = new RequestCounts(["digits", "breast-cancer"], 1000);
    counts.answered("digits", "acme", "edge");
    counts.answered("digits", "acme", "cache");
    counts.answered("digits", "globex", "regional:eu");
    counts.answered("breast-cancer", "acme", "degraded");
    const snapshot = counts.snapshot(all);
    expect(snapshot.since).toBe(1000);
    expect(snapshot.models.digits).toEqual({
      answered: 3,
      cache: 1,
      edge: 1,
      regional: 1,
      degraded: 0,
      refused: 0,
      failed: 0,
      edgeFailed: 0,
    });
    expect(snapshot.models["breast-cancer"]).toMatchObject({ answered: 1, degraded: 1 });
    expect(snapshot.tenants).toEqual({
      acme: { answered: 3, models: { digits: 2, "breast-cancer": 1 }, refused: {} },
      globex: { answered: 1, models: { digits: 1 }, refused: {} },
    });
  });

  it("counts refusals per model (4xx) and failures (5xx), and per tenant by status", () => {
    const counts = new RequestCounts(["digits"], 0);
    counts.failed("digits", "acme", 403);
    counts.failed("digits", "acme", 429);
    counts.failed("digits", "acme", 503);
    counts.failed(undefined, "acme", 404);
    counts.failed("nope", undefined, 404);
    const snapshot = counts.snapshot(all);
    expect(snapshot.models.digits).toMatchObject({ answered: 0, refused: 2, failed: 1 });
    expect(Object.keys(snapshot.models)).toEqual(["digits"]);
    expect(snapshot.tenants.acme!.refused).toEqual({ 403: 1, 429: 1, 503: 1, 404: 1 });
  });

  it("counts the edge variant's failed runs per model", () => {
    const counts = new RequestCounts(["digits"], 0);
    counts.edgeFailed("digits");
    counts.edgeFailed("digits");
    counts.edgeFailed("nope");
    expect(counts.snapshot(all).models.digits).toMatchObject({ edgeFailed: 2, answered: 0, failed: 0 });
  });

  it("shows a caller only what it may see, as a copy", () => {
    const counts = new RequestCounts(["digits", "breast-cancer"], 0);
    counts.answered("digits", "acme", "edge");
    counts.answered("breast-cancer", "globex", "edge");
    const mine = counts.snapshot({ model: (m) => m === "digits", tenant: (t) => t === "acme" });
    expect(Object.keys(mine.models)).toEqual(["digits"]);
    expect(Object.keys(mine.tenants)).toEqual(["acme"]);
    mine.models.digits!.answered = 99;
    expect(counts.snapshot(all).models.digits!.answered).toBe(1);
  });
});
