import { shortestFloat32 } from "./float32-decimal.ts";
import type { ClassifyResponse, InferResponse, Prediction } from "./types.ts";

/** Top class per row of `probs` (`batch x classes`, row-major). */
export function topClass(
  probs: ArrayLike<number>,
  row: number,
  classes: number,
): { index: number; confidence: number } {
  let index = 0;
  let confidence = probs[row * classes]!;
  for (let c = 1; c < classes; c++) {
    const p = probs[row * classes + c]!;
    if (p > confidence) {
      confidence = p;
      index = c;
    }
  }
  return { index, confidence };
}

/**
 * `/v1/classify` predictions from a probability matrix (FP32 values). Each score is the shortest decimal that
 * reads back to the same float32 (`shortestFloat32`): `0.1`, not `0.10000000149011612`.
 */
export function toPredictions(probs: ArrayLike<number>, batch: number, labels: readonly string[]): Prediction[] {
  const classes = labels.length;
  const out: Prediction[] = new Array(batch);
  for (let r = 0; r < batch; r++) {
    const { index } = topClass(probs, r, classes);
    // A plain loop: Array.from with a map function was a third of this function's time in the pool's profile.
    const scores = new Array<number>(classes);
    for (let c = 0; c < classes; c++) scores[c] = shortestFloat32(probs[r * classes + c]!);
    out[r] = { class: index, label: labels[index]!, confidence: scores[index]!, scores };
  }
  return out;
}

/** `toPredictions`' JSON text: what a `/v1/classify` answer's `predictions` field holds. */
export function predictionsJson(probs: ArrayLike<number>, batch: number, labels: readonly string[]): string {
  return JSON.stringify(toPredictions(probs, batch, labels));
}

/**
 * A `/v1/classify` answer's JSON text from its fields and its predictions' JSON text (`predictionsJson`), joined as
 * strings: the same bytes as `JSON.stringify` of the `ClassifyResponse` with these fields, in the same order. Why: a
 * cache hit keeps its predictions' text with the entry (edge/cache/response-cache.ts) and need not rebuild the
 * predictions nor serialise them again.
 */
export function classifyAnswerJson(fields: Omit<ClassifyResponse, "predictions">, predictions: string): string {
  const id = fields.id === undefined ? "" : `,"id":${JSON.stringify(fields.id)}`;
  return (
    `{"model":${JSON.stringify(fields.model)},"version":${JSON.stringify(fields.version)}${id}` +
    `,"predictions":${predictions},"servedBy":${JSON.stringify(fields.servedBy)}}`
  );
}

/** FP32 values as the numbers to write: each the shortest decimal that reads back to the same float32. */
export function float32Data(values: ArrayLike<number>): number[] {
  const out = new Array<number>(values.length);
  for (let i = 0; i < values.length; i++) out[i] = shortestFloat32(values[i]!);
  return out;
}

/**
 * A v2 infer response carrying one FP32 output `[batch, classes]`: its values in `data` (`float32Data`), or, for a binary
 * answer (protocol/binary-tensor.ts), their size in `parameters.binary_data_size` (the bytes follow the JSON).
 */
export function toInferResponse(options: {
  model: string;
  version: string;
  id?: string;
  outputName: string;
  probs: ArrayLike<number>;
  batch: number;
  classes: number;
  parameters?: Record<string, unknown>;
  binary?: boolean;
}): InferResponse {
  const { model, version, id, outputName, probs, batch, classes, parameters, binary = false } = options;
  const shape = [batch, classes];
  return {
    model_name: model,
    model_version: version,
    ...(id !== undefined ? { id } : {}),
    ...(parameters ? { parameters } : {}),
    outputs: [
      binary
        ? { name: outputName, shape, datatype: "FP32", parameters: { binary_data_size: batch * classes * 4 } }
        : { name: outputName, shape, datatype: "FP32", data: float32Data(probs) },
    ],
  };
}
