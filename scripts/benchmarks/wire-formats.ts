import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type RegionalPoolOptions, startRegionalPool } from "../stack/regional-pool.ts";
import { median } from "./paired-ratio.ts";
import { cpuSeconds } from "./process-cpu.ts";
import { type WrkRequest, type WrkResult, wrk, wrkScript } from "./wrk.ts";

/**
 * bench:regional's wire formats: the pool alone, v2 infer with JSON data against Triton's binary tensor data
 * extension (little-endian FP32 in and out), at 1 and 64 rows per request, `rounds` rounds of the four loads.
 */
export interface WireFormatsOptions {
  /** The pool to start. */
  pool: RegionalPoolOptions;
  model: string;
  /** The model's input tensor's name. */
  inputName: string;
  /** Held-out rows, windows of which make the bodies. */
  rows: readonly number[][];
  connections: number;
  durationS: number;
  warmupS: number;
  rounds: number;
  log: (line: string) => void;
  /** Called with the pool's pid once it is ready (bench:regional pins it to the servers' core). */
  onStarted?: (pid: number) => void;
}

interface WireLoad {
  key: string;
  name: string;
  batch: number;
  script: string;
}
export interface WireMeasurement extends WrkResult {
  rowsPerSec: number;
  cpuUsPerRow: number;
}

const round2 = (x: number) => Math.round(x * 100) / 100;

/** v2 infer bodies of `batch` held-out rows each (windows over the rows), JSON or binary in and out. */
function inferRequests(o: WireFormatsOptions, batch: number, binary: boolean): WrkRequest[] {
  const out: WrkRequest[] = [];
  const path = `/v2/models/${o.model}/infer`;
  for (let from = 0; from + batch <= o.rows.length && out.length < 64; from += batch) {
    const rows = o.rows.slice(from, from + batch);
    if (!binary) {
      out.push({
        method: "POST",
        path,
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          inputs: [{ name: o.inputName, shape: [batch, rows[0]!.length], datatype: "FP32", data: rows }],
        }),
      });
      continue;
    }
    const values = new Uint8Array(Float32Array.from(rows.flat()).buffer);
    const json = new TextEncoder().encode(
      JSON.stringify({
        parameters: { binary_data_output: true },
        inputs: [
          {
            name: o.inputName,
            shape: [batch, rows[0]!.length],
            datatype: "FP32",
            parameters: { binary_data_size: values.length },
          },
        ],
      }),
    );
    const body = new Uint8Array(json.length + values.length);
    body.set(json);
    body.set(values, json.length);
    out.push({
      method: "POST",
      path,
      headers: { "content-type": "application/octet-stream", "inference-header-content-length": String(json.length) },
      body,
    });
  }
  return out;
}

export async function measureWireFormats(o: WireFormatsOptions) {
  const { connections, warmupS, durationS } = o;
  const dir = mkdtempSync(join(tmpdir(), "edgecascade-bench-"));
  const loads: WireLoad[] = [1, 64].flatMap((batch) =>
    [false, true].map((binary) => {
      const key = `${binary ? "binary" : "json"}${batch}`;
      const file = join(dir, `${key}.lua`);
      writeFileSync(file, wrkScript(inferRequests(o, batch, binary)));
      return {
        key,
        name: `${binary ? "binary" : "JSON"}, ${batch} row${batch > 1 ? "s" : ""} per request`,
        batch,
        script: file,
      };
    }),
  );
  const raw = Object.fromEntries(loads.map((w) => [w.key, [] as WireMeasurement[]]));
  const pool = await startRegionalPool(o.pool);
  o.onStarted?.(pool.pid);
  try {
    for (let round = 1; round <= o.rounds; round++) {
      for (const load of loads) {
        const url = `${pool.url}/v2/models/${o.model}/infer`;
        await wrk(url, { connections, seconds: warmupS, script: load.script });
        const before = cpuSeconds(pool.pid);
        const result = await wrk(url, { connections, seconds: durationS, script: load.script });
        const after = cpuSeconds(pool.pid);
        const rows = result.requests * load.batch;
        const m = {
          ...result,
          rowsPerSec: result.reqPerSec * load.batch,
          cpuUsPerRow: ((after.user + after.kernel - before.user - before.kernel) * 1e6) / rows,
        };
        raw[load.key]!.push(m);
        o.log(
          `wire round ${round} ${load.key.padEnd(8)} ${m.reqPerSec.toFixed(0)} req/s  ${m.rowsPerSec.toFixed(0)} rows/s  ` +
            `p50 ${m.p50Ms.toFixed(2)}  p99 ${m.p99Ms.toFixed(2)} ms  errors ${m.errors}  non-2xx ${m.non2xx}  ` +
            `server CPU/row ${m.cpuUsPerRow.toFixed(1)} µs\n`,
        );
      }
    }
  } finally {
    await pool.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const summary = Object.fromEntries(
    loads.map((w) => {
      const ms = raw[w.key]!;
      const med = (pick: (m: WireMeasurement) => number) => median(ms.map(pick));
      return [
        w.key,
        {
          name: w.name,
          rowsPerRequest: w.batch,
          reqPerSec: Math.round(med((m) => m.reqPerSec)),
          rowsPerSec: Math.round(med((m) => m.rowsPerSec)),
          p50Ms: round2(med((m) => m.p50Ms)),
          p99Ms: round2(med((m) => m.p99Ms)),
          cpuUsPerRow: Math.round(med((m) => m.cpuUsPerRow) * 10) / 10,
          errors: ms.reduce((n, m) => n + m.errors + m.non2xx, 0),
        },
      ];
    }),
  );
  /** Binary over JSON, per batch size: median of the rounds' own ratios of rows/s. */
  const binaryOverJson = Object.fromEntries(
    [1, 64].map((batch) => [
      batch,
      round2(median(raw[`binary${batch}`]!.map((b, i) => b.rowsPerSec / raw[`json${batch}`]![i]!.rowsPerSec))),
    ]),
  );
  const markdown = `## Wire formats: JSON against binary tensor data

The pool alone, POST /v2/models/${o.model}/infer, ${o.rounds} rounds of the four loads; binary is Triton's binary tensor
data extension (\`Inference-Header-Content-Length\`, rows as little-endian FP32 after the JSON part, the answer's
probabilities returned the same way with \`binary_data_output\`).

| load | req/s | rows/s | p50 ms | p99 ms | server CPU per row | errors |
|---|---:|---:|---:|---:|---:|---:|
${Object.values(summary)
  .map(
    (w) =>
      `| ${w.name} | ${w.reqPerSec} | ${w.rowsPerSec} | ${w.p50Ms} | ${w.p99Ms} | ${w.cpuUsPerRow} µs | ${w.errors} |`,
  )
  .join("\n")}

Binary over JSON, rows/s (median of the rounds' own ratios): ${binaryOverJson[1]}× at 1 row per request,
${binaryOverJson[64]}× at 64.
`;
  return { loads: summary, raw, binaryOverJson, markdown };
}
