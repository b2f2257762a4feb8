import type { Message } from "./cluster-messages.ts";
import { COLLECT_TIMEOUT_MS } from "./cluster-messages.ts";
import type { MetricsJson } from "./metrics.ts";
import type { ControlOp, Settled } from "./model-control.ts";
import { type ModelStatistics, sumStatistics } from "./model-stats.ts";

/**
 * The cluster primary's decisions (`--workers N`), apart from node:cluster: a state, and `primaryStep`, which
 * takes an event (a worker's message, a worker's exit, a signal, a timer) and gives the next state and the
 * effects to carry out (fork, send, signal the workers, log, set or cancel a timer, exit). cluster.ts
 * `runPrimary` is the I/O around it. What the primary does: it logs every worker's exit and replaces one that
 * exits after it started, whatever its exit code (and stops the pool when one fails to start), tells every
 * worker how many are ready (readiness is the pod's), collects every worker's metrics and statistics for
 * whichever worker was asked, relays each model control call to every started worker and answers with all
 * their results, and replays the latest load and rollout per model to a replacement once it is ready.
 */

/** How long the primary waits for every worker's answer to a control call (a load checks and warms up a model). */
export const CONTROL_TIMEOUT_MS = 120_000;
/** Replays to a replacement worker carry ids from here down, so they never meet a relayed call's. */
export const REPLAY_ID = -1;

/** A worker as node:cluster lists it when an event arrives. */
export interface WorkerView {
  id: number;
  pid: number | undefined;
  /** Its IPC channel is open: it can be sent to. */
  connected: boolean;
}

type Collected = { metrics: MetricsJson; stats: ModelStatistics[] };

/** A `/metrics` or `/v2/models/stats` request of one worker, waiting for every worker's numbers. */
interface Collection {
  kind: "metrics" | "stats";
  requester: { worker: number; id: number };
  waiting: number;
  got: readonly Collected[];
}

/** A control call relayed to every started worker, waiting for their answers. */
interface Control {
  op: ControlOp;
  args: unknown[];
  requester: { worker: number; id: number };
  /** The workers asked, in the order their answers are given back. */
  asked: readonly number[];
  results: ReadonlyMap<number, Settled<unknown>>;
}

export interface PrimaryState {
  /** Workers wanted. */
  workers: number;
  stopping: boolean;
  /** The pool exits 1: a worker failed to start, or failed while the pool stopped. */
  failed: boolean;
  announcedListening: boolean;
  announcedReady: boolean;
  address?: { url: string; port: number };
  /** Workers that listen (they have control handlers). */
  started: ReadonlySet<number>;
  /**
   * Each started worker's slot (0 to workers - 1), as it said when it listened: a replacement is forked into the
   * slot of the worker it replaces, so that the models hashed to that slot (regional/peers/) keep their owner.
   */
  slots: ReadonlyMap<number, number>;
  ready: ReadonlySet<number>;
  collections: ReadonlyMap<number, Collection>;
  nextCollect: number;
  controls: ReadonlyMap<number, Control>;
  nextControl: number;
  /** Per model, the latest explicit load and rollout state that every worker took: replayed to replacements. */
  replay: ReadonlyMap<string, { load?: unknown[]; rollout?: unknown[] }>;
  nextReplayId: number;
}

export type PrimaryEvent =
  | { type: "start" }
  | { type: "message"; worker: number; message: Message }
  | { type: "exit"; worker: number; pid: number | undefined; code: number | null; signal: string | null }
  | { type: "signal"; signal: "SIGTERM" | "SIGINT" | "SIGHUP" }
  | { type: "timeout"; timer: "collect" | "control"; id: number };

export type PrimaryEffect =
  /** Fork a worker into `slot`. */
  | { type: "fork"; slot: number }
  /** Send to a worker, if its channel is still open. */
  | { type: "send"; worker: number; message: Message }
  /** Signal every worker. */
  | { type: "kill"; signal: "SIGTERM" | "SIGHUP" }
  | { type: "log"; level: "info" | "warn" | "error"; msg: string; fields?: Record<string, unknown> }
  | { type: "set-timer"; timer: "collect" | "control"; id: number; ms: number }
  | { type: "cancel-timer"; timer: "collect" | "control"; id: number }
  /** Sum the workers' metrics (prom-client's aggregator) and send the text to the worker that asked. */
  | { type: "answer-metrics"; worker: number; id: number; metrics: MetricsJson[] }
  | { type: "exit"; code: number };

export function initialPrimary(workers: number): PrimaryState {
  return {
    workers,
    stopping: false,
    failed: false,
    announcedListening: false,
    announcedReady: false,
    started: new Set(),
    slots: new Map(),
    ready: new Set(),
    collections: new Map(),
    nextCollect: 0,
    controls: new Map(),
    nextControl: 0,
    replay: new Map(),
    nextReplayId: REPLAY_ID,
  };
}

/** The model a control call is about. */
const modelOf = (op: ControlOp, args: unknown[]) =>
  op === "rollout" ? (args[0] as { model: string }).model : String(args[0]);

