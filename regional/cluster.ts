import cluster, { type Worker } from "node:cluster";
import type { Logger } from "./log.ts";
import { aggregateMetrics, type Metrics, type MetricsJson } from "./metrics.ts";

/**
 * node:cluster for `--workers N`: the primary forks N workers that share the port (it accepts connections and
 * hands them out round-robin), forwards SIGTERM/SIGINT/SIGHUP to them, replaces a worker that dies after it
 * started, and answers `/metrics` with every worker's metrics summed, so a scrape does not depend on which
 * worker happened to take the connection.
 */

/** Messages between primary and workers. */
type Message =
  | { type: "edgecascade:listening"; url: string; port: number }
  | { type: "edgecascade:ready" }
  | { type: "edgecascade:metrics-request"; id: number }
  | { type: "edgecascade:metrics-text"; id: number; text: string }
  | { type: "edgecascade:metrics-collect"; id: number }
  | { type: "edgecascade:metrics-json"; id: number; metrics: MetricsJson };

const isMessage = (m: unknown): m is Message =>
  typeof m === "object" && m !== null && String((m as { type?: unknown }).type).startsWith("edgecascade:");

/** How long the primary waits for workers' metrics before answering with those that came. */
const COLLECT_TIMEOUT_MS = 2_000;

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
    const collections = new Map<number, { got: MetricsJson[]; waiting: number; done: () => void }>();

    const fork = () => cluster.fork();
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

    const collect = async (): Promise<string> => {
      const id = nextCollect++;
      const live = Object.values(cluster.workers ?? {}).filter((w): w is Worker => !!w?.isConnected());
      const got: MetricsJson[] = [];
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
      return aggregateMetrics(got);
    };

    cluster.on("message", (worker, message: unknown) => {
      if (!isMessage(message)) return;
      switch (message.type) {
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
          if (!announcedReady && ready.size >= workers) {
            announcedReady = true;
            log("info", "ready", { ...address, workers });
          }
          break;
        case "edgecascade:metrics-request":
          void collect().then((text) => {
            if (worker.isConnected())
              worker.send({ type: "edgecascade:metrics-text", id: message.id, text } satisfies Message);
          });
          break;
        case "edgecascade:metrics-json": {
          const c = collections.get(message.id);
          if (!c) break;
          c.got.push(message.metrics);
          if (--c.waiting === 0) c.done();
          break;
        }
      }
    });

    cluster.on("exit", (worker, code, signal) => {
      const wasStarted = started.delete(worker.id);
      ready.delete(worker.id);
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
      } else if (code !== 0) {
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

/** In a worker: report to the primary, and answer `/metrics` with the primary's aggregate of all workers. */
export function workerChannel(local: Metrics): {
  listening(url: string, port: number): void;
  ready(): void;
  metricsText(): Promise<string>;
} {
  let nextId = 0;
  const waiting = new Map<number, (text: string) => void>();
  const send = (m: Message) => process.send?.(m);
  process.on("message", (message: unknown) => {
    if (!isMessage(message)) return;
    if (message.type === "edgecascade:metrics-collect") {
      void local.json().then((metrics) => send({ type: "edgecascade:metrics-json", id: message.id, metrics }));
    } else if (message.type === "edgecascade:metrics-text") {
      waiting.get(message.id)?.(message.text);
      waiting.delete(message.id);
    }
  });
  return {
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
  };
}
