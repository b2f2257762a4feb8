import { readFile } from "node:fs/promises";
import { join } from "node:path";
import * as ortWeb from "onnxruntime-web";
import { heldoutPath } from "../../../protocol/heldout.ts";
import { type ModelConfig, modelIoOf } from "../../../protocol/model-config.ts";
import { checkModelFile } from "../../../protocol/model-file-check.ts";
import type { ModelPublicKey } from "../../../protocol/model-signature.ts";
import { nearestRank } from "../../../protocol/quantile.ts";
import { checkFixtureOutputs } from "../../../regional/fixture-check.ts";
import { FixtureCache } from "../../../regional/heldout-fixture.ts";
import { createOnnxModel, type OnnxModel } from "../../../regional/session.ts";
import { accuracy, labelAgreement } from "../calibrate.ts";
import { decodeModel } from "../onnx/proto.ts";
import { inspectSignature } from "../onnx/signature.ts";
import type { Measured, RowLatency } from "./gates.ts";

/** One row in, its output out. */
type RunOne = (row: Float32Array) => Promise<unknown>;

/** How the pools' fixture check allows accuracy to fall below the stated one (regional/repository.ts's default). */
const FIXTURE_TOLERANCE = 0.01;

/** The clocks the latency and energy gates read: wall time in ms, and this thread's CPU time in µs. */
export interface RunClocks {
  now(): number;
  threadCpuUs(): number;
}

/** The real ones: `performance.now()` and `process.threadCpuUsage()`. */
export const THREAD_CLOCKS: RunClocks = {
  now: () => performance.now(),
  threadCpuUs: () => {
    const { user, system } = process.threadCpuUsage();
    return user + system;
  },
};

/**
 * Per-row latency: `samples` runs of one row each (cycling through `rows`) after a warm-up, each timed on its
 * own; and this thread's CPU time over them, per row. Both runtimes run a row on the calling thread (one
 * intra-op thread, wasm without threads); the process's CPU time would also count its other threads (GC
 * helpers, idle runtime pools spinning), which read 3x the thread's figure for the wasm runtime here and
 * more on a busy machine: enough to fail the energy gate on load alone.
 */
export async function rowLatency(
  run: RunOne,
  rows: readonly Float32Array[],
  samples: number,
  clocks: RunClocks = THREAD_CLOCKS,
): Promise<RowLatency> {
  for (let i = 0; i < Math.min(100, samples); i++) await run(rows[i % rows.length]!);
  const times: number[] = [];
  const cpu0 = clocks.threadCpuUs();
  for (let i = 0; i < samples; i++) {
    const t0 = clocks.now();
    await run(rows[i % rows.length]!);
    times.push(clocks.now() - t0);
  }
  const cpuUs = clocks.threadCpuUs() - cpu0;
  times.sort((a, b) => a - b);
  return {
    p50Ms: nearestRank(times, 0.5),
    p99Ms: nearestRank(times, 0.99),
    cpuUsPerRow: cpuUs / samples,
    samples,
  };
}

async function webRunner(bytes: Uint8Array, config: ModelConfig, version: string): Promise<RunOne> {
  ortWeb.env.wasm.numThreads = 1;
  const session = await ortWeb.InferenceSession.create(bytes, { executionProviders: ["wasm"] });
  const { inputName, outputName, width, fixedBatch = 1 } = modelIoOf(config, version);
  // A graph with a fixed batch takes that many rows: the row, then rows of zeros (protocol/fixed-batch.ts).
  const rows = new Float32Array(fixedBatch * width);
  return (row) => {
    rows.set(row);
    return session.run({ [inputName]: new ortWeb.Tensor("float32", rows, [fixedBatch, width]) }, [outputName]);
  };
}

async function readVersion(modelsDir: string, config: ModelConfig, version: string): Promise<Uint8Array> {
  const entry = config.versions[version]!;
  return new Uint8Array(await readFile(join(modelsDir, config.name, version, entry.file)));
}

