import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import * as ort from "onnxruntime-node";
import type { ModelIo } from "../../../protocol/model-config.ts";
import { createOnnxModel, type OnnxModel } from "../../../regional/session.ts";
import { RefusedError } from "../../cli/errors.ts";
import { type Conversion, ConversionError, convertForServing, type ModelLabels } from "./convert.ts";
import { decodeModel, encodeModel, type ModelProto } from "./proto.ts";
import { inspectSignature, type OnnxSignature, SignatureError } from "./signature.ts";

/** A model file read, decoded and inspected. */
export interface Candidate {
  /** What the messages call it: the flag and the file, e.g. `--full model.onnx`. */
  label: string;
  bytes: Uint8Array;
  model: ModelProto;
  signature: OnnxSignature;
  /** What was changed to serve the file as its converter wrote it (`convert.ts`); empty: served as it is. */
  conversions: Conversion[];
  /** The class labels the model carries (a ZipMap's or its classifier's), if any. */
  labels?: ModelLabels;
  /** After an `input-cast`: the same graph with its FP64 input kept, which import measures the cast against. */
  fp64Reference?: Uint8Array;
}

export interface CandidateOptions {
  /** Append a Softmax to logits or margins (`--softmax`). Default false. */
  softmax?: boolean;
}

/**
 * Read, convert (`convert.ts`) and inspect a model file; a file that is missing, not ONNX or not a servable
 * classifier is refused. External data is read relative to the file's directory, as ONNX specifies.
 */
export async function readCandidate(file: string, label: string, options: CandidateOptions = {}): Promise<Candidate> {
  const bytes = await readFile(file).catch((err: Error) => {
    throw new RefusedError(`${label}: cannot read the file (${err.message})`);
  });
  const readExternal = (location: string) => {
    const path = join(dirname(file), location);
    try {
      return new Uint8Array(readFileSync(path));
    } catch (err) {
      throw new ConversionError(
        `its weights are in an external file, ${path} (location "${location}"), which cannot be read (${(err as Error).message}); put it next to the model, or save the model as one file`,
      );
    }
  };
  return inspectCandidate(new Uint8Array(bytes), label, { ...options, readExternal });
}

/** Convert and inspect model bytes already in memory (a model without external data). */
export function inspectCandidate(
  bytes: Uint8Array,
  label: string,
  options: CandidateOptions & { readExternal?: (location: string) => Uint8Array } = {},
): Candidate {
  let exported: ModelProto;
  try {
    exported = decodeModel(bytes);
  } catch (err) {
    throw new RefusedError(`${label}: ${(err as Error).message}`);
  }
  try {
    const converted = convertForServing(exported, options);
    const served = converted.conversions.length > 0 ? encodeModel(converted.model) : bytes;
    const model = converted.conversions.length > 0 ? decodeModel(served) : exported;
    const fp64Reference = converted.conversions.some((c) => c.step === "input-cast")
      ? encodeModel(convertForServing(exported, { ...options, castInput: false }).model)
      : undefined;
    return {
      label,
      bytes: served,
      model,
      signature: inspectSignature(model),
      conversions: converted.conversions,
      ...(converted.labels ? { labels: converted.labels } : {}),
      ...(fp64Reference ? { fp64Reference } : {}),
    };
  } catch (err) {
    if (err instanceof SignatureError || err instanceof ConversionError) {
      throw new RefusedError(`${label}: ${err.message}`);
    }
    throw err;
  }
}

/** An onnxruntime-node session (CPU, as the pools run it) that fetches the probabilities by name. */
export async function openSession(candidate: Candidate, classes: number): Promise<OnnxModel> {
  const { signature } = candidate;
  const serving: ModelIo = {
    name: candidate.label,
    inputName: signature.input.name,
    width: signature.input.width,
    outputName: signature.probabilities.name,
    classes,
    labels: [],
    maxBatchSize: RUN_CHUNK,
    // A graph with a fixed batch runs the data in runs of that many rows (protocol/fixed-batch.ts).
    ...(signature.input.fixedBatch === undefined ? {} : { fixedBatch: signature.input.fixedBatch }),
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
          `${label}: output row ${r} holds ${p}, not a probability: the model ends in logits or margins (a PyTorch classifier's last Linear, an SVM's decision function). ` +
            "Import it with --softmax to append a Softmax (stated in the summary and config.json), or export it with one",
        );
      }
      sum += p;
    }
    if (Math.abs(sum - 1) > 1e-3) {
      throw new RefusedError(
        `${label}: output row ${r} sums to ${sum.toFixed(4)}, not 1: not class probabilities (scores or margins?); ` +
          "import it with --softmax to append a Softmax, or export it with one",
      );
    }
  }
}

/**
 * The probabilities of the exported FP64-input model on the data's own values (`values`: float64, row-major),
 * as float32: what an FP64 client would get, for measuring the FP32 input cast against.
 */
export async function runFp64Reference(
  candidate: Candidate,
  values: Float64Array,
  rows: number,
  classes: number,
): Promise<Float32Array> {
  const { input, probabilities } = candidate.signature;
  const session = await ort.InferenceSession.create(candidate.fp64Reference!);
  // All rows in one run, or in runs of a fixed batch, the last padded with zeros.
  const step = input.fixedBatch ?? rows;
  try {
    const out = new Float32Array(rows * classes);
    for (let start = 0; start < rows; start += step) {
      const n = Math.min(step, rows - start);
      const chunk = new Float64Array(step * input.width);
      chunk.set(values.subarray(start * input.width, (start + n) * input.width));
      const run = await session.run({ [input.name]: new ort.Tensor("float64", chunk, [step, input.width]) }, [
        probabilities.name,
      ]);
      const data = run[probabilities.name]!.data as Float32Array;
      if (data.length !== step * classes) {
        throw new RefusedError(`${candidate.label} (FP64) returned ${data.length} values`);
      }
      out.set(data.subarray(0, n * classes), start * classes);
    }
    return out;
  } finally {
    await session.release();
  }
}
