import { Worker } from "node:worker_threads";
import { argmax } from "../../protocol/heldout.ts";
import type { ProbeTarget } from "./target.ts";

/** A running no-op server: its URL and how to stop it. */
export interface NoopServer {
  url: string;
  close(): Promise<void>;
}

// The server runs on its own thread (its own event loop), as a real server would run apart from the probe.
const SERVER = `
const { createServer } = require("node:http");
const { parentPort, workerData } = require("node:worker_threads");
const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => {
    res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(workerData.body) });
    res.end(workerData.body);
  });
});
server.listen(0, "127.0.0.1", () => parentPort.postMessage(server.address().port));
parentPort.on("message", () => server.close(() => process.exit(0)));
`;

/**
 * A server that answers every request at once with `body`, for measuring the probe's own floor: the same
 * requests on the same schedule, through the same client and loopback, with nothing behind them.
 */
export async function startNoopServer(body: string): Promise<NoopServer> {
  const worker = new Worker(SERVER, { eval: true, workerData: { body } });
  const port = await new Promise<number>((resolve, reject) => {
    worker.once("message", resolve);
    worker.once("error", reject);
  });
  return {
    url: `http://127.0.0.1:${port}`,
    async close() {
      const exited = new Promise((resolve) => worker.once("exit", resolve));
      worker.postMessage("close");
      await exited;
    },
  };
}

/** What the no-op server answers for a probe of `target`: a cache hit of its first held-out row. */
export function cacheHitAnswer(target: ProbeTarget): string {
  const scores = target.heldout.rows[0]?.expected[target.model] ?? [];
  const best = argmax(scores);
  const prediction = { class: best, label: target.config.labels[best], confidence: Math.max(...scores), scores };
  return JSON.stringify({
    model: target.model,
    version: target.config.version,
    predictions: [prediction],
    servedBy: "cache",
  });
}
