import { setTimeout as sleep } from "node:timers/promises";
import { credentials, makeGenericClientConstructor } from "@grpc/grpc-js";
import { inferenceService } from "../../regional/grpc/proto.ts";
import { freePort } from "../../tools/local-stack/processes.ts";
import { LoadClient, runClosedLoop } from "../../tools/probe/load.ts";
import { quantileOrZero } from "../../tools/probe/summary.ts";
import { type RegionalPoolOptions, startRegionalPool } from "../stack/regional-pool.ts";
import { cpuSeconds } from "./process-cpu.ts";

/**
 * `npm run bench:regional`'s gRPC section: the pool's v2 inference over gRPC (`ModelInfer` with raw contents in
 * and out, as tritonclient sends it) against HTTP JSON and HTTP binary tensor data, at 1 and 64 rows per
 * request. wrk speaks no gRPC, so all three loads come from one Node generator, the same closed loop with the
 * same concurrency for each (the generator's closed loop, tools/probe/load.ts): HTTP through its LoadClient
 * (an undici Pool, one connection per in-flight request), gRPC through one grpc-js channel (one HTTP/2
 * connection, calls multiplexed: how gRPC clients run). Bodies and messages are encoded once beforehand and
 * answers are read whole but not parsed, so the generator's cost per request is the transport's. Rounds
 * interleave the six loads; ratios are the median of each round's own ratio.
 */

export interface GrpcWireOptions {
  /** The pool to start (its `--grpc-port` is added here). */
  pool: RegionalPoolOptions;
  model: string;
  inputName: string;
  /** Held-out input rows; requests take windows of `batch` of them in turn. */
  rows: readonly (readonly number[])[];
  /** Requests in flight at once. */
  concurrency: number;
  durationS: number;
  warmupS: number;
  rounds: number;
  log: (line: string) => void;
  /** Called with the pool's pid once it is ready, before any load (bench:regional pins it to its core). */
  onStarted?: (pid: number) => void;
}

export interface LoadMeasurement {
  requests: number;
  reqPerSec: number;
  rowsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  cpuUsPerRow: number;
}

const KINDS = ["json", "binary", "grpc"] as const;
type Kind = (typeof KINDS)[number];
const NAMES: Record<Kind, string> = {
  json: "HTTP JSON",
  binary: "HTTP binary tensor data",
  grpc: "gRPC, raw contents",
};

/**
 * Run `send` in `concurrency` closed loops for `seconds`, either transport timed the same way (from the call to its
 * answer): requests, errors, sorted latencies in ms.
 */
async function closedLoop(send: (i: number) => Promise<boolean>, concurrency: number, seconds: number) {
  const end = performance.now() + seconds * 1000;
  const latencies: number[] = [];
  let errors = 0;
  await runClosedLoop(
    concurrency,
    () => performance.now() >= end,
    async (i) => {
      const t0 = performance.now();
      const ok = await send(i).catch(() => false);
      latencies.push(performance.now() - t0);
      if (!ok) errors++;
    },
  );
  latencies.sort((a, b) => a - b);
  return { requests: latencies.length, errors, latencies };
}
/** The middle value; the mean of the middle two for an even count. */
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const round2 = (x: number) => Math.round(x * 100) / 100;

