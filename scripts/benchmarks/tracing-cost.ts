import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RegionalPool, type RegionalPoolOptions, startRegionalPool } from "../stack/regional-pool.ts";
import { median } from "./paired-ratio.ts";
import { cpuSeconds, mainThreadCpuSeconds } from "./process-cpu.ts";
import { type WrkRequest, wrk, wrkScript } from "./wrk.ts";

/**
 * What tracing costs the pool (regional/tracing/): the pool with tracing off, beside the same pool exporting
 * spans over OTLP/HTTP with requests sampled at 1% (OTEL_TRACES_SAMPLER=parentbased_traceidratio, ratio 0.01:
 * requests without a parent, as wrk sends them), at 100%, and with every request carrying a parent marked
 * unsampled (the edge's `traceparent` of the other 99%), which a parent-based sampler must drop for next to
 * nothing. The spans go to a sink in this process that reads and drops them: what a collector does with them is
 * not the pool's cost.
 *
 * The four are loaded at the same time, each by its own wrk with a quarter of the connections, on the same core,
 * and compared window by window: what else the machine does in a window weighs on all four alike. Measured
 * one after another instead (ABBA rounds, as this bench first did), one pool's CPU per request moved by up to 25%
 * between consecutive 4-s measurements on this shared machine and the rounds' ratios spread ±12%, more than the
 * 3% to be told; measured together, two identical pools stayed within about 2% of each other window by window. The figure is server CPU per request, every thread of the process counted (the span thread's
 * included): a pool on a core of its own serves in proportion to its inverse. Throughput side by side is
 * reported but is not that figure: the scheduler shares the core between threads, and a pool with a span thread
 * has one more of them. The first windows, while the code a 1% pool runs on few requests is still being compiled,
 * are reported apart and left out of the medians.
 */

export interface TracingCostOptions {
  /** The pools to start (each with its tracing variables added). */
  pool: RegionalPoolOptions;
  /** The comparison's requests (one held-out row each). */
  requests: readonly WrkRequest[];
  /** Connections over the four pools together. */
  connections: number;
  /** Seconds of each window. */
  durationS: number;
  /** Windows measured after the warm-up. */
  windows: number;
  /** Windows of warm-up, reported apart. */
  warmupWindows: number;
  log: (line: string) => void;
  /** Called with each pool's pid once it is ready (bench:regional pins it to the servers' core). */
  onStarted?: (pid: number) => void;
}

const VARIANTS = [
  { key: "off", name: "tracing off (no OTEL_* exporter)", env: {}, parent: false },
  {
    key: "ratio1",
    name: "1% of requests traced (parentbased_traceidratio 0.01)",
    env: { OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "0.01" },
    parent: false,
  },
  {
    key: "ratio100",
    name: "every request traced (ratio 1)",
    env: { OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "1" },
    parent: false,
  },
  {
    key: "unsampledParent",
    name: "every request under a parent marked unsampled",
    env: { OTEL_TRACES_SAMPLER: "parentbased_traceidratio", OTEL_TRACES_SAMPLER_ARG: "1" },
    parent: true,
  },
] as const;
type Variant = (typeof VARIANTS)[number]["key"];

/** One pool in one window. */
export interface RawMeasurement {
  window: number;
  warmUp: boolean;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRequest: number;
  mainCpuUsPerRequest: number;
  errors: number;
}

