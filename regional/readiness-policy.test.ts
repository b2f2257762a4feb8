import { describe, expect, it } from "vitest";
import {
  demandLoadAllowed,
  failedModels,
  failedReason,
  loadDue,
  type ModelLifecycleView,
  notReadyLines,
  poolReady,
  waitsForLoad,
  whyNotServing,
} from "./readiness-policy.ts";

const model = (fields: Partial<ModelLifecycleView> = {}): ModelLifecycleView => ({
  wanted: true,
  unloaded: false,
  evicted: false,
  serving: false,
  loading: false,
  failures: 0,
  retryAtMs: 0,
  ...fields,
});
const serving = model({ serving: true });
const loading = model({ loading: true });
const failed = model({ failures: 2, lastError: "checksum mismatch" });
const unloaded = model({ wanted: false, unloaded: true });
/** A model that loads on demand (not pinned), not loaded yet. */
const onDemand = model({ wanted: false });

describe("poolReady", () => {
  it.each([
    ["one model serving", [serving], true],
    ["one serving, one whose load failed", [serving, failed], true],
    ["one serving, one still on its first load", [serving, loading], false],
    ["every load failed", [failed, failed], false],
    ["nothing serving, the rest unloaded", [unloaded], false],
    ["no model", [], false],
    ["an unloaded model is not waited for", [serving, unloaded], true],
    ["a failed model loading again keeps its failure", [serving, model({ loading: true, failures: 1 })], true],
    ["every model loads on demand: ready with none loaded", [onDemand, onDemand], true],
    ["on demand, one failed: the others still serve", [onDemand, model({ wanted: false, failures: 1 })], true],
    ["a pinned model still loading holds the pool back", [onDemand, loading], false],
    ["on demand, all unloaded", [unloaded, model({ wanted: false, unloaded: true })], false],
  ] as const)("%s: %s", (_what, models, ready) => {
    expect(poolReady(models)).toBe(ready);
  });
});

describe("whyNotServing", () => {
  it.each([
    [unloaded, "unloaded"],
    [model({ wanted: false, unloaded: true, lastError: "x" }), "unloaded"],
    [onDemand, "not loaded; loads on its first request"],
    [
      model({ wanted: false, evicted: true }),
      "evicted to fit the memory budget (least recently used); loads on its next request",
    ],
    [loading, "loading"],
    [model({ loading: true, lastError: "bad" }), "loading; the last attempt failed: bad"],
    [failed, "checksum mismatch"],
    [model(), "not loaded"],
  ])("%j: %s", (m, why) => {
    expect(whyNotServing(m)).toBe(why);
  });
});

describe("failedReason", () => {
  it("names why a wanted, failed model does not serve, and nothing for the others", () => {
    expect(failedReason(failed)).toBe("checksum mismatch");
    expect(failedReason(model({ failures: 1 }))).toBe("not loaded");
    for (const m of [serving, loading, unloaded, model({ serving: true, failures: 1 })]) {
      expect(failedReason(m)).toBeUndefined();
    }
  });
});

describe("waitsForLoad", () => {
  it("waits while the deadline leaves at least what loads have taken lately; before any load, only without one", () => {
    expect(waitsForLoad(5, 12)).toBe(false);
    expect(waitsForLoad(12, 12)).toBe(true);
    expect(waitsForLoad(Number.POSITIVE_INFINITY, 12)).toBe(true);
    expect(waitsForLoad(Number.POSITIVE_INFINITY, undefined)).toBe(true);
    expect(waitsForLoad(1000, undefined)).toBe(false);
  });
});

describe("demandLoadAllowed", () => {
  it("lets a request load a model that is not unloaded, not serving, and past a failure's backoff", () => {
    expect(demandLoadAllowed(onDemand, 0)).toBe(true);
    expect(demandLoadAllowed(model({ wanted: false, evicted: true }), 0)).toBe(true);
    expect(demandLoadAllowed(model({ wanted: false, loading: true, retryAtMs: 900 }), 0)).toBe(true);
    expect(demandLoadAllowed(model({ wanted: false, failures: 1, retryAtMs: 500 }), 499)).toBe(false);
    expect(demandLoadAllowed(model({ wanted: false, failures: 1, retryAtMs: 500 }), 500)).toBe(true);
    expect(demandLoadAllowed(unloaded, 1e9)).toBe(false);
    expect(demandLoadAllowed(serving, 1e9)).toBe(false);
  });
});

describe("loadDue", () => {
  it("starts a load for a wanted idle model once its backoff has passed", () => {
    expect(loadDue(model({ retryAtMs: 500 }), 499)).toBe(false);
    expect(loadDue(model({ retryAtMs: 500 }), 500)).toBe(true);
    expect(loadDue(serving, 1e9)).toBe(false);
    expect(loadDue(loading, 1e9)).toBe(false);
    expect(loadDue(unloaded, 1e9)).toBe(false);
    expect(loadDue(onDemand, 1e9)).toBe(false);
  });
});

describe("notReadyLines and failedModels", () => {
  const repository = [
    { name: "b", view: failed },
    { name: "a", view: loading },
    { name: "c", view: serving },
    { name: "d", view: onDemand },
  ];

  it("names each model waited for that does not serve, with why; a model loaded on demand is not waited for", () => {
    expect(notReadyLines(repository)).toEqual(["b: checksum mismatch", "a: loading"]);
    expect(notReadyLines([])).toEqual(["no models found"]);
  });

  it("lists the models whose last load failed, in name order", () => {
    const cold = { name: "0", view: model({ wanted: false, failures: 1, lastError: "no room" }) };
    expect(failedModels([...repository, cold])).toEqual([
      { model: "0", reason: "no room" },
      { model: "b", reason: "checksum mismatch" },
    ]);
  });
});