export async function measureGrpcWire(o: GrpcWireOptions) {
  const grpcPort = await freePort();
  const pool = await startRegionalPool({
    ...o.pool,
    extraArgs: [...(o.pool.extraArgs ?? []), "--grpc-port", String(grpcPort)],
  });
  o.onStarted?.(pool.pid);
  const http = new LoadClient(pool.url, { connections: o.concurrency });
  const Client = makeGenericClientConstructor(inferenceService, "GRPCInferenceService");
  const grpc = new Client(`127.0.0.1:${grpcPort}`, credentials.createInsecure());
  const path = `/v2/models/${o.model}/infer`;
  const encode = inferenceService.ModelInfer!.requestSerialize as (m: object) => Buffer;

  /** Pre-encoded requests of each kind at `batch` rows (windows over the held-out rows). */
  function requests(kind: Kind, batch: number): (i: number) => Promise<boolean> {
    const bodies: (string | Uint8Array)[] = [];
    for (let from = 0; from + batch <= o.rows.length && bodies.length < 64; from += batch) {
      const rows = o.rows.slice(from, from + batch);
      const shape = [batch, rows[0]!.length];
      const raw = new Uint8Array(Float32Array.from(rows.flat()).buffer);
      if (kind === "json") {
        bodies.push(JSON.stringify({ inputs: [{ name: o.inputName, shape, datatype: "FP32", data: rows }] }));
      } else if (kind === "binary") {
        const json = new TextEncoder().encode(
          JSON.stringify({
            parameters: { binary_data_output: true },
            inputs: [{ name: o.inputName, shape, datatype: "FP32", parameters: { binary_data_size: raw.length } }],
          }),
        );
        const body = new Uint8Array(json.length + raw.length);
        body.set(json);
        body.set(raw, json.length);
        bodies.push(Object.assign(body, { jsonLength: json.length }));
      } else {
        bodies.push(
          encode({
            model_name: o.model,
            inputs: [{ name: o.inputName, datatype: "FP32", shape }],
            raw_input_contents: [raw],
          }),
        );
      }
    }
    if (kind === "grpc") {
      return (i) =>
        new Promise((resolve) => {
          grpc.makeUnaryRequest(
            "/inference.GRPCInferenceService/ModelInfer",
            (b: Buffer) => b,
            (b: Buffer) => b,
            bodies[i % bodies.length] as Buffer,
            (err) => resolve(!err),
          );
        });
    }
    return async (i) => {
      const body = bodies[i % bodies.length]!;
      const headers: Record<string, string> =
        typeof body === "string"
          ? { "content-type": "application/json" }
          : {
              "content-type": "application/octet-stream",
              "inference-header-content-length": String((body as Uint8Array & { jsonLength: number }).jsonLength),
            };
      return (await http.send({ path, headers, body })).status === 200;
    };
  }

  const loads = [1, 64].flatMap((batch) => KINDS.map((kind) => ({ key: `${kind}${batch}`, kind, batch })));
  const raw: Record<string, LoadMeasurement[]> = Object.fromEntries(loads.map((l) => [l.key, []]));
  try {
    for (let round = 1; round <= o.rounds; round++) {
      for (const load of loads) {
        const send = requests(load.kind, load.batch);
        await closedLoop(send, o.concurrency, o.warmupS);
        await sleep(100);
        const before = cpuSeconds(pool.pid);
        const started = performance.now();
        const run = await closedLoop(send, o.concurrency, o.durationS);
        const seconds = (performance.now() - started) / 1000;
        const after = cpuSeconds(pool.pid);
        const rows = run.requests * load.batch;
        const m: LoadMeasurement = {
          requests: run.requests,
          reqPerSec: run.requests / seconds,
          rowsPerSec: rows / seconds,
          p50Ms: quantileOrZero(run.latencies, 0.5),
          p99Ms: quantileOrZero(run.latencies, 0.99),
          errors: run.errors,
          cpuUsPerRow: ((after.user + after.kernel - before.user - before.kernel) * 1e6) / rows,
        };
        raw[load.key]!.push(m);
        o.log(
          `grpc-wire round ${round} ${load.key.padEnd(9)} ${m.reqPerSec.toFixed(0)} req/s  ${m.rowsPerSec.toFixed(0)} rows/s  ` +
            `p50 ${m.p50Ms.toFixed(2)}  p99 ${m.p99Ms.toFixed(2)} ms  errors ${m.errors}  server CPU/row ${m.cpuUsPerRow.toFixed(1)} µs\n`,
        );
      }
    }
  } finally {
    grpc.close();
    await http.close();
    await pool.stop();
  }

  const summary = Object.fromEntries(
    loads.map((l) => {
      const ms = raw[l.key]!;
      const med = (pick: (m: LoadMeasurement) => number) => median(ms.map(pick));
      return [
        l.key,
        {
          name: `${NAMES[l.kind]}, ${l.batch} row${l.batch > 1 ? "s" : ""} per request`,
          rowsPerRequest: l.batch,
          reqPerSec: Math.round(med((m) => m.reqPerSec)),
          rowsPerSec: Math.round(med((m) => m.rowsPerSec)),
          p50Ms: round2(med((m) => m.p50Ms)),
          p99Ms: round2(med((m) => m.p99Ms)),
          cpuUsPerRow: Math.round(med((m) => m.cpuUsPerRow) * 10) / 10,
          errors: ms.reduce((n, m) => n + m.errors, 0),
        },
      ];
    }),
  );
  /** gRPC over each HTTP format, rows/s, per batch size: median of the rounds' own ratios. */
  const ratio = (other: Kind, batch: number) =>
    round2(median(raw[`grpc${batch}`]!.map((g, i) => g.rowsPerSec / raw[`${other}${batch}`]![i]!.rowsPerSec)));
  const grpcOver = {
    json: { 1: ratio("json", 1), 64: ratio("json", 64) },
    binary: { 1: ratio("binary", 1), 64: ratio("binary", 64) },
  };
  const generator = `one Node process (closed loop, ${o.concurrency} in flight; HTTP: undici Pool, ${o.concurrency} connections; gRPC: one grpc-js channel)`;

  const markdown = `## gRPC against HTTP JSON and binary

The pool alone (\`--grpc-port\`), v2 inference of ${o.model}, ${o.rounds} rounds of the six loads, ${o.durationS} s each after
${o.warmupS} s of warm-up, from ${generator}: wrk speaks no gRPC, so the three protocols share one Node
generator here, and these numbers are not comparable with wrk's above (the generator takes more of the cores).
Requests are encoded beforehand and answers read whole, not parsed (\`scripts/benchmarks/grpc-wire.ts\`).

| load | req/s | rows/s | p50 ms | p99 ms | server CPU per row | errors |
|---|---:|---:|---:|---:|---:|---:|
${Object.values(summary)
  .map(
    (w) =>
      `| ${w.name} | ${w.reqPerSec} | ${w.rowsPerSec} | ${w.p50Ms} | ${w.p99Ms} | ${w.cpuUsPerRow} µs | ${w.errors} |`,
  )
  .join("\n")}

gRPC over HTTP JSON, rows/s (median of the rounds' own ratios): ${grpcOver.json[1]}× at 1 row per request, ${grpcOver.json[64]}× at 64;
over HTTP binary: ${grpcOver.binary[1]}× at 1 row, ${grpcOver.binary[64]}× at 64.
`;
  return { generator, loads: summary, grpcOver, raw, markdown };
}