export interface TracingLoad {
  name: string;
  /** Medians over the measured windows, the four pools sharing one core. */
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRequest: number;
  mainCpuUsPerRequest: number;
  errors: number;
  /** Server CPU per request (every thread) over tracing off's: median of the windows' own ratios (1 for off). */
  cpuOverOff: number;
  /** The same for the event loop's thread alone: what the request path pays. */
  mainCpuOverOff: number;
  /** Side-by-side throughput over off's, the same way (not the dedicated-core figure; see above). */
  reqPerSecOverOff: number;
  /** CPU per request over off's during the warm-up windows. */
  warmUpCpuOverOff: number;
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** A sink for OTLP/HTTP exports: reads each body, answers 200, counts requests and bytes. */
async function spanSink() {
  let exports = 0;
  let bytes = 0;
  const server = createServer((req, res) => {
    req.on("data", (chunk: Buffer) => {
      bytes += chunk.length;
    });
    req.on("end", () => {
      exports++;
      res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    stats: () => ({ exports, bytes }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

export async function measureTracingCost(options: TracingCostOptions): Promise<{
  loads: Record<Variant, TracingLoad>;
  exported: { requests: number; bytes: number };
  raw: Record<Variant, RawMeasurement[]>;
  markdown: string;
}> {
  const { durationS, windows, warmupWindows, log } = options;
  const connections = Math.max(1, Math.floor(options.connections / VARIANTS.length));
  const sink = await spanSink();
  const dir = mkdtempSync(join(tmpdir(), "edgecascade-tracing-"));
  const plain = join(dir, "plain.lua");
  writeFileSync(plain, wrkScript(options.requests));
  // A parent marked unsampled (flags 00), a new trace id per request as an edge would send.
  const withParent = join(dir, "unsampled-parent.lua");
  writeFileSync(
    withParent,
    wrkScript(
      options.requests.map((r, i) => ({
        ...r,
        headers: { ...r.headers, traceparent: `00-${(i + 1).toString(16).padStart(32, "a")}-00f067aa0ba902b7-00` },
      })),
    ),
  );
  const raw = Object.fromEntries(VARIANTS.map((v) => [v.key, [] as RawMeasurement[]])) as Record<
    Variant,
    RawMeasurement[]
  >;
  const pools: RegionalPool[] = [];
  try {
    for (const v of VARIANTS) {
      const tracing = v.key === "off" ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url, ...v.env };
      const pool = await startRegionalPool({ ...options.pool, env: { ...options.pool.env, ...tracing } });
      pools.push(pool);
      options.onStarted?.(pool.pid);
    }
    for (let window = 1; window <= warmupWindows + windows; window++) {
      const warmUp = window <= warmupWindows;
      const before = pools.map((p) => ({ all: cpuSeconds(p.pid), main: mainThreadCpuSeconds(p.pid) }));
      const results = await Promise.all(
        VARIANTS.map((v, i) =>
          wrk(`${pools[i]!.url}/v1/classify`, {
            connections,
            seconds: durationS,
            script: v.parent ? withParent : plain,
          }),
        ),
      );
      const line: string[] = [];
      VARIANTS.forEach((v, i) => {
        const pid = pools[i]!.pid;
        const all = cpuSeconds(pid);
        const main = mainThreadCpuSeconds(pid);
        const result = results[i]!;
        const usPer = (a: { user: number; kernel: number }, b: { user: number; kernel: number }) =>
          ((a.user + a.kernel - b.user - b.kernel) * 1e6) / result.requests;
        const m: RawMeasurement = {
          window,
          warmUp,
          reqPerSec: result.reqPerSec,
          p50Ms: result.p50Ms,
          p99Ms: result.p99Ms,
          cpuUsPerRequest: usPer(all, before[i]!.all),
          mainCpuUsPerRequest: usPer(main, before[i]!.main),
          errors: result.errors + result.non2xx,
        };
        raw[v.key].push(m);
        line.push(`${v.key} ${m.reqPerSec.toFixed(0)}/s ${m.cpuUsPerRequest.toFixed(1)} µs`);
      });
      log(`tracing ${warmUp ? "warm-up" : "window"} ${window}: ${line.join("  ")}\n`);
    }
  } finally {
    await Promise.all(pools.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
  const exported = sink.stats();
  await sink.close();
  /** The median over windows (warm-up or measured) of `key`'s `pick` over off's in the same window. */
  const overOff = (key: Variant, warmUp: boolean, pick: (m: RawMeasurement) => number) => {
    const off = raw.off.filter((m) => m.warmUp === warmUp);
    return round3(median(raw[key].filter((m) => m.warmUp === warmUp).map((m, w) => pick(m) / pick(off[w]!))));
  };
  const loads = Object.fromEntries(
    VARIANTS.map((v) => {
      const ms = raw[v.key].filter((m) => !m.warmUp);
      return [
        v.key,
        {
          name: v.name,
          reqPerSec: Math.round(median(ms.map((m) => m.reqPerSec))),
          p50Ms: round3(median(ms.map((m) => m.p50Ms))),
          p99Ms: round3(median(ms.map((m) => m.p99Ms))),
          cpuUsPerRequest: Math.round(median(ms.map((m) => m.cpuUsPerRequest)) * 10) / 10,
          mainCpuUsPerRequest: Math.round(median(ms.map((m) => m.mainCpuUsPerRequest)) * 10) / 10,
          errors: raw[v.key].reduce((n, m) => n + m.errors, 0),
          cpuOverOff: overOff(v.key, false, (m) => m.cpuUsPerRequest),
          mainCpuOverOff: overOff(v.key, false, (m) => m.mainCpuUsPerRequest),
          reqPerSecOverOff: overOff(v.key, false, (m) => m.reqPerSec),
          warmUpCpuOverOff: warmupWindows > 0 ? overOff(v.key, true, (m) => m.cpuUsPerRequest) : Number.NaN,
        },
      ];
    }),
  ) as Record<Variant, TracingLoad>;
  const markdown = `## Tracing cost

The pool with tracing off beside the same pool exporting spans over OTLP/HTTP (protobuf, batched, from its span
thread) to a sink that reads and drops them (\`scripts/benchmarks/tracing-cost.ts\`). The four pools are loaded at
the same time on the same core, ${connections} connections each, in windows of ${durationS} s: ${warmupWindows} of
warm-up, then ${windows} measured. A pool's ratio to tracing off is the median of the windows' own ratios. **CPU
per request over off** is the figure: every thread of the process counted, it is what a pool on a core of its own
pays, and its throughput there is in inverse proportion. Side-by-side throughput is not: the scheduler shares the
core by thread.

| pool | server CPU per request | **CPU over off** | event loop's CPU per request | event loop over off | during warm-up: CPU over off | side-by-side req/s | p50 ms | p99 ms | errors |
|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|
${VARIANTS.map((v) => {
  const l = loads[v.key];
  return `| ${l.name} | ${l.cpuUsPerRequest} µs | **${l.cpuOverOff}** | ${l.mainCpuUsPerRequest} µs | ${l.mainCpuOverOff} | ${l.warmUpCpuOverOff} | ${l.reqPerSec} | ${l.p50Ms} | ${l.p99Ms} | ${l.errors} |`;
}).join("\n")}

Exported during the run: ${exported.exports} OTLP requests, ${exported.bytes} bytes.
`;
  return { loads, exported: { requests: exported.exports, bytes: exported.bytes }, raw, markdown };
}
