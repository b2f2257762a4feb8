import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import type { LatencyStats } from "../../tools/probe/summary.ts";
import {
  type DelayProxy,
  type DelayProxyOptions,
  type DelayProxyStats,
  type ProxyMode,
  startDelayProxy,
} from "./delay-proxy.ts";
import type { ProxyCall, ProxyRequest, ProxyResponse } from "./proxy-host-child.ts";

/** A delay proxy as the validation stack holds it, in this process or in the proxies' own. */
export interface ProxyHandle {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  setDelay(delayMs: number, jitterMs?: number): Promise<void>;
  setMode(mode: ProxyMode): Promise<void>;
  stats(): Promise<DelayProxyStats>;
  /** Release lateness since the previous call (DelayProxy.releaseLateness). */
  releaseLateness(): Promise<LatencyStats>;
  close(): Promise<void>;
}

/**
 * Where the delay proxies run:
 * - `in-process`: in the caller's process (the tests, validate:faults);
 * - `apart`: in one child process of their own (validate:latency's default), so that the load generator's work
 *   and GC pauses in the caller's process do not hold back the data the proxies release, which is the
 *   simulated distance.
 */
export type ProxyPlacement = "in-process" | "apart";

export interface ProxyHost {
  start(options: DelayProxyOptions): Promise<ProxyHandle>;
  /** Close every proxy (and the child process, if any). */
  stop(): Promise<void>;
}

export async function startProxyHost(placement: ProxyPlacement): Promise<ProxyHost> {
  return placement === "apart" ? startChildHost() : inProcessHost();
}

function inProcessHost(): ProxyHost {
  const open = new Set<DelayProxy>();
  return {
    async start(options) {
      const proxy = await startDelayProxy(options);
      open.add(proxy);
      return {
        url: proxy.url,
        port: proxy.port,
        setDelay: async (delayMs, jitterMs) => proxy.setDelay(delayMs, jitterMs),
        setMode: async (mode) => proxy.setMode(mode),
        stats: async () => proxy.stats(),
        releaseLateness: async () => proxy.releaseLateness(),
        close: async () => {
          open.delete(proxy);
          await proxy.close();
        },
      };
    },
    async stop() {
      await Promise.allSettled([...open].map((p) => p.close()));
      open.clear();
    },
  };
}

const CHILD = fileURLToPath(new URL("./proxy-host-child.ts", import.meta.url));

/** The proxies in a child process (proxy-host-child.ts), driven over its IPC channel, one request at a time each. */
async function startChildHost(): Promise<ProxyHost> {
  const child: ChildProcess = fork(CHILD, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const exited = once(child, "exit");
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 0;
  child.on("message", (message: ProxyResponse) => {
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if ("error" in message) waiter?.reject(new Error(`delay proxy process: ${message.error}`));
    else waiter?.resolve(message.result);
  });
  void exited.then(() => {
    for (const w of pending.values()) w.reject(new Error("the delay proxy process exited"));
    pending.clear();
  });
  const call = <T>(request: ProxyCall): Promise<T> =>
    new Promise((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ ...request, id } satisfies ProxyRequest);
    });
  try {
    await call({ op: "ping" });
  } catch (err) {
    child.kill("SIGKILL");
    throw err;
  }
  return {
    async start(options) {
      const { key, url, port } = await call<{ key: number; url: string; port: number }>({ op: "start", options });
      return {
        url,
        port,
        setDelay: (delayMs, jitterMs) => call({ op: "setDelay", key, delayMs, jitterMs }),
        setMode: (mode) => call({ op: "setMode", key, mode }),
        stats: () => call({ op: "stats", key }),
        releaseLateness: () => call({ op: "releaseLateness", key }),
        close: () => call({ op: "close", key }),
      };
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      // The child closes its proxies and exits when its channel closes.
      child.disconnect();
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
