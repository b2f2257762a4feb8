import type { InferResponse, Prediction } from "./types.ts";

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

/** `/v1/classify` predictions from a probability matrix. */
export function toPredictions(probs: ArrayLike<number>, batch: number, labels: readonly string[]): Prediction[] {
  const classes = labels.length;
  const out: Prediction[] = new Array(batch);
  for (let r = 0; r < batch; r++) {
    const { index, confidence } = topClass(probs, r, classes);
    out[r] = {
      class: index,
      label: labels[index]!,
      confidence,
      scores: Array.from({ length: classes }, (_, c) => probs[r * classes + c]!),
    };
  }
  return out;
}

/** A v2 infer response carrying one FP32 output `[batch, classes]`. */
export function toInferResponse(options: {
  model: string;
  version: string;
  id?: string;
  outputName: string;
  probs: ArrayLike<number>;
  batch: number;
  classes: number;
  parameters?: Record<string, unknown>;
}): InferResponse {
  const { model, version, id, outputName, probs, batch, classes, parameters } = options;
  return {
    model_name: model,
    model_version: version,
    ...(id !== undefined ? { id } : {}),
    ...(parameters ? { parameters } : {}),
    outputs: [{ name: outputName, shape: [batch, classes], datatype: "FP32", data: Array.from(probs) }],
  };
}
