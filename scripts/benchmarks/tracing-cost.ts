import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RegionalPool, type RegionalPoolOptions, startRegionalPool } from "../stack/regional-pool.ts";
import { median } from "./paired-ratio.ts";
import { cpuSeconds } from "./process-cpu.ts";
import { type WrkRequest, wrk, wrkScript } from "./wrk.ts";

/**
 * What tracing costs the pool (regional/tracing/): the pool with tracing off, beside the same pool exporting
 * spans over OTLP/HTTP with requests sampled at 1% (OTEL_TRACES_SAMPLER=parentbased_traceidratio, ratio 0.01:
 * requests without a parent, as wrk sends them), at 100%, and with every request carrying a parent marked
 * unsampled (the edge's `traceparent` of the other 99%), which a parent-based sampler must drop for next to
 * nothing. Same wrk load as the comparison's; rounds interleave the four pools; the ratios to "off" are the median
 * of each round's own. The spans go to a sink in this process that reads and drops them: what a collector does
 * with them is not the pool's cost.
 */

export interface TracingCostOptions {
  /** The pools to start (each with its tracing variables added). */
  pool: RegionalPoolOptions;
  /** The comparison's requests (one held-out row each). */
  requests: readonly WrkRequest[];
  connections: number;
  durationS: number;
  warmupS: number;
  rounds: number;
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

/** One wrk measurement of one pool. */
export interface RawMeasurement {
  round: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRequest: number;
  errors: number;
}

export interface TracingLoad {
  name: string;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerRequest: number;
  errors: number;
  /** Throughput over tracing off's: median of the rounds' own ratios (1 for off). */
  overOff: number;
  /** Server CPU per request over tracing off's, the same way. */
  cpuOverOff: number;
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
  const { connections, durationS, warmupS, rounds, log } = options;
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
    for (let round = 1; round <= rounds; round++) {
      // ABBA: the four in order and back, so that drift within a round (another process's burst on the
      // machine) weighs on each pool alike: every pool's two measurements average to the round's middle.
      const forward = [...VARIANTS.entries()];
      for (const [i, v] of [...forward, ...forward.reverse()]) {
        const pool = pools[i]!;
        const url = `${pool.url}/v1/classify`;
        const script = v.parent ? withParent : plain;
        await wrk(url, { connections, seconds: warmupS, script });
        const before = cpuSeconds(pool.pid);
        const result = await wrk(url, { connections, seconds: durationS, script });
        const after = cpuSeconds(pool.pid);
        const cpuUsPerRequest = ((after.user + after.kernel - before.user - before.kernel) * 1e6) / result.requests;
        raw[v.key].push({
          round,
          reqPerSec: result.reqPerSec,
          p50Ms: result.p50Ms,
          p99Ms: result.p99Ms,
          cpuUsPerRequest,
          errors: result.errors + result.non2xx,
        });
        log(
          `tracing round ${round} ${v.key.padEnd(15)} ${result.reqPerSec.toFixed(0)} req/s  p99 ${result.p99Ms.toFixed(2)} ms  ` +
            `server CPU/request ${cpuUsPerRequest.toFixed(1)} µs  errors ${result.errors + result.non2xx}\n`,
        );
      }
    }
  } finally {
    await Promise.all(pools.map((p) => p.stop()));
    rmSync(dir, { recursive: true, force: true });
  }
  const exported = sink.stats();
  await sink.close();
  /** A pool's mean of `pick` within each round (its two measurements). */
  const perRound = (key: Variant, pick: (m: RawMeasurement) => number) =>
    Array.from({ length: rounds }, (_, r) => {
      const ms = raw[key].filter((m) => m.round === r + 1);
      return ms.reduce((sum, m) => sum + pick(m), 0) / ms.length;
    });
  const loads = Object.fromEntries(
    VARIANTS.map((v) => {
      const ms = raw[v.key];
      const rps = perRound(v.key, (m) => m.reqPerSec);
      const cpu = perRound(v.key, (m) => m.cpuUsPerRequest);
      const offRps = perRound("off", (m) => m.reqPerSec);
      const offCpu = perRound("off", (m) => m.cpuUsPerRequest);
      return [
        v.key,
        {
          name: v.name,
          reqPerSec: Math.round(median(ms.map((m) => m.reqPerSec))),
          p50Ms: round3(median(ms.map((m) => m.p50Ms))),
          p99Ms: round3(median(ms.map((m) => m.p99Ms))),
          cpuUsPerRequest: Math.round(median(ms.map((m) => m.cpuUsPerRequest)) * 10) / 10,
          errors: ms.reduce((n, m) => n + m.errors, 0),
          overOff: round3(median(rps.map((x, r) => x / offRps[r]!))),
          cpuOverOff: round3(median(cpu.map((x, r) => x / offCpu[r]!))),
        },
      ];
    }),
  ) as Record<Variant, TracingLoad>;
  const markdown = `## Tracing cost

The pool with tracing off beside the same pool exporting spans over OTLP/HTTP (protobuf, batched) to a sink that
reads and drops them, the comparison's load (\`scripts/benchmarks/tracing-cost.ts\`). ${rounds} rounds, each measuring
the four in order and back (ABBA, so that drift within a round weighs on each alike); a pool's figure in a round is
the mean of its two measurements, and its ratios to tracing off are the median of the rounds' own.

| pool | req/s | throughput over off | p50 ms | p99 ms | server CPU per request | CPU over off | errors |
|---|---:|---:|---:|---:|---:|---:|---:|
${VARIANTS.map((v) => {
  const l = loads[v.key];
  return `| ${l.name} | ${l.reqPerSec} | ${l.overOff} | ${l.p50Ms} | ${l.p99Ms} | ${l.cpuUsPerRequest} µs | ${l.cpuOverOff} | ${l.errors} |`;
}).join("\n")}

Exported during the rounds: ${exported.exports} OTLP requests, ${exported.bytes} bytes.
`;
  return { loads, exported: { requests: exported.exports, bytes: exported.bytes }, raw, markdown };
}
