import cluster, { type Worker } from "node:cluster";
import type { Logger } from "./log.ts";
import { aggregateMetrics, type Metrics, type MetricsJson } from "./metrics.ts";
import { type ControlOp, clusterControl, type ModelControl, type Settled, settle } from "./model-control.ts";
import { type ModelStatistics, sumStatistics } from "./model-stats.ts";

/**
 * node:cluster for `--workers N`: the primary forks N workers that share the port (it accepts connections and
 * hands them out round-robin), forwards SIGTERM/SIGINT/SIGHUP to them, replaces a worker that dies after it
 * started, and answers `/metrics` with every worker's metrics summed, so a scrape does not depend on which
 * worker happened to take the connection; Triton's statistics (`/v2/models/stats`) are summed with them. Model control (loads, unloads, rollouts) is relayed the same way:
 * the worker that takes an admin call asks the primary to run it in every worker and answers with all their
 * results combined, and the primary replays the latest of them per model to a worker that replaces a dead one.
 */

/** Messages between primary and workers. */
type Message =
  | { type: "edgecascade:listening"; url: string; port: number }
  | { type: "edgecascade:ready" }
  | { type: "edgecascade:pool-ready"; ready: number; workers: number }
  | { type: "edgecascade:metrics-request"; id: number }
  | { type: "edgecascade:metrics-text"; id: number; text: string }
  | { type: "edgecascade:stats-request"; id: number }
  | { type: "edgecascade:stats"; id: number; stats: ModelStatistics[] }
  | { type: "edgecascade:metrics-collect"; id: number }
  | { type: "edgecascade:metrics-json"; id: number; metrics: MetricsJson; stats: ModelStatistics[] }
  | { type: "edgecascade:control-request"; id: number; op: ControlOp; args: unknown[] }
  | { type: "edgecascade:control-run"; id: number; op: ControlOp; args: unknown[] }
  | { type: "edgecascade:control-result"; id: number; result: Settled<unknown> }
  | { type: "edgecascade:control-results"; id: number; results: Settled<unknown>[] };

const isMessage = (m: unknown): m is Message =>
  typeof m === "object" && m !== null && String((m as { type?: unknown }).type).startsWith("edgecascade:");

/** How long the primary waits for workers' metrics before answering with those that came. */
const COLLECT_TIMEOUT_MS = 2_000;
/** How long it waits for every worker's answer to a control call (a load checks and warms up a model). */
const CONTROL_TIMEOUT_MS = 120_000;
/** Replays to a replacement worker carry ids from here down, so they never meet a relayed call's. */
const REPLAY_ID = -1;

