import { argmax, type HeldoutRow } from "../../protocol/heldout.ts";
import { decodeModel, encodeModel } from "../../tools/model/onnx/proto.ts";
import { heldout, modelBytes } from "./heldout.ts";

/**
 * Candidate versions of `digits` for gates and rollouts, made from the committed version 1 without Python.
 * `biasedDigits` raises one class's logit (the output bias `b2`): the softmax is otherwise unchanged, so which
 * held-out rows change label follows from the fixture's expected probabilities (their logs are the logits up
 * to a constant per row), and the bias is searched for a target share of disagreeing rows.
 */

/** Share of held-out rows whose label changes when class `k`'s logit is raised by `delta`, and the accuracy then. */
export function effectOfBias(k: number, delta: number): { disagreement: number; accuracy: number } {
  let changed = 0;
  let correct = 0;
  for (const row of heldout.rows) {
    const before = argmax(row.expected.digits!);
    const after = biasedLabel(row, k, delta);
    if (after !== before) changed++;
    if (after === row.label) correct++;
  }
  return { disagreement: changed / heldout.rows.length, accuracy: correct / heldout.rows.length };
}

/** Version 1 of digits with class `k`'s output bias raised by `delta`. */
export function digitsWithBias(k: number, delta: number): Uint8Array {
  const model = decodeModel(modelBytes("digits", "1"));
  const b2 = model.graph!.initializer!.find((t) => t.name === "b2")!;
  const raw = b2.rawData!;
  const bias = new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength));
  bias[k] = bias[k]! + delta;
  b2.rawData = new Uint8Array(bias.buffer);
  return encodeModel(model);
}

/** The label version 1 with class `k`'s logit raised by `delta` gives a held-out row. */
export function biasedLabel(row: HeldoutRow, k: number, delta: number): number {
  const logits = row.expected.digits!.map((p) => Math.log(Math.max(p, 1e-30)));
  logits[k] = logits[k]! + delta;
  return argmax(logits);
}

/**
 * A digits candidate that disagrees with version 1 on about `target` of the held-out rows (class 8
 * favoured), with its held-out accuracy (what import would state for it) and the bias that made it.
 */
export function biasedDigits(target: number): {
  bytes: Uint8Array;
  disagreement: number;
  accuracy: number;
  bias: { k: number; delta: number };
} {
  const k = 8;
  let [low, high] = [0, 50];
  for (let i = 0; i < 40; i++) {
    const mid = (low + high) / 2;
    if (effectOfBias(k, mid).disagreement < target) low = mid;
    else high = mid;
  }
  return { bytes: digitsWithBias(k, high), ...effectOfBias(k, high), bias: { k, delta: high } };
}