const notAnswered = (message: string): Settled<unknown> => ({
  ok: false,
  error: { status: 503, code: "not_ready", message, headers: {} },
});

/**
 * The next state and effects for `event`, given the workers node:cluster lists at that moment (`world`).
 * `state` is not changed.
 */
export function primaryStep(
  state: PrimaryState,
  event: PrimaryEvent,
  world: readonly WorkerView[],
): { state: PrimaryState; effects: PrimaryEffect[] } {
  const s: Mutable = {
    ...state,
    started: new Set(state.started),
    slots: new Map(state.slots),
    ready: new Set(state.ready),
    collections: new Map(state.collections),
    controls: new Map(state.controls),
    replay: new Map(state.replay),
  };
  const effects: PrimaryEffect[] = [];
  const log = (level: "info" | "warn" | "error", msg: string, fields?: Record<string, unknown>) =>
    effects.push({ type: "log", level, msg, ...(fields ? { fields } : {}) });
  const pid = (worker: number) => world.find((w) => w.id === worker)?.pid;

  /** Every worker learns how many of the pool's workers are ready. */
  const announcePool = () => {
    for (const w of world) {
      if (w.connected) {
        const message: Message = { type: "edgecascade:pool-ready", ready: s.ready.size, workers: s.workers };
        effects.push({ type: "send", worker: w.id, message });
      }
    }
  };
  const stopAll = (reason: string) => {
    if (s.stopping) return;
    s.stopping = true;
    log("info", `stopping ${world.length} workers (${reason})`);
    effects.push({ type: "kill", signal: "SIGTERM" });
  };
  const finishCollection = (id: number) => {
    const c = s.collections.get(id)!;
    s.collections.delete(id);
    effects.push({ type: "cancel-timer", timer: "collect", id });
    const { worker, id: replyId } = c.requester;
    if (c.kind === "metrics") {
      effects.push({ type: "answer-metrics", worker, id: replyId, metrics: c.got.map((g) => g.metrics) });
    } else {
      const stats = sumStatistics(c.got.map((g) => g.stats));
      effects.push({ type: "send", worker, message: { type: "edgecascade:stats", id: replyId, stats } });
    }
  };
  const finishControl = (id: number) => {
    const c = s.controls.get(id)!;
    s.controls.delete(id);
    effects.push({ type: "cancel-timer", timer: "control", id });
    const answers = c.asked.map((w) => c.results.get(w) ?? notAnswered(`worker ${w} did not answer`));
    const model = modelOf(c.op, c.args);
    if ((c.op === "load" || c.op === "rollout") && answers.every((a) => a.ok)) {
      s.replay.set(model, { ...s.replay.get(model), [c.op]: c.args });
    }
    if (c.op === "unload" && answers.every((a) => a.ok)) s.replay.delete(model);
    const message: Message = { type: "edgecascade:control-results", id: c.requester.id, results: answers };
    effects.push({ type: "send", worker: c.requester.worker, message });
  };
  /** Record `result` of `worker` for control `id` if it was waited for; finish the call when none is left. */
  const answered = (id: number, worker: number, result: Settled<unknown>) => {
    const c = s.controls.get(id);
    if (!c?.asked.includes(worker) || c.results.has(worker)) return;
    const results = new Map(c.results).set(worker, result);
    s.controls.set(id, { ...c, results });
    if (results.size === c.asked.length) finishControl(id);
  };
  /** A replacement worker takes the latest loads and rollout states the others took. */
  const catchUp = (worker: number) => {
    for (const [model, ops] of s.replay) {
      for (const op of ["load", "rollout"] as const) {
        const args = ops[op];
        if (args) {
          const message: Message = { type: "edgecascade:control-run", id: s.nextReplayId--, op, args };
          effects.push({ type: "send", worker, message });
        }
      }
      log("info", "replaying model control to a replacement worker", { model, pid: pid(worker) });
    }
  };

  switch (event.type) {
    case "start":
      for (let slot = 0; slot < s.workers; slot++) effects.push({ type: "fork", slot });
      break;
    case "signal":
      if (event.signal === "SIGHUP") {
        log("info", "SIGHUP: workers reload every model");
        effects.push({ type: "kill", signal: "SIGHUP" });
      } else {
        stopAll(event.signal);
      }
      break;
    case "timeout":
      if (event.timer === "collect" && s.collections.has(event.id)) finishCollection(event.id);
      if (event.timer === "control" && s.controls.has(event.id)) finishControl(event.id);
      break;
    case "message":
      onMessage(event.worker, event.message);
      break;
    case "exit":
      onExit(event.worker, { pid: event.pid, code: event.code, signal: event.signal });
      break;
  }
  return { state: s, effects };

  function onMessage(worker: number, message: Message): void {
    switch (message.type) {
      case "edgecascade:control-request": {
        // Every worker that listens (one still starting has no handler yet, and catches up by replay once ready).
        const asked = world.filter((w) => w.connected && s.started.has(w.id)).map((w) => w.id);
        const id = s.nextControl++;
        const { op, args } = message;
        s.controls.set(id, { op, args, requester: { worker, id: message.id }, asked, results: new Map() });
        if (asked.length === 0) {
          finishControl(id);
          return;
        }
        effects.push({ type: "set-timer", timer: "control", id, ms: CONTROL_TIMEOUT_MS });
        const run: Message = { type: "edgecascade:control-run", id, op, args };
        for (const w of asked) effects.push({ type: "send", worker: w, message: run });
        return;
      }
      case "edgecascade:control-result":
        if (message.id <= REPLAY_ID) {
          if (!message.result.ok) {
            log("warn", "a replacement worker refused a replayed model control call", {
              reason: message.result.error.message,
            });
          }
          return;
        }
        answered(message.id, worker, message.result);
        return;
      case "edgecascade:listening":
        s.started.add(worker);
        if (message.slot !== undefined) s.slots.set(worker, message.slot);
        s.address = { url: message.url, port: message.port };
        if (!s.announcedListening && s.started.size >= s.workers) {
          s.announcedListening = true;
          log("info", "listening", { ...s.address, workers: s.workers });
        }
        return;
      case "edgecascade:ready":
        s.ready.add(worker);
        announcePool();
        if (s.announcedReady) catchUp(worker);
        if (!s.announcedReady && s.ready.size >= s.workers) {
          s.announcedReady = true;
          log("info", "ready", { ...s.address, workers: s.workers });
        }
        return;
      case "edgecascade:metrics-request":
      case "edgecascade:stats-request": {
        const live = world.filter((w) => w.connected).map((w) => w.id);
        const id = s.nextCollect++;
        const kind = message.type === "edgecascade:metrics-request" ? "metrics" : "stats";
        s.collections.set(id, { kind, requester: { worker, id: message.id }, waiting: live.length, got: [] });
        if (live.length === 0) {
          finishCollection(id);
          return;
        }
        effects.push({ type: "set-timer", timer: "collect", id, ms: COLLECT_TIMEOUT_MS });
        for (const w of live)
          effects.push({ type: "send", worker: w, message: { type: "edgecascade:metrics-collect", id } });
        return;
      }
      case "edgecascade:metrics-json": {
        const c = s.collections.get(message.id);
        if (!c) return;
        const got = [...c.got, { metrics: message.metrics, stats: message.stats }];
        s.collections.set(message.id, { ...c, got, waiting: c.waiting - 1 });
        if (c.waiting - 1 === 0) finishCollection(message.id);
        return;
      }
    }
  }

  /** The lowest slot no started worker holds. */
  function freeSlot(): number {
    const held = new Set(s.slots.values());
    let slot = 0;
    while (held.has(slot)) slot++;
    return slot;
  }

  function onExit(
    worker: number,
    fields: { pid: number | undefined; code: number | null; signal: string | null },
  ): void {
    const { code } = fields;
    // A control call waiting for this worker gets its failure now rather than at the timeout.
    for (const id of [...s.controls.keys()]) {
      answered(id, worker, notAnswered(`worker ${worker} exited before it answered`));
    }
    const wasStarted = s.started.delete(worker);
    const slot = s.slots.get(worker);
    s.slots.delete(worker);
    const wasReady = s.ready.delete(worker);
    if (wasReady) announcePool();
    // Any exit is logged with its code or signal; outside a stop, exit code 0 is a worker gone as much as a crash.
    if (!s.stopping) {
      if (!wasStarted) {
        // A worker that never listened will fail again (bad options, --ep cuda without CUDA): stop, don't loop.
        log("error", "a worker failed to start; stopping", fields);
        s.failed = true;
        stopAll("a worker failed to start");
      } else {
        log("warn", `a worker ${code === 0 ? "exited" : "died"}; starting a replacement`, fields);
        effects.push({ type: "fork", slot: slot ?? freeSlot() });
      }
    } else if (code === 0) {
      log("info", "a worker stopped", fields);
    } else if (!wasReady) {
      // Stopped while it still started up: it had nothing to drain. (It may die of our own signal before its
      // handlers exist, or exit while onnxruntime still creates a session on another thread.)
      log("info", "a worker stopped during its start-up", fields);
    } else {
      log("error", "a worker failed while the pool stopped", fields);
      s.failed = true;
    }
    if (world.length === 0) {
      log("info", "all workers exited");
      effects.push({ type: "exit", code: s.failed ? 1 : 0 });
    }
  }
}

/** The state as a step builds it: its own copies of the collections. */
type Mutable = Omit<PrimaryState, "started" | "slots" | "ready" | "collections" | "controls" | "replay"> & {
  started: Set<number>;
  slots: Map<number, number>;
  ready: Set<number>;
  collections: Map<number, Collection>;
  controls: Map<number, Control>;
  replay: Map<string, { load?: unknown[]; rollout?: unknown[] }>;
};
