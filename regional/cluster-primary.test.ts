import { describe, expect, it } from "vitest";
import type { Message } from "./cluster-messages.ts";
import {
  CONTROL_TIMEOUT_MS,
  initialPrimary,
  type PrimaryEffect,
  type PrimaryEvent,
  type PrimaryState,
  primaryStep,
  type WorkerView,
} from "./cluster-primary.ts";
import type { MetricsJson } from "./metrics.ts";
import type { Settled } from "./model-control.ts";
import type { ModelStatistics } from "./model-stats.ts";

/** Workers `ids`, all connected, with pid 1000 + id. */
const workersOf = (...ids: number[]): WorkerView[] => ids.map((id) => ({ id, pid: 1000 + id, connected: true }));

/** Run events one after another against the same world; the state after them and every effect. */
function run(state: PrimaryState, events: PrimaryEvent[], world: WorkerView[]) {
  const effects: PrimaryEffect[] = [];
  for (const event of events) {
    const step = primaryStep(state, event, world);
    state = step.state;
    effects.push(...step.effects);
  }
  return { state, effects };
}

const msg = (worker: number, message: Message): PrimaryEvent => ({ type: "message", worker, message });
/** Worker `worker` listens, in slot `worker - 1` (forked in order). */
const listening = (worker: number) =>
  msg(worker, { type: "edgecascade:listening", url: "http://127.0.0.1:9", port: 9, slot: worker - 1 });
const ready = (worker: number) => msg(worker, { type: "edgecascade:ready" });
const exit = (worker: number, code: number | null, signal: string | null = null): PrimaryEvent => ({
  type: "exit",
  worker,
  pid: 1000 + worker,
  code,
  signal,
});
const sends = (effects: PrimaryEffect[]) =>
  effects.filter((e): e is Extract<PrimaryEffect, { type: "send" }> => e.type === "send");
const logs = (effects: PrimaryEffect[]) =>
  effects.filter((e): e is Extract<PrimaryEffect, { type: "log" }> => e.type === "log").map((e) => e.msg);
const ok = (value: unknown): Settled<unknown> => ({ ok: true, value });

/** A pool of two workers, both started and ready. */
function readyPool() {
  return run(initialPrimary(2), [listening(1), listening(2), ready(1), ready(2)], workersOf(1, 2)).state;
}

