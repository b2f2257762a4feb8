import { describe, expect, it } from "vitest";
import { breaker } from "./breaker.ts";
import { modelUnavailable, RegionError } from "./errors.ts";
import { observe } from "./observe.ts";
import { postToRegion } from "./post-to-region.ts";
import { RegionBook } from "./region-book.ts";
import type { RegionCall } from "./types.ts";

const region = { name: "eu", url: "http://eu.test", latitude: 50.11, longitude: 8.68 };
const call: RegionCall = {
  region,
  path: "/v1/classify",
  body: "{}",
  batch: 1,
  classes: 2,
  headers: {},
  deadlineAt: Date.now() + 10_000,
};
const answering = (status: number, body: unknown) => postToRegion(async () => Response.json(body, { status }));
const codeOf = async (p: Promise<unknown>) =>
  p.then(
    () => "answered",
    (err: unknown) => (err instanceof RegionError ? err.code : String(err)),
  );

describe("postToRegion's reading of a region's refusal", () => {
  it("tells a model the pool does not serve now (503 model_not_ready) from a pool that is not ready", async () => {
    const modelMissing = answering(503, {
      error: 'model "digits" is not ready: its load failed',
      code: "model_not_ready",
    });
    expect(await codeOf(modelMissing(call))).toBe("model_unavailable");
    const poolDown = answering(503, { error: "draining", code: "not_ready" });
    expect(await codeOf(poolDown(call))).toBe("status");
    const notJson = postToRegion(async () => new Response("Service Unavailable", { status: 503 }));
    expect(await codeOf(notJson(call))).toBe("status");
  });

  it("keeps the breaker closed however often one model is missing, and opens it for a failing pool", async () => {
    const options = {
      breaker: { failures: 2, cooldownMs: 30_000, maxCooldownMs: 300_000 },
      hedgeDefaultMs: 5,
      hedgeBudgetRatio: 0.1,
      hedgeBudgetBurst: 5,
      warmProbeIntervalMs: 3000,
      warmProbeLostAfterMs: 10_000,
    };
    const missing = new RegionBook([region], options);
    const guardedMissing = breaker(missing)(answering(503, { error: "not ready", code: "model_not_ready" }));
    for (let i = 0; i < 5; i++) expect(await codeOf(guardedMissing(call))).toBe("model_unavailable");
    expect(missing.admit("eu", Date.now())).toBe(true);

    const failing = new RegionBook([region], options);
    const guardedFailing = breaker(failing)(answering(500, { error: "boom", code: "internal" }));
    for (let i = 0; i < 2; i++) expect(await codeOf(guardedFailing(call))).toBe("status");
    expect(await codeOf(guardedFailing(call))).toBe("breaker_open");
  });
});

describe("an answer that waited for its model to load on demand at the region", () => {
  const TOKYO = { latitude: 35.68, longitude: 139.69, place: "35.7,139.7" };
  const withLoad = (loadMs: string | undefined) =>
    postToRegion(async () =>
      Response.json(
        { model: "m", version: "1", predictions: [{ scores: [0.5, 0.5] }] },
        { headers: { "x-model-version": "1", ...(loadMs ? { "x-edgecascade-model-load-ms": loadMs } : {}) } },
      ),
    );

  it("says how long it waited (x-edgecascade-model-load-ms)", async () => {
    expect((await withLoad("14.250")(call)).loadMs).toBe(14.25);
    expect((await withLoad(undefined)(call)).loadMs).toBeUndefined();
  });

  it("is counted, but its time is no evidence of how far the region is", async () => {
    const book = new RegionBook([region], {
      breaker: { failures: 5, cooldownMs: 30_000, maxCooldownMs: 300_000 },
      hedgeDefaultMs: 5,
      hedgeBudgetRatio: 0.1,
      hedgeBudgetBurst: 5,
      warmProbeIntervalMs: 3000,
      warmProbeLostAfterMs: 10_000,
    });
    const before = book.expectedAnswerMs("eu", TOKYO);
    const slow = (loadMs: string | undefined) =>
      observe(book)(async (c) => ({ ...(await withLoad(loadMs)(c)), ms: 40 }));
    for (let i = 0; i < 10; i++) await slow("35.000")({ ...call, location: TOKYO });
    const eu = () => book.snapshot(TOKYO).regions.find((r) => r.name === "eu")!;
    expect(eu().counters).toMatchObject({ answered: 10 });
    expect(eu().latencySamples).toBe(0);
    expect(book.expectedAnswerMs("eu", TOKYO)).toBe(before);
    // The same answer without a load is evidence.
    await slow(undefined)({ ...call, location: TOKYO });
    expect(book.expectedAnswerMs("eu", TOKYO)).toBe(40);
    // A 503 model_not_ready (still loading, or failed to load) is counted only: a slow load is not a far region.
    const loading = observe(book)(async () => {
      throw modelUnavailable("eu", 'HTTP 503: {"code":"model_not_ready"}');
    });
    for (let i = 0; i < 10; i++) await expect(loading({ ...call, location: TOKYO })).rejects.toThrow("does not serve");
    expect(eu().counters).toMatchObject({ answered: 11, modelUnavailable: 10 });
    expect(book.expectedAnswerMs("eu", TOKYO)).toBe(40);
  });
});
