import { WORKER_NAME } from "../stack/edge-worker.ts";

/**
 * The Worker isolate's JavaScript heap as V8 counts it, read through workerd's inspector (`startEdgeWorker`'s
 * `inspectorPort`), optionally after a full garbage collection. workerd's inspector does not answer
 * `HeapProfiler.collectGarbage`; a heap snapshot collects first, so `collect` takes one (and drops it). The wasm
 * heap is not in these figures (the Worker's `/status` says how big it is). workerd's process RSS holds more
 * than the isolate (the runtime, code, allocator slack); this does not.
 */

/** One isolate's JavaScript heap: bytes in use, bytes committed, and ArrayBuffers' backing stores. */
export interface IsolateHeap {
  usedBytes: number;
  totalBytes: number;
  backingBytes: number;
}

/** The Worker's (first instance's) inspector target: Miniflare names it `core:user:<name>`. */
const TARGET = `core:user:${WORKER_NAME}`;

/** The Worker isolate's heap usage, after a full garbage collection with `collect`. */
export async function isolateHeap(inspectorPort: number, { collect = false } = {}): Promise<IsolateHeap> {
  const socket = new WebSocket(`ws://127.0.0.1:${inspectorPort}/${TARGET}`);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve(), { once: true });
    socket.addEventListener("error", () => reject(new Error(`inspector on port ${inspectorPort}: no ${TARGET}`)), {
      once: true,
    });
  });
  let next = 0;
  const waiting = new Map<number, (result: Record<string, unknown>) => void>();
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: Record<string, unknown> };
    if (message.id !== undefined) waiting.get(message.id)?.(message.result ?? {});
  });
  const call = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<Record<string, unknown>>((resolve) => {
      const id = ++next;
      waiting.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  try {
    // The snapshot's chunks arrive as events, which are ignored; its answer comes after the last of them.
    if (collect) await call("HeapProfiler.takeHeapSnapshot", { reportProgress: false });
    const usage = await call("Runtime.getHeapUsage");
    return {
      usedBytes: Number(usage.usedSize ?? 0),
      totalBytes: Number(usage.totalSize ?? 0),
      backingBytes: Number(usage.backingStorageSize ?? 0),
    };
  } finally {
    socket.close();
  }
}
