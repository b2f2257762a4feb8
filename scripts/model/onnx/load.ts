import { readFile } from "node:fs/promises";
import type { ModelSignature } from "../../../protocol/model-config.ts";
import { createOnnxModel, type OnnxModel } from "../../../regional/session.ts";
import { RefusedError } from "../cli.ts";
import { decodeModel, type ModelProto } from "./proto.ts";
import { inspectSignature, type OnnxSignature, SignatureError } from "./signature.ts";

/** A model file read, decoded and inspected. */
export interface Candidate {
  /** What the messages call it: the flag and the file, e.g. `--full model.onnx`. */
  label: string;
  bytes: Uint8Array;
  model: ModelProto;
  signature: OnnxSignature;
}

/** Read and inspect a model file; a file that is missing, not ONNX or not a servable classifier is refused. */
export async function readCandidate(file: string, label: string): Promise<Candidate> {
  const bytes = await readFile(file).catch((err: Error) => {
    throw new RefusedError(`${label}: cannot read the file (${err.message})`);
  });
  return inspectCandidate(new Uint8Array(bytes), label);
}

export function inspectCandidate(bytes: Uint8Array, label: string): Candidate {
  let model: ModelProto;
  try {
    model = decodeModel(bytes);
  } catch (err) {
    throw new RefusedError(`${label}: ${(err as Error).message}`);
  }
  try {
    return { label, bytes, model, signature: inspectSignature(model) };
  } catch (err) {
    if (err instanceof SignatureError) throw new RefusedError(`${label}: ${err.message}`);
    throw err;
  }
}

/** An onnxruntime-node session (CPU, as the pools run it) that fetches the probabilities by name. */
export async function openSession(candidate: Candidate, classes: number): Promise<OnnxModel> {
  const { signature } = candidate;
  const serving: ModelSignature = {
    name: candidate.label,
    inputName: signature.input.name,
    width: signature.input.width,
    outputName: signature.probabilities.name,
    classes,
    labels: [],
    maxBatchSize: RUN_CHUNK,
  };
  try {
    return await createOnnxModel(candidate.bytes, serving, "cpu", signature.int8 ? "int8" : "fp32");
  } catch (err) {
    throw new RefusedError(`${candidate.label} does not load in onnxruntime: ${(err as Error).message}`);
  }
}

/** Rows per `session.run` when a whole data set goes through a model. */
const RUN_CHUNK = 256;

/** The output of `rows` rows (row-major features), run in chunks; refused when the output is not `rows x classes`. */
export async function runRows(
  session: OnnxModel,
  label: string,
  features: Float32Array,
  rows: number,
  classes: number,
): Promise<Float32Array> {
  const width = features.length / rows;
  const out = new Float32Array(rows * classes);
  for (let start = 0; start < rows; start += RUN_CHUNK) {
    const n = Math.min(RUN_CHUNK, rows - start);
    let probs: Float32Array;
    try {
      probs = await session.run(features.subarray(start * width, (start + n) * width), n);
    } catch (err) {
      throw new RefusedError(`${label} failed to run on the data: ${(err as Error).message}`);
    }
    if (probs.length !== n * classes) {
      throw new RefusedError(`${label} returned ${probs.length} values for ${n} rows; expected ${n} x ${classes}`);
    }
    out.set(probs, start * classes);
  }
  return out;
}

/** Refuse an output that is not a probability distribution per row (logits, say: the cascade compares probabilities). */
export function checkProbabilities(probs: Float32Array, classes: number, label: string): void {
  for (let r = 0; r < probs.length / classes; r++) {
    let sum = 0;
    for (let c = 0; c < classes; c++) {
      const p = probs[r * classes + c]!;
      // Tree ensembles sum float32 votes: ten votes of 0.1 make 1.0000001.
      if (!(p >= -1e-5 && p <= 1 + 1e-5)) {
        throw new RefusedError(
          `${label}: output row ${r} holds ${p}, not a probability; the model must end in a softmax (or output class probabilities)`,
        );
      }
      sum += p;
    }
    if (Math.abs(sum - 1) > 1e-3) {
      throw new RefusedError(
        `${label}: output row ${r} sums to ${sum.toFixed(4)}, not 1; the model must output class probabilities`,
      );
    }
  }
}