/** Run the primary until every worker has exited; resolves with the process's exit code. */
export function runPrimary(workers: number, log: Logger): Promise<number> {
  return new Promise((resolve) => {
    let stopping = false;
    let failed = false;
    let announcedListening = false;
    let announcedReady = false;
    let address: { url: string; port: number } | undefined;
    const started = new Set<number>();
    const ready = new Set<number>();
    let nextCollect = 0;
    type Collected = { metrics: MetricsJson; stats: ModelStatistics[] };
    const collections = new Map<number, { got: Collected[]; waiting: number; done: () => void }>();
    let nextControl = 0;
    const controls = new Map<
      number,
      { results: Map<number, Settled<unknown>>; waiting: Set<number>; done: () => void }
    >();
    /** Per model, the latest explicit load and rollout state that every worker took: replayed to replacements. */
    const replay = new Map<string, { load?: unknown[]; rollout?: unknown[] }>();
    let replayId = REPLAY_ID;

    const fork = () => {
      const worker = cluster.fork();
      // Without a listener, an IPC write to a worker that just exited (Node's own cluster reply to its
      // listen(), say, during a stop) throws EPIPE in the primary and ends the whole pool. Its exit is handled
      // below.
      worker.on("error", (err) =>
        log("warn", "a worker's channel failed", { pid: worker.process.pid, reason: err.message }),
      );
      return worker;
    };
    /** Every worker learns how many of the pool's workers are ready: readiness is the pod's, not one worker's. */
    const announcePool = () => {
      for (const w of Object.values(cluster.workers ?? {})) {
        if (w?.isConnected()) w.send({ type: "edgecascade:pool-ready", ready: ready.size, workers } satisfies Message);
      }
    };
    const stopAll = (reason: string) => {
      if (stopping) return;
      stopping = true;
      log("info", `stopping ${Object.keys(cluster.workers ?? {}).length} workers (${reason})`);
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill("SIGTERM");
    };
    for (const signal of ["SIGTERM", "SIGINT"] as const) process.on(signal, () => stopAll(signal));
    process.on("SIGHUP", () => {
      log("info", "SIGHUP: workers reload every model");
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill("SIGHUP");
    });

    const collect = async (): Promise<Collected[]> => {
      const id = nextCollect++;
      const live = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w?.isConnected());
      const got: Collected[] = [];
      await new Promise<void>((done) => {
        const timer = setTimeout(done, COLLECT_TIMEOUT_MS);
        collections.set(id, {
          got,
          waiting: live.length,
          done: () => {
            clearTimeout(timer);
            done();
          },
        });
        for (const w of live) w.send({ type: "edgecascade:metrics-collect", id } satisfies Message);
        if (live.length === 0) collections.get(id)!.done();
      });
      collections.delete(id);
      return got;
    };

    /**
     * Run a control call in every worker that listens (one still starting has no handler yet, and catches up by
     * replay once ready); a worker that does not answer in time counts as a failure.
     */
    const control = async (op: ControlOp, args: unknown[]): Promise<Settled<unknown>[]> => {
      const id = nextControl++;
      const live = Object.values(cluster.workers ?? {}).filter(
        (w): w is Worker => !!w?.isConnected() && started.has(w.id),
      );
      const results = new Map<number, Settled<unknown>>();
      const waiting = new Set(live.map((w) => w.id));
      await new Promise<void>((done) => {
        const timer = setTimeout(done, CONTROL_TIMEOUT_MS);
        controls.set(id, {
          results,
          waiting,
          done: () => {
            clearTimeout(timer);
            done();
          },
        });
        for (const w of live) w.send({ type: "edgecascade:control-run", id, op, args } satisfies Message);
        if (live.length === 0) controls.get(id)!.done();
      });
      controls.delete(id);
      const answers = live.map(
        (w): Settled<unknown> =>
          results.get(w.id) ?? {
            ok: false,
            error: { status: 503, code: "not_ready", message: `worker ${w.id} did not answer`, headers: {} },
          },
      );
      const model = op === "rollout" ? (args[0] as { model: string }).model : String(args[0]);
      if ((op === "load" || op === "rollout") && answers.every((a) => a.ok)) {
        replay.set(model, { ...replay.get(model), [op]: args });
      }
      if (op === "unload" && answers.every((a) => a.ok)) replay.delete(model);
      return answers;
    };

    /** A replacement worker takes the latest loads and rollout states the others took. */
    const catchUp = (worker: Worker) => {
      for (const [model, ops] of replay) {
        for (const op of ["load", "rollout"] as const) {
          const args = ops[op];
          if (args) worker.send({ type: "edgecascade:control-run", id: replayId--, op, args } satisfies Message);
        }
        log("info", "replaying model control to a replacement worker", { model, pid: worker.process.pid });
      }
    };

    cluster.on("message", (worker, message: unknown) => {
      if (!isMessage(message)) return;
      switch (message.type) {
        case "edgecascade:control-request":
          void control(message.op, message.args).then((results) => {
            if (worker.isConnected()) {
              worker.send({ type: "edgecascade:control-results", id: message.id, results } satisfies Message);
            }
          });
          break;
        case "edgecascade:control-result": {
          if (message.id <= REPLAY_ID) {
            if (!message.result.ok) {
              log("warn", "a replacement worker refused a replayed model control call", {
                reason: message.result.error.message,
              });
            }
            break;
          }
          const c = controls.get(message.id);
          if (!c?.waiting.delete(worker.id)) break;
          c.results.set(worker.id, message.result);
          if (c.waiting.size === 0) c.done();
          break;
        }
        case "edgecascade:listening":
          started.add(worker.id);
          address = { url: message.url, port: message.port };
          if (!announcedListening && started.size >= workers) {
            announcedListening = true;
            log("info", "listening", { ...address, workers });
          }
          break;
        case "edgecascade:ready":
          ready.add(worker.id);
          announcePool();
          if (announcedReady) catchUp(worker);
          if (!announcedReady && ready.size >= workers) {
            announcedReady = true;
            log("info", "ready", { ...address, workers });
          }
          break;
        case "edgecascade:metrics-request":
          void collect()
            .then((got) => aggregateMetrics(got.map((g) => g.metrics)))
            .then((text) => {
              if (worker.isConnected())
                worker.send({ type: "edgecascade:metrics-text", id: message.id, text } satisfies Message);
            });
          break;
        case "edgecascade:stats-request":
          void collect().then((got) => {
            const stats = sumStatistics(got.map((g) => g.stats));
            if (worker.isConnected())
              worker.send({ type: "edgecascade:stats", id: message.id, stats } satisfies Message);
          });
          break;
        case "edgecascade:metrics-json": {
          const c = collections.get(message.id);
          if (!c) break;
          c.got.push({ metrics: message.metrics, stats: message.stats });
          if (--c.waiting === 0) c.done();
          break;
        }
      }
    });

    cluster.on("exit", (worker, code, signal) => {
      // A control call waiting for this worker gets its failure now rather than at the timeout.
      for (const c of controls.values()) {
        if (!c.waiting.delete(worker.id)) continue;
        c.results.set(worker.id, {
          ok: false,
          error: {
            status: 503,
            code: "not_ready",
            message: `worker ${worker.id} exited before it answered`,
            headers: {},
          },
        });
        if (c.waiting.size === 0) c.done();
      }
      const wasStarted = started.delete(worker.id);
      const wasReady = ready.delete(worker.id);
      if (wasReady) announcePool();
      if (code !== 0 && !stopping) {
        if (!wasStarted) {
          // A worker that never listened will fail again (bad options, --ep cuda without CUDA): stop, don't loop.
          log("error", "a worker failed to start; stopping", { pid: worker.process.pid, code, signal });
          failed = true;
          stopAll("a worker failed to start");
        } else {
          log("warn", "a worker died; starting a replacement", { pid: worker.process.pid, code, signal });
          fork();
        }
      } else if (code !== 0 && !wasReady) {
        // Stopped while it still started up: it had nothing to drain. (It may die of our own signal before its
        // handlers exist, or exit while onnxruntime still creates a session on another thread.)
        log("info", "a worker stopped during its start-up", { pid: worker.process.pid, code, signal });
      } else if (code !== 0) {
        log("error", "a worker failed while the pool stopped", { pid: worker.process.pid, code, signal });
        failed = true;
      }
      if (Object.keys(cluster.workers ?? {}).length === 0) {
        log("info", "all workers exited");
        resolve(failed ? 1 : 0);
      }
    });

    for (let i = 0; i < workers; i++) fork();
  });
}

/**
 * In a worker: report to the primary, answer `/metrics` with the primary's aggregate of all workers, and run
 * model control in every worker (`control`).
 */
export function workerChannel(local: Metrics): {
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
  const send = (m: Message) => process.send?.(m);
  process.on("message", (message: unknown) => {
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
      void local
        .json()
        .then((metrics) =>
          send({ type: "edgecascade:metrics-json", id: message.id, metrics, stats: local.statistics() }),
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
    listening: (url, port) => send({ type: "edgecascade:listening", url, port }),
    ready: () => send({ type: "edgecascade:ready" }),
    metricsText: () =>
      new Promise((resolve) => {
        const id = nextId++;
        // Past the primary's own collection timeout, answer with this worker's numbers rather than nothing.
        const fallback = setTimeout(() => {
          waiting.delete(id);
          void local.text().then(resolve);
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