/** All fixture rows through a session, in chunks of the model's batch size. */
async function runFixture(session: OnnxModel, matrix: Float32Array, width: number, config: ModelConfig) {
  const rows = matrix.length / width;
  const classes = modelIoOf(config).classes;
  const out = new Float32Array(rows * classes);
  for (let start = 0; start < rows; start += config.maxBatchSize) {
    const n = Math.min(config.maxBatchSize, rows - start);
    out.set(await session.run(matrix.subarray(start * width, (start + n) * width), n), start * classes);
  }
  return out;
}

/**
 * Measure `version` of the model in `config` for the gates: file against its entry, signature (with a key),
 * a session as the pools make it, the graph against the config's tensors, the pools' fixture check, accuracy
 * and label agreement against the served version on the candidate's held-out rows, per-row latency and CPU
 * time in onnxruntime-node and (edge variants) onnxruntime-web, on `clocks` (default: the real ones). Stops at
 * the first step that fails.
 */
export async function measureVersion(options: {
  modelsDir: string;
  config: ModelConfig;
  version: string;
  publicKey?: ModelPublicKey;
  samples: number;
  clocks?: RunClocks;
}): Promise<Measured> {
  const { modelsDir, config, version, samples } = options;
  const entry = config.versions[version]!;
  const bytes = await readVersion(modelsDir, config, version);
  const check = await checkModelFile(bytes, config.name, version, entry, options.publicKey);
  const measured: Measured = {
    file: { bytes: check.bytes, sha256: check.sha256, listedSha256: entry.sha256, listedBytes: entry.bytes },
    load: { error: undefined },
  };
  if (options.publicKey) measured.signature = { problem: check.signatureProblem };
  const io = modelIoOf(config, version);
  let candidate: OnnxModel;
  try {
    candidate = await createOnnxModel(bytes, io, "cpu", entry.weights);
  } catch (err) {
    measured.load = { error: (err as Error).message };
    return measured;
  }
  let served: OnnxModel | undefined;
  try {
    const graph = inspectSignature(decodeModel(bytes));
    const classes = graph.probabilities.classes;
    measured.schema =
      graph.input.name !== io.inputName ||
      graph.input.width !== io.width ||
      graph.input.fixedBatch !== io.fixedBatch ||
      graph.probabilities.name !== io.outputName ||
      (classes !== undefined && classes !== io.classes)
        ? `graph: "${graph.input.name}" [${graph.input.fixedBatch ?? -1}, ${graph.input.width}] -> "${graph.probabilities.name}" [-1, ${classes ?? "?"}]; ` +
          `config.json: "${io.inputName}" [${io.fixedBatch ?? -1}, ${io.width}] -> "${io.outputName}" [-1, ${io.classes}]`
        : undefined;
    if (measured.schema) return measured;

    const fixture = await new FixtureCache().read(join(modelsDir, heldoutPath(config, version)));
    const probs = await runFixture(candidate, fixture.matrix, fixture.width, config);
    measured.fixture = checkFixtureOutputs(
      probs,
      fixture.labels,
      io.classes,
      Math.max(0, entry.accuracy.test - FIXTURE_TOLERANCE),
    );

    const servedVersion = config.version;
    const servedEntry = config.versions[servedVersion]!;
    const servedIo = modelIoOf(config, servedVersion);
    served = await createOnnxModel(
      await readVersion(modelsDir, config, servedVersion),
      servedIo,
      "cpu",
      servedEntry.weights,
    );
    const servedProbs = await runFixture(served, fixture.matrix, fixture.width, config);
    const rows = fixture.labels.length;
    const matrix = (p: Float32Array) => ({ probs: p, rows, classes: io.classes });
    measured.comparison = {
      rows,
      servedVersion,
      candidate: accuracy(matrix(probs), fixture.labels),
      served: accuracy(matrix(servedProbs), fixture.labels),
      agreement: labelAgreement(matrix(probs), matrix(servedProbs)),
    };

    const rowsOf = Array.from({ length: rows }, (_, r) =>
      fixture.matrix.slice(r * fixture.width, (r + 1) * fixture.width),
    );
    measured.node = await rowLatency((row) => candidate.run(row, 1), rowsOf, samples, options.clocks);
    if (config.standsFor) {
      measured.web = await rowLatency(await webRunner(bytes, config, version), rowsOf, samples, options.clocks);
    }
    return measured;
  } finally {
    await candidate.release();
    await served?.release();
  }
}
