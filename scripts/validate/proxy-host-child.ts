/**
 * The delay proxies' own process (proxy-host.ts, placement `apart`): starts and drives proxies on its parent's
 * requests over the IPC channel, and closes them all and exits when the channel closes (the parent stopped or died).
 */
import { type DelayProxy, type DelayProxyOptions, type ProxyMode, startDelayProxy } from "./delay-proxy.ts";

export type ProxyCall =
  | { op: "ping" }
  | { op: "start"; options: DelayProxyOptions }
  | { op: "setDelay"; key: number; delayMs: number; jitterMs?: number }
  | { op: "setMode"; key: number; mode: ProxyMode }
  | { op: "stats" | "releaseLateness" | "close"; key: number };
export type ProxyRequest = { id: number } & ProxyCall;
export type ProxyResponse = { id: number } & ({ result: unknown } | { error: string });

const proxies = new Map<number, DelayProxy>();
let nextKey = 0;

function proxy(key: number): DelayProxy {
  const p = proxies.get(key);
  if (!p) throw new Error(`no proxy ${key}`);
  return p;
}

async function handle(request: ProxyRequest): Promise<unknown> {
  switch (request.op) {
    case "ping":
      return null;
    case "start": {
      const p = await startDelayProxy(request.options);
      const key = nextKey++;
      proxies.set(key, p);
      return { key, url: p.url, port: p.port };
    }
    case "setDelay":
      return proxy(request.key).setDelay(request.delayMs, request.jitterMs);
    case "setMode":
      return proxy(request.key).setMode(request.mode);
    case "stats":
      return proxy(request.key).stats();
    case "releaseLateness":
      return proxy(request.key).releaseLateness();
    case "close": {
      const p = proxy(request.key);
      proxies.delete(request.key);
      return p.close();
    }
  }
}

if (process.send) {
  process.on("message", (request: ProxyRequest) => {
    handle(request).then(
      (result) => process.send?.({ id: request.id, result: result ?? null } satisfies ProxyResponse),
      (err: Error) => process.send?.({ id: request.id, error: err.message } satisfies ProxyResponse),
    );
  });
  process.on("disconnect", () => {
    void Promise.allSettled([...proxies.values()].map((p) => p.close())).then(() => process.exit(0));
  });
}
