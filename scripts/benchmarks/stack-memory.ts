import { readFileSync } from "node:fs";
import { rssFromStatus } from "../validate/rss.ts";
import { isolateHeap } from "./isolate-heap.ts";

/**
 * Both tiers' memory over time against their budgets, sampled while a benchmark's traffic runs: the pool's
 * models as it counts them (`edgecascade_model_resident_bytes` against `--model-memory-mb`) and its process's
 * resident set; the edge's sessions as the isolate counts them (`/status` against `EDGE_SESSION_MEMORY_MB`), its
 * wasm heap, its JavaScript heap (through the inspector) and workerd's resident set.
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

/** Sum of a series in Prometheus text (every label set). */
function series(text: string, name: string): number {
  let total = 0;
  for (const line of text.split("\n")) {
    if (line.startsWith(`${name}{`) || line.startsWith(`${name} `))
      total += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return total;
}

/** One sample of both tiers now. */
export async function sampleMemory(targets: MemoryTargets, atS: number): Promise<MemorySample> {
  const [metrics, status, heap] = await Promise.all([
    fetch(`${targets.poolUrl}/metrics`).then((r) => r.text()),
    fetch(`${targets.edgeUrl}/status`).then((r) => r.json() as Promise<{ sessions: Record<string, number> }>),
    isolateHeap(targets.inspectorPort),
  ]);
  const { sessions } = status;
  return {
    atS,
    pool: {
      residentBytes: series(metrics, "edgecascade_model_resident_bytes"),
      budgetBytes: series(metrics, "edgecascade_model_memory_budget_bytes"),
      loaded: series(metrics, "edgecascade_models_loaded"),
      evictions: series(metrics, "edgecascade_model_evictions_total"),
      rssBytes: targets.poolPids().reduce((sum, pid) => sum + rss(pid), 0),
    },
    edge: {
      residentBytes: sessions.residentBytes!,
      budgetBytes: sessions.budgetBytes!,
      resident: sessions.resident!,
      evictions: sessions.evictions!,
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
