import cluster, { type Worker } from "node:cluster";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { COLLECT_TIMEOUT_MS, isMessage, type Message } from "./cluster-messages.ts";
import { initialPrimary, type PrimaryEffect, type PrimaryEvent, primaryStep } from "./cluster-primary.ts";
import type { Logger } from "./log.ts";
import { aggregateMetrics, type Metrics } from "./metrics.ts";
import { type ControlOp, clusterControl, type ModelControl, type Settled, settle } from "./model-control.ts";
import type { ModelStatistics } from "./model-stats.ts";

/**
 * node:cluster for `--workers N`: the primary forks N workers that share the port (it accepts connections and
 * hands them out round-robin), forwards SIGTERM/SIGINT/SIGHUP to them, replaces a worker that dies after it
 * started, and answers `/metrics` with every worker's metrics summed, so a scrape does not depend on which
 * worker happened to take the connection; Triton's statistics (`/v2/models/stats`) are summed with them.
 * Model control (loads, unloads, rollouts) is relayed the same way: the worker that takes an admin call asks
 * the primary to run it in every worker and answers with all their results combined, and the primary replays
 * the latest of them per model to a worker that replaces a dead one. What the primary decides is
 * cluster-primary.ts; this file is the I/O around it and the workers' side.
 */

/** Run the primary until every worker has exited; resolves with the process's exit code. */
export function runPrimary(workers: number, log: Logger): Promise<number> {
  // The workers' sockets for one another (regional/peers/): a directory of the pod's own (mode 0700).
  const peerDir = mkdtempSync(join(tmpdir(), "edgecascade-pool-"));
  return new Promise<number>((resolve) => {
    let state = initialPrimary(workers);
    const timers = new Map<string, NodeJS.Timeout>();
    const live = () => Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w);
    const dispatch = (event: PrimaryEvent) => {
      const world = live().map((w) => ({ id: w.id, pid: w.process.pid, connected: w.isConnected() }));
      const step = primaryStep(state, event, world);
      state = step.state;
      for (const effect of step.effects) perform(effect);
    };
    const perform = (effect: PrimaryEffect) => {
      switch (effect.type) {
        case "fork": {
          const worker = cluster.fork({ [WORKER_SLOT_ENV]: String(effect.slot), [PEER_DIR_ENV]: peerDir });
          // Without a listener, an IPC write to a worker that just exited (Node's own cluster reply to its
          // listen(), say, during a stop) throws EPIPE in the primary and ends the whole pool. Its exit is
          // handled by primaryStep.
          worker.on("error", (err) =>
            log("warn", "a worker's channel failed", { pid: worker.process.pid, reason: err.message }),
          );
          break;
        }
        case "send": {
          const worker = cluster.workers?.[effect.worker];
          if (worker?.isConnected()) worker.send(effect.message);
          break;
        }
        case "kill":
          for (const w of live()) w.process.kill(effect.signal);
          break;
        case "log":
          log(effect.level, effect.msg, effect.fields);
          break;
        case "set-timer": {
          const event: PrimaryEvent = { type: "timeout", timer: effect.timer, id: effect.id };
          timers.set(
            `${effect.timer}:${effect.id}`,
            setTimeout(() => dispatch(event), effect.ms),
          );
          break;
        }
        case "cancel-timer":
          clearTimeout(timers.get(`${effect.timer}:${effect.id}`));
          timers.delete(`${effect.timer}:${effect.id}`);
          break;
        case "answer-metrics":
          aggregateMetrics(effect.metrics).then(
            (text) =>
              perform({
                type: "send",
                worker: effect.worker,
                message: { type: "edgecascade:metrics-text", id: effect.id, text },
              }),
            // The worker that asked answers with its own numbers at its timeout (workerChannel's metricsText).
            (err: Error) => log("error", "summing the workers' metrics failed", { reason: err.message }),
          );
          break;
        case "exit":
          resolve(effect.code);
          break;
      }
    };
    for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) {
      process.on(signal, () => dispatch({ type: "signal", signal }));
    }
    cluster.on("message", (worker, message: unknown) => {
      if (isMessage(message)) dispatch({ type: "message", worker: worker.id, message });
    });
    cluster.on("exit", (worker, code, signal) =>
      dispatch({ type: "exit", worker: worker.id, pid: worker.process.pid, code, signal }),
    );
    dispatch({ type: "start" });
  }).finally(() => rmSync(peerDir, { recursive: true, force: true }));
}

/** The slot a worker was forked into, and the directory of the pod's worker sockets (regional/peers/). */
export const WORKER_SLOT_ENV = "EDGECASCADE_WORKER_SLOT";
export const PEER_DIR_ENV = "EDGECASCADE_PEER_DIR";

