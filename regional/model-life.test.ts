import { describe, expect, it } from "vitest";
import {
  discovered,
  IllegalLifeStep,
  indexRows,
  type LifeEffect,
  type LifeEvent,
  lifecycleView,
  lifeStep,
  loadWanted,
  type ModelEntry,
  servingVersion,
} from "./model-life.ts";

/** Versions are plain strings here: the lifecycle holds whatever the repository gives it. */
type V = string;
const BACKOFF = { initialMs: 1_000, maxMs: 30_000 };
const failed = (reason: string, nowMs = 0): LifeEvent<V> => ({ type: "load-failed", reason, nowMs, backoff: BACKOFF });

/** Events one after another from `entry` (default: just discovered); the entry after them and every effect. */
function run(events: LifeEvent<V>[], entry: ModelEntry<V> = discovered<V>()) {
  const effects: LifeEffect<V>[] = [];
  for (const event of events) {
    const step = lifeStep(entry, event);
    entry = step.entry;
    effects.push(...step.effects);
  }
  return { entry, effects };
}

const serving = (version: V) =>
  run([
    { type: "load-started", version: undefined },
    { type: "loaded", version },
  ]).entry;

describe("lifeStep: loads", () => {
  it("a first load: available, loading, serving; the version made ready", () => {
    const loading = run([{ type: "load-started", version: "1" }]);
    expect(loading.entry.life).toEqual({ state: "loading", version: "1", wanted: true });
    const done = run([{ type: "loaded", version: "v1" }], loading.entry);
    expect(done.entry.life).toEqual({ state: "serving", serving: "v1" });
    expect(done.effects).toEqual([{ type: "ready", version: "v1" }]);
  });

  it("a reload keeps the old version serving while it loads, then swaps it out to finish its requests", () => {
    const loading = run([{ type: "load-started", version: undefined }], serving("v1"));
    expect(servingVersion(loading.entry.life)).toBe("v1");
    const swapped = run([{ type: "loaded", version: "v2" }], loading.entry);
    expect(swapped.entry).toEqual({ life: { state: "serving", serving: "v2" }, retiring: new Set(["v1"]) });
    expect(swapped.effects).toEqual([
      { type: "retire", version: "v1" },
      { type: "ready", version: "v2" },
    ]);
    expect(run([{ type: "drained", version: "v1" }], swapped.entry).entry.retiring).toEqual(new Set());
  });

  it("a failed load: the reason, the failures in a row and the backoff; a retry keeps them until it ends", () => {
    const first = run([{ type: "load-started", version: undefined }, failed("checksum mismatch", 100)]).entry;
    expect(first.life).toEqual({
      state: "failed",
      failures: { count: 1, reason: "checksum mismatch", retryAtMs: 1_100 },
    });
    const retrying = run([{ type: "load-started", version: undefined }], first).entry;
    expect(lifecycleView(retrying.life)).toMatchObject({
      loading: true,
      failures: 1,
      lastError: "checksum mismatch",
    });
    const second = run([failed("still wrong", 5_000)], retrying).entry;
    expect(second.life).toEqual({ state: "failed", failures: { count: 2, reason: "still wrong", retryAtMs: 7_000 } });
    expect(
      run(
        [
          { type: "load-started", version: undefined },
          { type: "loaded", version: "v1" },
        ],
        second,
      ).entry.life,
    ).toEqual({ state: "serving", serving: "v1" });
  });

  it("a failed reload leaves the serving version serving", () => {
    const entry = run([{ type: "load-started", version: "2" }, failed("bad file")], serving("v1")).entry;
    expect(entry.life).toEqual({ state: "serving", serving: "v1" });
  });
});

describe("lifeStep: unloads", () => {
  it("retires the serving version and the candidate; unloading until both are released, then available, not wanted", () => {
    const rollout = run([{ type: "candidate-loaded", version: "v2" }], serving("v1")).entry;
    const unloading = run([{ type: "unload-requested" }, { type: "unloaded" }], rollout);
    expect(unloading.entry).toEqual({ life: { state: "unloading" }, retiring: new Set(["v1", "v2"]) });
    expect(unloading.effects).toEqual([
      { type: "retire", version: "v2" },
      { type: "retire", version: "v1" },
    ]);
    expect(lifecycleView(unloading.entry.life)).toMatchObject({ wanted: false, unloaded: true, serving: false });
    const one = run([{ type: "drained", version: "v1" }], unloading.entry).entry;
    expect(one.life).toEqual({ state: "unloading" });
    expect(run([{ type: "drained", version: "v2" }], one).entry.life).toEqual({ state: "available", wanted: false });
  });

  it("an unload during a load makes that load's version nobody's: it is discarded", () => {
    const loading = run([{ type: "load-started", version: undefined }, { type: "unload-requested" }]).entry;
    expect(loadWanted(loading.life)).toBe(false);
    expect(() => lifeStep(loading, { type: "loaded", version: "v1" })).toThrow(IllegalLifeStep);
    const discarded = run([{ type: "load-discarded" }, { type: "unloaded" }], loading).entry;
    expect(discarded.life).toEqual({ state: "available", wanted: false });
    // A failure of that load is no failure of a wanted model: nothing to retry.
    expect(run([failed("x"), { type: "unloaded" }], loading).entry.life).toEqual({ state: "available", wanted: false });
  });

  it("a load after an unload makes the model wanted again", () => {
    const unloaded = run([{ type: "unloaded" }], serving("v1")).entry;
    const reloaded = run(
      [
        { type: "load-started", version: undefined },
        { type: "loaded", version: "v1b" },
      ],
      unloaded,
    );
    expect(reloaded.entry.life).toEqual({ state: "serving", serving: "v1b" });
    expect(reloaded.entry.retiring).toEqual(new Set(["v1"]));
  });
});

