import { readFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { parseArgs } from "node:util";
import * as ort from "onnxruntime-node";

/**
 * The baselines of `npm run bench:regional`: what a user would write instead of the pool, plain `node:http`
 * with nothing of the pool's stack. Both read the body, `JSON.parse` it and answer JSON:
 *   --mode per-request  one onnxruntime-node `session.run` per request (no batching)
 *   --mode constant     no inference: a constant answer of the right shape (Node's HTTP layer alone)
 * The model's input width and classes come from its config.json, not from this file. Not for serving: no
 * validation, no limits, no metrics. Logs `{"msg":"ready","port":P}` once listening, as the pool does, so
 * the benchmark starts both the same way.
 */
const { values } = parseArgs({
  options: {
    mode: { type: "string" },
    port: { type: "string", default: "0" },
    host: { type: "string", default: "127.0.0.1" },
    models: { type: "string", default: join(import.meta.dirname, "../../models") },
    model: { type: "string", default: "digits" },
  },
  // The benchmark starts every server with the pool's flags; the ones the baselines do not use are ignored.
  strict: false,
});
const mode = values.mode;
if (mode !== "per-request" && mode !== "constant") {
  process.stderr.write("usage: plain-servers.ts --mode per-request|constant [--port P] [--models DIR]\n");
  process.exit(2);
}

const dir = join(String(values.models), String(values.model));
const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
const input = config.inputs[0];
const output = config.outputs[0];
const width: number = input.shape[1];
const classes: number = output.shape[1];

const session =
  mode === "per-request"
    ? await ort.InferenceSession.create(join(dir, config.version, config.versions[config.version].file), {
        intraOpNumThreads: 1,
        interOpNumThreads: 1,
      })
    : undefined;
const uniform = new Array<number>(classes).fill(1 / classes);

/**
 * A JSON answer with its Content-Length, as a careful user writes it: without one, node:http sends the body
 * chunked (`res.end(text)` after `writeHead`), which costs it a chunk header and trailer on every answer.
 */
function answer(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
}

const server = createServer((req, res) => {
  // GET: readiness, so the benchmark starts and checks these servers as it does the pool.
  if (req.method === "GET") {
    answer(res, 200, '{"ready":true}');
    return;
  }
  const chunks: Buffer[] = [];
  req.on("data", (chunk: Buffer) => chunks.push(chunk));
  req.on("end", async () => {
    try {
      const body = JSON.parse(Buffer.concat(chunks).toString());
      let scores = uniform;
      if (session) {
        const tensor = new ort.Tensor("float32", Float32Array.from(body.inputs), [1, width]);
        const out = await session.run({ [input.name]: tensor });
        scores = Array.from(out[output.name]!.data as Float32Array);
      }
      let top = 0;
      for (let c = 1; c < classes; c++) if (scores[c]! > scores[top]!) top = c;
      answer(
        res,
        200,
        JSON.stringify({
          model: body.model,
          predictions: [{ class: top, label: config.labels[top], confidence: scores[top], scores }],
        }),
      );
    } catch (err) {
      answer(res, 400, JSON.stringify({ error: (err as Error).message }));
    }
  });
});
server.listen(Number(values.port), String(values.host), () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ msg: "ready", port, mode })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