describe("primaryStep: workers", () => {
  it("forks the wanted number of workers at start", () => {
    expect(run(initialPrimary(3), [{ type: "start" }], []).effects).toEqual([
      { type: "fork", slot: 0 },
      { type: "fork", slot: 1 },
      { type: "fork", slot: 2 },
    ]);
  });

  it("says listening and ready once each, when every worker is", () => {
    const world = workersOf(1, 2);
    const { effects } = run(initialPrimary(2), [listening(1), listening(2), ready(1), ready(2)], world);
    expect(logs(effects)).toEqual(["listening", "ready"]);
    // Every ready worker makes every connected worker learn the pool's count.
    expect(sends(effects).map((e) => [e.worker, e.message])).toEqual([
      [1, { type: "edgecascade:pool-ready", ready: 1, workers: 2 }],
      [2, { type: "edgecascade:pool-ready", ready: 1, workers: 2 }],
      [1, { type: "edgecascade:pool-ready", ready: 2, workers: 2 }],
      [2, { type: "edgecascade:pool-ready", ready: 2, workers: 2 }],
    ]);
  });

  it("replaces a worker that dies after it started, and tells the others the pool lost one", () => {
    const { state, effects } = run(readyPool(), [exit(2, 1)], workersOf(1));
    expect(effects).toEqual([
      { type: "send", worker: 1, message: { type: "edgecascade:pool-ready", ready: 1, workers: 2 } },
      {
        type: "log",
        level: "warn",
        msg: "a worker died; starting a replacement",
        fields: { pid: 1002, code: 1, signal: null },
      },
      // Into the slot of the worker it replaces: the models hashed to slot 1 keep their owner.
      { type: "fork", slot: 1 },
    ]);
    expect(state.failed).toBe(false);
    expect([...state.slots]).toEqual([[1, 0]]);
  });

  it("replaces and logs a started worker that exits with code 0 on its own, as one that dies", () => {
    const { state, effects } = run(readyPool(), [exit(2, 0)], workersOf(1));
    expect(effects).toEqual([
      { type: "send", worker: 1, message: { type: "edgecascade:pool-ready", ready: 1, workers: 2 } },
      {
        type: "log",
        level: "warn",
        msg: "a worker exited; starting a replacement",
        fields: { pid: 1002, code: 0, signal: null },
      },
      { type: "fork", slot: 1 },
    ]);
    expect(state.failed).toBe(false);
    expect([...state.slots]).toEqual([[1, 0]]);
    // One that exits 0 before it listened stops the pool, as one that fails to start.
    const start = run(initialPrimary(2), [listening(1)], workersOf(1, 2)).state;
    expect(logs(run(start, [exit(2, 0)], workersOf(1)).effects)).toContain("a worker failed to start; stopping");
  });

  it("stops the pool, and exits 1, when a worker fails before it listened", () => {
    const start = run(initialPrimary(2), [listening(1)], workersOf(1, 2)).state;
    const failed = run(start, [exit(2, 1)], workersOf(1));
    expect(failed.effects).toContainEqual({ type: "kill", signal: "SIGTERM" });
    expect(failed.effects.some((e) => e.type === "fork")).toBe(false);
    expect(logs(failed.effects)).toEqual([
      "a worker failed to start; stopping",
      "stopping 1 workers (a worker failed to start)",
    ]);
    expect(run(failed.state, [exit(1, 0)], []).effects).toContainEqual({ type: "exit", code: 1 });
  });

  it("stops once on SIGTERM and SIGINT, replaces no one while stopping, and exits 0 when all drained", () => {
    const stop = run(
      readyPool(),
      [
        { type: "signal", signal: "SIGTERM" },
        { type: "signal", signal: "SIGINT" },
      ],
      workersOf(1, 2),
    );
    expect(stop.effects.filter((e) => e.type === "kill")).toEqual([{ type: "kill", signal: "SIGTERM" }]);
    const drained = run(stop.state, [exit(1, 0)], workersOf(2));
    expect(drained.effects.some((e) => e.type === "fork" || e.type === "exit")).toBe(false);
    expect(drained.effects).toContainEqual({
      type: "log",
      level: "info",
      msg: "a worker stopped",
      fields: { pid: 1001, code: 0, signal: null },
    });
    expect(run(drained.state, [exit(2, 0)], []).effects).toContainEqual({ type: "exit", code: 0 });
  });

  it("exits 1 when a ready worker fails while the pool stops, 0 for one killed during its start-up", () => {
    const stopping = run(readyPool(), [{ type: "signal", signal: "SIGTERM" }], workersOf(1, 2)).state;
    const failed = run(stopping, [exit(1, 1), exit(2, 0)], []);
    expect(logs(failed.effects)).toContain("a worker failed while the pool stopped");
    expect(failed.effects).toContainEqual({ type: "exit", code: 1 });

    const starting = run(initialPrimary(1), [listening(1), { type: "signal", signal: "SIGTERM" }], workersOf(1));
    const stopped = run(starting.state, [exit(1, null, "SIGTERM")], []);
    expect(logs(stopped.effects)).toEqual(["a worker stopped during its start-up", "all workers exited"]);
    expect(stopped.effects).toContainEqual({ type: "exit", code: 0 });
  });

  it("passes SIGHUP on to every worker", () => {
    expect(run(readyPool(), [{ type: "signal", signal: "SIGHUP" }], workersOf(1, 2)).effects).toEqual([
      { type: "log", level: "info", msg: "SIGHUP: workers reload every model" },
      { type: "kill", signal: "SIGHUP" },
    ]);
  });

  it("leaves the state it was given unchanged", () => {
    const before = readyPool();
    const copy = { ...before, started: new Set(before.started), ready: new Set(before.ready) };
    run(before, [exit(2, 1), msg(1, { type: "edgecascade:metrics-request", id: 1 })], workersOf(1));
    expect(before).toEqual(copy);
    expect(before.collections.size).toBe(0);
  });
});

