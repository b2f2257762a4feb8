import { Pool } from "undici";
import { startEdgeWorker } from "./stack/edge-worker.ts";

const row = () => Array.from({ length: 64 }, () => Math.floor(Math.random() * 17));
async function run(url: string, name: string, body: () => string, n = 400, rate = 100) {
  const pool = new Pool(url, { connections: 1 });
  const lat: number[] = [];
  const start = performance.now();
  const all: Promise<void>[] = [];
  for (let i = 0; i < n; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    all.push(
      (async () => {
        const t = performance.now();
        const res = await pool.request({
          method: "POST",
          path: "/v1/classify",
          headers: { "content-type": "application/json" },
          body: body(),
        });
        await res.body.text();
        lat.push(performance.now() - t);
      })(),
    );
  }
  await Promise.all(all);
  lat.sort((a, b) => a - b);
  console.log(
    name.padEnd(40),
    "p50",
    lat[Math.floor(n * 0.5)]!.toFixed(2),
    "p95",
    lat[Math.floor(n * 0.95)]!.toFixed(2),
  );
  await pool.close();
}
const fixed = JSON.stringify({ model: "digits", inputs: row() });
for (const rl of [true, false]) {
  const edge = await startEdgeWorker({ vars: { REGIONS: "[]" }, ...(rl ? {} : { rateLimit: false }) });
  for (let r = 0; r < 2; r++) {
    await run(edge.url, `rate limiter ${rl}: cache hit`, () => fixed);
    await run(edge.url, `rate limiter ${rl}: edge unique`, () =>
      JSON.stringify({ model: "digits", inputs: row(), parameters: { cascade: "edge" } }),
    );
  }
  await edge.dispose();
}
