import { clearsThreshold } from "../../protocol/cascade-rule.ts";
import { topClass } from "../../protocol/responses.ts";

/** Probabilities of `rows` rows, row-major `[rows, classes]`. */
export interface ProbabilityMatrix {
  probs: ArrayLike<number>;
  rows: number;
  classes: number;
}

/** Figures of the cascade (edge when confident, else the full model) on a set of rows. */
export interface CascadeFigures {
  /** Share of rows the edge answers on its own. */
  edgeShare: number;
  /** Share of those rows where the edge's label is the full model's. */
  agreement: number;
  /** Share of rows the cascade labels correctly. */
  cascadeAccuracy: number;
}

export type Calibration = { ok: true; threshold: number } | { ok: false; bestAgreement: number; atThreshold: number };

const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

function tops(m: ProbabilityMatrix): { label: number[]; confidence: number[] } {
  const label: number[] = [];
  const confidence: number[] = [];
  for (let r = 0; r < m.rows; r++) {
    const { index, confidence: c } = topClass(m.probs, r, m.classes);
    label.push(index);
    confidence.push(c);
  }
  return { label, confidence };
}

/** Share of rows whose top class is the label, to 4 decimals. */
export function accuracy(m: ProbabilityMatrix, labels: readonly number[]): number {
  const { label } = tops(m);
  return round4(label.filter((l, r) => l === labels[r]).length / m.rows);
}

/** Share of rows where both models give the same top class, to 4 decimals. */
export function labelAgreement(a: ProbabilityMatrix, b: ProbabilityMatrix): number {
  const la = tops(a).label;
  const lb = tops(b).label;
  return round4(la.filter((l, r) => l === lb[r]).length / a.rows);
}

/**
 * The smallest threshold on the edge's top probability at which the rows it answers agree with the full
 * model on at least `target`, counting one more disagreement than observed so that the threshold does not
 * sit right at the last disagreement and still holds on rows it was not fitted to. Floored to 6 decimals,
 * so that the stored number still admits every row it was calibrated on. Not ok when no threshold reaches
 * the target: the best agreement seen says how far off it is.
 */
export function calibrateThreshold(edge: ProbabilityMatrix, full: ProbabilityMatrix, target: number): Calibration {
  const e = tops(edge);
  const f = tops(full);
  const order = e.confidence.map((c, r) => [c, r] as const).sort((a, b) => b[0] - a[0]);
  // Walking from the most confident row down, each distinct confidence t answers every row at or above it
  // (clearsThreshold, protocol/cascade-rule.ts).
  let best = { agreement: 0, threshold: 1 };
  let candidate: number | undefined;
  let answered = 0;
  let disagreements = 0;
  for (let i = 0; i < order.length; i++) {
    const [confidence, r] = order[i]!;
    answered++;
    if (e.label[r] !== f.label[r]) disagreements++;
    if (i + 1 < order.length && order[i + 1]![0] === confidence) continue;
    const agreement = 1 - (disagreements + 1) / answered;
    if (agreement >= target) candidate = confidence;
    if (agreement > best.agreement) best = { agreement, threshold: confidence };
  }
  if (candidate === undefined) {
    return { ok: false, bestAgreement: round4(best.agreement), atThreshold: best.threshold };
  }
  return { ok: true, threshold: Math.floor(candidate * 1e6) / 1e6 };
}

/** Edge share, agreement and cascade accuracy at `threshold`, to 4 decimals. */
export function cascadeFigures(
  threshold: number,
  edge: ProbabilityMatrix,
  full: ProbabilityMatrix,
  labels: readonly number[],
): CascadeFigures {
  const e = tops(edge);
  const f = tops(full);
  let answered = 0;
  let agree = 0;
  let correct = 0;
  for (let r = 0; r < edge.rows; r++) {
    const atEdge = clearsThreshold(e.confidence[r]!, threshold);
    if (atEdge) {
      answered++;
      if (e.label[r] === f.label[r]) agree++;
    }
    if ((atEdge ? e.label[r] : f.label[r]) === labels[r]) correct++;
  }
  return {
    edgeShare: round4(answered / edge.rows),
    agreement: answered === 0 ? 1 : round4(agree / answered),
    cascadeAccuracy: round4(correct / edge.rows),
  };
}
