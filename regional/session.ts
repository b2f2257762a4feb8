import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import * as ort from "onnxruntime-node";
import { inFixedBatches } from "../protocol/fixed-batch.ts";
import type { ModelIo } from "../protocol/model-config.ts";
import type { ExecutionProvider } from "./execution-provider.ts";
import { PROVIDER_CHECK_MODEL } from "./provider-check-model.ts";

/** Runs `batch` rows (row-major float32) through a model and returns its output rows. */
export type RunRows = (data: Float32Array, batch: number) => Promise<Float32Array>;

/** One onnxruntime-node session of one model version. */
export interface OnnxModel {
  run: RunRows;
  release(): Promise<void>;
}

function sessionOptions(provider: ExecutionProvider, weights: "fp32" | "int8"): ort.InferenceSession.SessionOptions {
  return {
    executionProviders: provider === "cuda" ? [{ name: "cuda", deviceId: 0 }, "cpu"] : ["cpu"],
    // At "extended"/"all" onnxruntime-node rewrites DequantizeLinear+MatMul into MatMulNBits, which moved the
    // int8 model's probabilities by 1.4e-2 (test/models/models.test.ts); "basic" keeps them within 6e-7.
    graphOptimizationLevel: weights === "int8" ? "basic" : "all",
    // One thread per session: measured as fast as the default on these small MLPs, and it keeps N cluster
    // workers from oversubscribing N cores.
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: "sequential",
  };
}

/** A session for a verified model file. */
export async function createOnnxModel(
  bytes: Uint8Array,
  io: ModelIo,
  provider: ExecutionProvider,
  weights: "fp32" | "int8" = "fp32",
): Promise<OnnxModel> {
  const session = await ort.InferenceSession.create(bytes, sessionOptions(provider, weights));
  const { inputName, outputName, width, classes, fixedBatch } = io;
  // Only the probabilities are fetched, by name: tree classifiers also output labels (int64), and first.
  const fetches = [outputName];
  if (!session.inputNames.includes(inputName) || !session.outputNames.includes(outputName)) {
    await session.release();
    throw new Error(
      `the graph's tensors (inputs ${session.inputNames.join(", ")}; outputs ${session.outputNames.join(", ")}) ` +
        `are not the config's ("${inputName}" -> "${outputName}")`,
    );
  }
  const run: RunRows = async (data, batch) => {
    const out = await session.run({ [inputName]: new ort.Tensor("float32", data, [batch, width]) }, fetches);
    return out[outputName]!.data as Float32Array;
  };
  return {
    // A graph with a fixed batch runs any number of rows in runs of exactly that many (protocol/fixed-batch.ts).
    run: fixedBatch === undefined ? run : (inFixedBatches(run, fixedBatch, width, classes) as RunRows),
    release: () => session.release(),
  };
}

/**
 * Where onnxruntime-node's install script puts the CUDA provider (`ONNXRUNTIME_NODE_INSTALL=cuda12`); absent
 * after the default install, which skips that download.
 */
const CUDA_PROVIDER = join(
  dirname(createRequire(import.meta.url).resolve("onnxruntime-node/package.json")),
  "bin/napi-v6",
  process.platform,
  process.arch,
  "libonnxruntime_providers_cuda.so",
);

/** Throws when `provider` cannot create a session (for CUDA: its shared libraries or the GPU are missing). */
export async function checkProvider(provider: ExecutionProvider): Promise<void> {
  // Checked first so that a CPU-only install says why in one line instead of onnxruntime's native error.
  if (provider === "cuda" && !existsSync(CUDA_PROVIDER)) {
    throw new Error(`the CUDA provider is not installed (${CUDA_PROVIDER}; see docs/regional.md, GPU hosts)`);
  }
  const session = await ort.InferenceSession.create(PROVIDER_CHECK_MODEL, sessionOptions(provider, "fp32"));
  await session.release();
}
