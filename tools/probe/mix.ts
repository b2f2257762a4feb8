import { edgeConfidence, type HeldoutRow } from "../../protocol/heldout.ts";

/**
 * What a probe request exercises: `repeat` sends a row of a small hot set unchanged (the first send fills
 * the cache, the rest hit it); `confident` and `unconfident` send a row the edge variant is sure or unsure of
 * (every row of a model without one is `unconfident`: it is forwarded), with a unique tiny change of one
 * feature so that it never hits the cache.
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
  /**
   * Where the fresh rows' unique changes start. Default 0. A run passes its own, random: the same seed sends the
   * same rows in the same order, and without it a second run would send the first run's changes again, which
   * the edge's cache still holds.
   */
  offsetBase?: number;
}

/** The edge variant a mix is split by: its name in the fixture's expected outputs and its threshold. */
export interface MixEdge {
  model: string;
  threshold: number;
}

/**
 * Rows the edge variant is sure and unsure of, leaving out those within `margin` of its threshold, and the hot
 * set: the first `hotRows` rows the edge answers itself (without an edge variant, the first rows).
 */
function splitRows(
  rows: readonly HeldoutRow[],
  edge: MixEdge | undefined,
  hotRows: number,
  margin: number,
): { confident: number[]; unconfident: number[]; hot: number[] } {
  if (!edge) {
    const all = rows.map((_, i) => i);
    return { confident: [], unconfident: all, hot: all.slice(0, hotRows) };
  }
  const confidence = rows.map((r) => edgeConfidence(r, edge.model));
  const split = (m: number) => ({
    confident: rows.flatMap((_, i) => (confidence[i]! >= edge.threshold + m ? [i] : [])),
    unconfident: rows.flatMap((_, i) => (confidence[i]! < edge.threshold - m ? [i] : [])),
  });
  // A threshold near the least confidence there is (a two-class model's is 0.5) leaves no row below it by the
  // margin: then the threshold itself splits them; the mix's kinds only set shares, the answers are checked alike.
  let { confident, unconfident } = split(margin);
  if (confident.length === 0 || unconfident.length === 0) ({ confident, unconfident } = split(0));
  if (confident.length === 0 || unconfident.length === 0) {
    throw new Error("the held-out rows need both confident and unconfident rows around the threshold");
  }
  return { confident, unconfident, hot: confident.slice(0, hotRows) };
}

/** The hot set a mix with these options repeats (indices into the rows), for sending the same rows another way. */
export function hotRowsOf(rows: readonly HeldoutRow[], edge: MixEdge | undefined, options: ProbeMixOptions = {}) {
  return splitRows(rows, edge, options.hotRows ?? 16, options.margin ?? 0.05).hot;
}

/**
 * A generator of probe requests over the held-out rows, split by the edge variant's threshold; without an
 * edge variant every fresh row is forwarded, and `unconfidentShare` is moot.
 */
export function probeMix(
  rows: readonly HeldoutRow[],
  edge: MixEdge | undefined,
  random: () => number,
  options: ProbeMixOptions = {},
): () => ProbeRequest {
  const { repeatShare = 0.6, hotRows = 16, margin = 0.05 } = options;
  const unconfidentShare = edge ? (options.unconfidentShare ?? 0.05) : 1 - repeatShare;
  const { confident, unconfident, hot } = splitRows(rows, edge, hotRows, margin);
  const pick = (list: readonly number[]) => list[Math.floor(random() * list.length)]!;
  let sequence = options.offsetBase ?? 0;
  const offset = (row: number): number[] => {
    // A unique, tiny change of one feature: a different float32 input (so a different cache key) that the
    // model cannot tell apart at the margin above. Relative (at most 1e-3 of the value; 2^-20 steps, above
    // float32's resolution), so that features of any scale, pixel counts or 0.004, stay what they were.
    sequence++;
    const inputs = rows[row]!.input.slice();
    const feature = sequence % inputs.length;
    const step = (1 + (Math.floor(sequence / inputs.length) % 1000)) * 2 ** -20;
    const value = inputs[feature]!;
    inputs[feature] = value === 0 ? step : value * (1 + step);
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