describe("primaryStep: model control", () => {
  const load = (worker: number, id: number, args: unknown[] = ["digits", "2"]) =>
    msg(worker, { type: "edgecascade:control-request", id, op: "load", args });
  const result = (worker: number, id: number, settled: Settled<unknown>) =>
    msg(worker, { type: "edgecascade:control-result", id, result: settled });

  it("runs a call in every started worker and answers the asking one with all results, in worker order", () => {
    // Worker 3 is connected but has not listened yet: it is not asked (it catches up by replay).
    const world = workersOf(1, 2, 3);
    const asked = run(readyPool(), [load(2, 7)], world);
    expect(asked.effects).toEqual([
      { type: "set-timer", timer: "control", id: 0, ms: CONTROL_TIMEOUT_MS },
      {
        type: "send",
        worker: 1,
        message: { type: "edgecascade:control-run", id: 0, op: "load", args: ["digits", "2"] },
      },
      {
        type: "send",
        worker: 2,
        message: { type: "edgecascade:control-run", id: 0, op: "load", args: ["digits", "2"] },
      },
    ]);
    const done = run(asked.state, [result(2, 0, ok("two")), result(1, 0, ok("one"))], world);
    expect(done.effects).toEqual([
      { type: "cancel-timer", timer: "control", id: 0 },
      {
        type: "send",
        worker: 2,
        message: { type: "edgecascade:control-results", id: 7, results: [ok("one"), ok("two")] },
      },
    ]);
    expect(done.state.controls.size).toBe(0);
    expect(done.state.replay.get("digits")).toEqual({ load: ["digits", "2"] });
  });

  it("ignores a second answer of one worker and answers of workers not asked", () => {
    const asked = run(readyPool(), [load(1, 1)], workersOf(1, 2)).state;
    const { state, effects } = run(
      asked,
      [result(1, 0, ok(1)), result(1, 0, ok("again")), result(3, 0, ok(3))],
      workersOf(1, 2),
    );
    expect(effects).toEqual([]);
    expect(state.controls.get(0)?.results).toEqual(new Map([[1, ok(1)]]));
  });

  it("fails a worker's part at once when it exits, and at the timeout when it stays silent", () => {
    const asked = run(readyPool(), [load(1, 1), load(1, 2)], workersOf(1, 2)).state;
    const exited = run(asked, [result(1, 0, ok(1)), exit(2, 1)], workersOf(1));
    const answer = sends(exited.effects).find((e) => e.message.type === "edgecascade:control-results");
    expect(answer?.message).toMatchObject({
      id: 1,
      results: [
        ok(1),
        { ok: false, error: { status: 503, code: "not_ready", message: "worker 2 exited before it answered" } },
      ],
    });
    // Call 1 (id 2) was asked of both; worker 2 exited, worker 1 never answered: the timeout answers for it.
    const late = run(exited.state, [{ type: "timeout", timer: "control", id: 1 }], workersOf(1));
    expect(sends(late.effects)[0]?.message).toMatchObject({
      id: 2,
      results: [
        { ok: false, error: { message: "worker 1 did not answer" } },
        { ok: false, error: { message: "worker 2 exited before it answered" } },
      ],
    });
    // A failed call is not replayed.
    expect(late.state.replay.size).toBe(0);
  });

  it("answers at once, with no results, when no worker has started", () => {
    const { effects } = run(initialPrimary(1), [load(1, 4)], workersOf(1));
    expect(sends(effects)).toEqual([
      { type: "send", worker: 1, message: { type: "edgecascade:control-results", id: 4, results: [] } },
    ]);
  });

  it("replays the latest load and rollout per model to a replacement once it is ready; an unload forgets them", () => {
    const world = workersOf(1, 2);
    const rollout = msg(1, {
      type: "edgecascade:control-request",
      id: 2,
      op: "rollout",
      args: [{ model: "digits", revision: 3 }],
    });
    let { state } = run(
      readyPool(),
      [load(1, 1), result(1, 0, ok(0)), result(2, 0, ok(0)), rollout, result(1, 1, ok(0)), result(2, 1, ok(0))],
      world,
    );
    const replaced = run(state, [exit(2, 1), listening(3), ready(3)], workersOf(1, 3));
    const replays = sends(replaced.effects).filter(
      (e) => e.worker === 3 && e.message.type === "edgecascade:control-run",
    );
    expect(replays.map((e) => e.message)).toEqual([
      { type: "edgecascade:control-run", id: -1, op: "load", args: ["digits", "2"] },
      { type: "edgecascade:control-run", id: -2, op: "rollout", args: [{ model: "digits", revision: 3 }] },
    ]);
    expect(logs(replaced.effects)).toContain("replaying model control to a replacement worker");
    // A replayed call's refusal is logged, never taken for a relayed call's answer.
    const refused = run(
      replaced.state,
      [result(3, -1, { ok: false, error: { status: 400, code: "load_failed", message: "no", headers: {} } })],
      workersOf(1, 3),
    );
    expect(refused.effects).toEqual([
      {
        type: "log",
        level: "warn",
        msg: "a replacement worker refused a replayed model control call",
        fields: { reason: "no" },
      },
    ]);

    state = replaced.state;
    const unload = msg(1, { type: "edgecascade:control-request", id: 3, op: "unload", args: ["digits"] });
    const unloaded = run(state, [unload, result(1, 2, ok(0)), result(3, 2, ok(0))], workersOf(1, 3));
    expect(unloaded.state.replay.size).toBe(0);
  });
});