describe("lifeStep: eviction", () => {
  it("retires the serving version and leaves the model available, evicted, loadable again by a request", () => {
    const evicted = run([{ type: "evicted" }], serving("v1"));
    expect(evicted.entry).toEqual({
      life: { state: "available", wanted: true, evicted: true },
      retiring: new Set(["v1"]),
    });
    expect(evicted.effects).toEqual([{ type: "retire", version: "v1" }]);
    // Not pinned: nothing waits for it or loads it but a request, which says why it is not loaded.
    expect(lifecycleView(evicted.entry.life, false)).toMatchObject({ wanted: false, unloaded: false, evicted: true });
    expect(indexRows("digits", evicted.entry, (v) => v, false)).toEqual([
      { name: "digits", version: "v1", state: "UNLOADING" },
      {
        name: "digits",
        state: "UNAVAILABLE",
        reason: "evicted to fit the memory budget (least recently used); loads on its next request",
      },
    ]);
    // Its next load may start while the evicted version still finishes its requests.
    const again = run(
      [
        { type: "load-started", version: undefined },
        { type: "loaded", version: "v1b" },
        { type: "drained", version: "v1" },
      ],
      evicted.entry,
    );
    expect(again.entry).toEqual({ life: { state: "serving", serving: "v1b" }, retiring: new Set() });
  });

  it("a model loaded on demand and never loaded reads as such", () => {
    expect(lifecycleView(discovered<V>().life, false)).toMatchObject({
      wanted: false,
      unloaded: false,
      evicted: false,
    });
    expect(indexRows("digits", discovered<V>(), (v) => v, false)).toEqual([
      { name: "digits", state: "UNAVAILABLE", reason: "not loaded; loads on its first request" },
    ]);
  });
});

describe("lifeStep: a rollout's candidate", () => {
  it("stands beside the serving version, answers clients once told, and is promoted or dropped", () => {
    const loaded = run([{ type: "candidate-loaded", version: "v2" }], serving("v1"));
    expect(loaded.entry.life).toEqual({ state: "serving", serving: "v1", candidate: { version: "v2", serves: false } });
    expect(loaded.effects).toEqual([{ type: "ready", version: "v2" }]);
    const canary = run([{ type: "candidate-serves", serves: true }], loaded.entry).entry;
    expect(canary.life).toMatchObject({ candidate: { version: "v2", serves: true } });

    const promoted = run([{ type: "candidate-promoted" }], canary);
    expect(promoted.entry).toEqual({ life: { state: "serving", serving: "v2" }, retiring: new Set(["v1"]) });
    const dropped = run([{ type: "candidate-dropped" }], canary);
    expect(dropped.entry).toEqual({ life: { state: "serving", serving: "v1" }, retiring: new Set(["v2"]) });
  });

  it("a new candidate retires the one before it", () => {
    const entry = run(
      [
        { type: "candidate-loaded", version: "v2" },
        { type: "candidate-loaded", version: "v3" },
      ],
      serving("v1"),
    );
    expect(entry.entry.life).toMatchObject({ candidate: { version: "v3" } });
    expect(entry.entry.retiring).toEqual(new Set(["v2"]));
  });
});

describe("lifeStep: what no state takes", () => {
  it.each<[string, ModelEntry<V>, LifeEvent<V>]>([
    ["a candidate beside nothing", discovered(), { type: "candidate-loaded", version: "v2" }],
    ["a version with no load running", serving("v1"), { type: "loaded", version: "v2" }],
    [
      "a second load while one runs",
      run([{ type: "load-started", version: undefined }]).entry,
      { type: "load-started", version: "2" },
    ],
    [
      "a load during a rollout",
      run([{ type: "candidate-loaded", version: "v2" }], serving("v1")).entry,
      { type: "load-started", version: undefined },
    ],
    ["an unload while a load runs", run([{ type: "load-started", version: undefined }]).entry, { type: "unloaded" }],
    ["a failure with no load running", serving("v1"), failed("x")],
    ["an eviction of a model that does not serve", discovered(), { type: "evicted" }],
    ["an eviction while a load runs", run([{ type: "load-started", version: undefined }]).entry, { type: "evicted" }],
    [
      "an eviction during a rollout",
      run([{ type: "candidate-loaded", version: "v2" }], serving("v1")).entry,
      { type: "evicted" },
    ],
  ])("%s", (_what, entry, event) => {
    expect(() => lifeStep(entry, event)).toThrow(IllegalLifeStep);
  });
});

describe("indexRows", () => {
  it("lists what serves, the candidate, what retires and what loads; a reason when nothing serves", () => {
    const rollout = run([{ type: "candidate-loaded", version: "2" }], serving("1")).entry;
    expect(indexRows("digits", { ...rollout, retiring: new Set(["0"]) }, (v) => v)).toEqual([
      { name: "digits", version: "1", state: "READY" },
      { name: "digits", version: "2", state: "READY", candidate: true },
      { name: "digits", version: "0", state: "UNLOADING" },
    ]);
    const reloading = run([{ type: "load-started", version: "3" }], serving("1")).entry;
    expect(indexRows("digits", reloading, (v) => v)).toEqual([
      { name: "digits", version: "1", state: "READY" },
      { name: "digits", version: "3", state: "LOADING" },
    ]);
    const broken = run([{ type: "load-started", version: undefined }, failed("bad file")]).entry;
    expect(indexRows("digits", broken, (v) => v)).toEqual([
      { name: "digits", state: "UNAVAILABLE", reason: "bad file" },
    ]);
    expect(indexRows("digits", run([{ type: "unloaded" }]).entry, (v) => v)).toEqual([
      { name: "digits", state: "UNAVAILABLE", reason: "unloaded" },
    ]);
  });
});
