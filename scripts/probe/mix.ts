import { edgeConfidence, type HeldoutRow } from "../../protocol/heldout.ts";

/**
 * What a probe request exercises: `repeat` sends a row of a small hot set unchanged (the first send fills
 * the cache, the rest hit it); `confident` and `unconfident` send a row the edge model is sure or unsure of,
 * with a unique tiny offset on one pixel so that it never hits the cache.
 */
export type ProbeKind = "repeat" | "confident" | "unconfident";

export interface ProbeRequest {
  kind: ProbeKind;
  /** Index into the held-out rows. */
  row: number;
  inputs: number[];
}

export interface ProbeMixOptions {
  /** Share of requests that repeat a hot row. Default 0.6. */
  repeatShare?: number;
  /** Share of requests the edge is unsure of (they go to a region). Default 0.05. */
  unconfidentShare?: number;
  /** Rows in the hot set. Default 16. */
  hotRows?: number;
  /**
   * Rows whose edge confidence lies within this margin of the threshold are left out, so that the pixel
   * offset cannot move a row across it. Default 0.05.
   */
  margin?: number;
}

/** Deterministic PRNG (mulberry32): the same seed gives the same request sequence. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A generator of probe requests over the held-out rows, split by the edge threshold. */
export function probeMix(
  rows: readonly HeldoutRow[],
  threshold: number,
  random: () => number,
  options: ProbeMixOptions = {},
): () => ProbeRequest {
  const { repeatShare = 0.6, unconfidentShare = 0.05, hotRows = 16, margin = 0.05 } = options;
  const confidence = rows.map((r) => edgeConfidence(r));
  const confident = rows.flatMap((_, i) => (confidence[i]! >= threshold + margin ? [i] : []));
  const unconfident = rows.flatMap((_, i) => (confidence[i]! < threshold - margin ? [i] : []));
  if (confident.length === 0 || unconfident.length === 0) {
    throw new Error("the held-out rows need both confident and unconfident rows around the threshold");
  }
  const hot = confident.slice(0, hotRows);
  const pick = (list: readonly number[]) => list[Math.floor(random() * list.length)]!;
  let sequence = 0;
  const offset = (row: number): number[] => {
    // A unique, tiny offset on one pixel: a different float32 input (so a different cache key) that the
    // model cannot tell apart at the margin above.
    sequence++;
    const inputs = rows[row]!.input.slice();
    const pixel = sequence % inputs.length;
    inputs[pixel] = inputs[pixel]! + (1 + (Math.floor(sequence / inputs.length) % 1000)) * 1e-4;
    return inputs;
  };
  return () => {
    const u = random();
    if (u < repeatShare) {
      const row = pick(hot);
      return { kind: "repeat", row, inputs: rows[row]!.input };
    }
    if (u < repeatShare + unconfidentShare) {
      const row = pick(unconfident);
      return { kind: "unconfident", row, inputs: offset(row) };
    }
    const row = pick(confident);
    return { kind: "confident", row, inputs: offset(row) };
  };
}
