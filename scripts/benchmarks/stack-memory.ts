import { readFileSync } from "node:fs";
import { rssFromStatus } from "../validate/rss.ts";
import { isolateHeap } from "./isolate-heap.ts";

/**
 * Both tiers' memory over time against their budgets, sampled while a benchmark's traffic runs: the pool's
 * models as it counts them (`GET /v2`'s `modelLoading` against `--model-memory-mb`: one worker's, the stacks run
 * `--workers 1`) and its process's resident set; the edge's sessions as the isolate counts them (`/status/sessions`
 * against `EDGE_SESSION_MEMORY_MB`), its wasm heap, its JavaScript heap (through the inspector) and workerd's
 * resident set. Only what is cheap to read is read, since it is read every second while the traffic is measured:
 * with 2,000 models the pool's `/metrics` is 4.5 MB and took 390–470 ms of the pool's one thread, and the edge's
 * `/status` 600 KB and 26–81 ms of the isolate's (bench/many-models.md).
 */

export interface MemorySample {
  /** Seconds since sampling started. */
  atS: number;
  pool: { residentBytes: number; budgetBytes: number; loaded: number; evictions: number; rssBytes: number };
  edge: {
    residentBytes: number;
    budgetBytes: number;
    resident: number;
    evictions: number;
    /** Sessions created so far; past the budget's rate, not created (`deferred`); created as a request waited. */
    created: number;
    deferred: number;
    onRequestPath: number;
    wasmHeapBytes: number;
    jsHeapBytes: number;
    rssBytes: number;
  };
}

/** Where to read from: the pool's URL and pid, the edge's URL, workerd's pid and inspector port. */
export interface MemoryTargets {
  poolUrl: string;
  poolPids: () => number[];
  edgeUrl: string;
  workerdPid: number;
  inspectorPort: number;
}

const rss = (pid: number) => {
  try {
    return rssFromStatus(readFileSync(`/proc/${pid}/status`, "utf8")) ?? 0;
  } catch {
    return 0;
  }
};

/** What the pool's `GET /v2` says of its loads on demand (regional/routes/health.ts). */
interface PoolLoading {
  memoryBudgetBytes?: number;
  residentBytes?: number;
  evictions?: number;
  loaded: number;
}

/** One sample of both tiers now. */
export async function sampleMemory(targets: MemoryTargets, atS: number): Promise<MemorySample> {
  const [pool, sessions, heap] = await Promise.all([
    fetch(`${targets.poolUrl}/v2`).then((r) => r.json() as Promise<{ modelLoading: PoolLoading }>),
    fetch(`${targets.edgeUrl}/status/sessions`).then((r) => r.json() as Promise<Record<string, number>>),
    isolateHeap(targets.inspectorPort),
  ]);
  const loading = pool.modelLoading;
  return {
    atS,
    pool: {
      residentBytes: loading.residentBytes ?? 0,
      budgetBytes: loading.memoryBudgetBytes ?? 0,
      loaded: loading.loaded,
      evictions: loading.evictions ?? 0,
      rssBytes: targets.poolPids().reduce((sum, pid) => sum + rss(pid), 0),
    },
    edge: {
      residentBytes: sessions.residentBytes!,
      budgetBytes: sessions.budgetBytes!,
      resident: sessions.resident!,
      evictions: sessions.evictions!,
      created: sessions.created!,
      deferred: sessions.deferred!,
      onRequestPath: sessions.onRequestPath!,
      wasmHeapBytes: sessions.wasmHeapBytes!,
      jsHeapBytes: heap.usedBytes,
      rssBytes: rss(targets.workerdPid),
    },
  };
}

/** Samples every `everyMs` until `stop()`; the samples in order (a failed sample is skipped). */
export function sampleMemoryEvery(targets: MemoryTargets, everyMs: number): { stop(): Promise<MemorySample[]> } {
  const samples: MemorySample[] = [];
  const started = performance.now();
  let running = true;
  const loop = (async () => {
    while (running) {
      const at = performance.now();
      try {
        samples.push(await sampleMemory(targets, (at - started) / 1000));
      } catch {
        // A sample that failed (a scrape cut by the run's end) leaves a gap, not a wrong figure.
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, everyMs - (performance.now() - at))));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return samples;
    },
  };
}