/** A worker's IPC channel to its primary: the worker's `process`, or a stand-in in a unit test. */
export interface PrimaryChannel {
  send?(message: Message, handle: undefined, options: object, callback: (err: Error | null) => void): boolean;
  on(event: "message", listener: (message: unknown) => void): unknown;
}

/**
 * In a worker: report to the primary, answer `/metrics` with the primary's aggregate of all workers, and run
 * model control in every worker (`control`).
 */
export function workerChannel(
  local: Pick<Metrics, "json" | "text" | "statistics">,
  log: Logger,
  primary: PrimaryChannel = process,
): {
  listening(url: string, port: number): void;
  ready(): void;
  metricsText(): Promise<string>;
  /** Every worker's statistics, summed by the primary. */
  statistics(): Promise<ModelStatistics[]>;
  /** Serve relayed control calls with `here`, and return the control every admin call goes through. */
  control(here: ModelControl): ModelControl;
  /** Why the pool is not ready as a whole (undefined once the primary saw every worker ready). */
  poolNotReady(): string | undefined;
} {
  let pool: { ready: number; workers: number } | undefined;
  let nextId = 0;
  const waiting = new Map<number, (text: string) => void>();
  const waitingStats = new Map<number, (stats: ModelStatistics[]) => void>();
  const relayed = new Map<number, (results: Settled<unknown>[]) => void>();
  let here: ModelControl | undefined;
  // A message to a primary that is gone fails: logged, never thrown (the worker stops on "disconnect" anyway).
  const send = (m: Message) =>
    primary.send?.(m, undefined, {}, (err: Error | null) => {
      if (err) log("warn", "a message to the cluster primary failed", { type: m.type, reason: err.message });
    });
  primary.on("message", (message: unknown) => {
    if (!isMessage(message)) return;
    if (message.type === "edgecascade:control-run") {
      const run = here?.[message.op] as ((...args: unknown[]) => Promise<unknown>) | undefined;
      void settle(() => (run ? run(...message.args) : Promise.reject(new Error("model control is not ready")))).then(
        (result) => send({ type: "edgecascade:control-result", id: message.id, result }),
      );
    } else if (message.type === "edgecascade:control-results") {
      relayed.get(message.id)?.(message.results);
      relayed.delete(message.id);
    } else if (message.type === "edgecascade:pool-ready") {
      pool = { ready: message.ready, workers: message.workers };
    } else if (message.type === "edgecascade:metrics-collect") {
      local.json().then(
        (metrics) => send({ type: "edgecascade:metrics-json", id: message.id, metrics, stats: local.statistics() }),
        // The primary answers with the other workers' numbers at its collection timeout.
        (err: Error) => log("error", "reading this worker's metrics failed", { reason: err.message }),
      );
    } else if (message.type === "edgecascade:metrics-text") {
      waiting.get(message.id)?.(message.text);
      waiting.delete(message.id);
    } else if (message.type === "edgecascade:stats") {
      waitingStats.get(message.id)?.(message.stats);
      waitingStats.delete(message.id);
    }
  });
  return {
    poolNotReady: () => {
      if (!pool) return "waiting for the other workers of this pool";
      return pool.ready >= pool.workers ? undefined : `${pool.ready} of ${pool.workers} workers of this pool are ready`;
    },
    listening: (url, port) => {
      const slot = process.env[WORKER_SLOT_ENV];
      send({ type: "edgecascade:listening", url, port, ...(slot === undefined ? {} : { slot: Number(slot) }) });
    },
    ready: () => send({ type: "edgecascade:ready" }),
    metricsText: () =>
      new Promise((resolve, reject) => {
        const id = nextId++;
        // Past the primary's own collection timeout, answer with this worker's numbers rather than nothing.
        const fallback = setTimeout(() => {
          waiting.delete(id);
          local.text().then(resolve, reject);
        }, COLLECT_TIMEOUT_MS * 2);
        waiting.set(id, (text) => {
          clearTimeout(fallback);
          resolve(text);
        });
        send({ type: "edgecascade:metrics-request", id });
      }),
    statistics: () =>
      new Promise((resolve) => {
        const id = nextId++;
        // As for metricsText: past the primary's timeout, this worker's own numbers rather than nothing.
        const fallback = setTimeout(() => {
          waitingStats.delete(id);
          resolve(local.statistics());
        }, COLLECT_TIMEOUT_MS * 2);
        waitingStats.set(id, (stats) => {
          clearTimeout(fallback);
          resolve(stats);
        });
        send({ type: "edgecascade:stats-request", id });
      }),
    control(local) {
      here = local;
      return clusterControl(
        <T>(op: ControlOp, args: unknown[]) =>
          new Promise<Settled<T>[]>((resolve) => {
            const id = nextId++;
            relayed.set(id, resolve as (results: Settled<unknown>[]) => void);
            send({ type: "edgecascade:control-request", id, op, args });
          }),
      );
    },
  };
}
