import { readFileSync } from "node:fs";
import { createServer, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import * as ort from "onnxruntime-node";
import { toPredictions } from "../../protocol/responses.ts";
import { processFlags } from "../../tools/cli/command.ts";

/**
 * The plain servers of `npm run bench:regional`: what a user would write instead of the pool, plain `node:http`
 * with nothing of the pool's stack. Each reads the body, `JSON.parse`s it and answers JSON:
 *   --mode per-request  one onnxruntime-node `session.run` per request (no batching)
 *   --mode constant     no inference: a constant answer of the right shape (Node's HTTP layer alone)
 *   --mode batching     a reference, not a baseline: the least a server that runs the model per batch does.
 *                       Requests parsed in one event-loop turn are run together (a `setImmediate` batch, one
 *                       `session.run` at a time, as the pool's batcher does), and each gets the pool's answer
 *                       body (version, shortest-decimal scores, servedBy) with Content-Type and Content-Length.
 * The model's input width and classes come from its config.json, not from this file. Not for serving: no
 * validation, no limits, no metrics. Logs `{"msg":"ready","port":P}` once listening, as the pool does, so
 * the benchmark starts both the same way.
 */
const { values } = processFlags(
  {
    name: "plain-servers",
    usage: "node scripts/benchmarks/plain-servers.ts --mode per-request|constant|batching [--port P] [--models DIR]",
    flags: {
      mode: { type: "string", choices: ["per-request", "constant", "batching"], required: true, help: "the server" },
      port: { type: "number", placeholder: "P", default: 0, max: 65535, integer: true, help: "0: any free port" },
      host: { type: "string", placeholder: "HOST", default: "127.0.0.1", help: "the address to listen on" },
      models: {
        type: "string",
        placeholder: "DIR",
        default: join(import.meta.dirname, "../../models"),
        defaultText: "this repository's models/",
        help: "model repository",
      },
      model: { type: "string", placeholder: "NAME", default: "digits", help: "the model" },
      region: { type: "string", placeholder: "NAME", default: "bench", help: "batching: the answer's servedBy region" },
    },
    // The benchmark starts every server with the pool's flags; the ones the baselines do not use are ignored.
    parse: { passThrough: true },
  },
  "node scripts/benchmarks/plain-servers.ts",
);
const mode = values.mode;

const dir = join(values.models, values.model);
const config = JSON.parse(readFileSync(join(dir, "config.json"), "utf8"));
const input = config.inputs[0];
const output = config.outputs[0];
const width: number = input.shape[1];
const classes: number = output.shape[1];

const session =
  mode !== "constant"
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

/** A parsed request waiting for the next batch (`--mode batching`). */
interface Waiting {
  res: ServerResponse;
  model: string;
  inputs: number[];
}
let queue: Waiting[] = [];
let running = false;
let scheduled = false;
const servedBy = `regional:${values.region}`;

function schedule(): void {
  if (running || scheduled) return;
  scheduled = true;
  setImmediate(runBatch);
}

/** One `session.run` for every request queued, then each answer; requests that came meanwhile go next. */
async function runBatch(): Promise<void> {
  scheduled = false;
  running = true;
  const batch = queue;
  queue = [];
  try {
    const data = new Float32Array(batch.length * width);
    for (const [i, w] of batch.entries()) data.set(w.inputs, i * width);
    const out = await session!.run({ [input.name]: new ort.Tensor("float32", data, [batch.length, width]) });
    const probs = out[output.name]!.data as Float32Array;
    for (const [i, w] of batch.entries()) {
      const predictions = toPredictions(probs.subarray(i * classes, (i + 1) * classes), 1, config.labels);
      answer(w.res, 200, JSON.stringify({ model: w.model, version: config.version, predictions, servedBy }));
    }
  } catch (err) {
    for (const w of batch) answer(w.res, 500, JSON.stringify({ error: (err as Error).message }));
  } finally {
    running = false;
    if (queue.length > 0) schedule();
  }
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
      if (mode === "batching") {
        queue.push({ res, model: body.model, inputs: body.inputs });
        schedule();
        return;
      }
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
server.listen(values.port, values.host, () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`${JSON.stringify({ msg: "ready", port, mode })}\n`);
});
process.on("SIGTERM", () => server.close(() => process.exit(0)));