describe("primaryStep: metrics and statistics", () => {
  const metrics = (n: number) => [{ name: `m${n}` }] as unknown as MetricsJson;
  const stat = { name: "digits", version: "1", inference_count: 3 } as ModelStatistics;
  const json = (worker: number, id: number, stats: ModelStatistics[] = []) =>
    msg(worker, { type: "edgecascade:metrics-json", id, metrics: metrics(worker), stats });

  it("collects every connected worker's metrics for the worker that asked", () => {
    const world = workersOf(1, 2);
    const asked = run(readyPool(), [msg(2, { type: "edgecascade:metrics-request", id: 9 })], world);
    expect(sends(asked.effects).map((e) => [e.worker, e.message])).toEqual([
      [1, { type: "edgecascade:metrics-collect", id: 0 }],
      [2, { type: "edgecascade:metrics-collect", id: 0 }],
    ]);
    const done = run(asked.state, [json(2, 0), json(1, 0), json(1, 0)], world);
    expect(done.effects).toEqual([
      { type: "cancel-timer", timer: "collect", id: 0 },
      { type: "answer-metrics", worker: 2, id: 9, metrics: [metrics(2), metrics(1)] },
    ]);
  });

  it("sums statistics, and answers with what came when the collection times out", () => {
    const world = workersOf(1, 2);
    const asked = run(readyPool(), [msg(1, { type: "edgecascade:stats-request", id: 5 })], world);
    const late = run(asked.state, [json(2, 0, [stat]), { type: "timeout", timer: "collect", id: 0 }], world);
    expect(sends(late.effects)).toEqual([
      { type: "send", worker: 1, message: { type: "edgecascade:stats", id: 5, stats: [stat] } },
    ]);
    expect(late.state.collections.size).toBe(0);
    // Answers after the timeout are dropped.
    expect(run(late.state, [json(1, 0)], world).effects).toEqual([]);
  });
});
