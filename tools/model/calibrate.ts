import { clearsThreshold } from "../../protocol/cascade-rule.ts";
import { topClass } from "../../protocol/responses.ts";
import { agreementLowerBound, rowsToProve } from "./agreement-bound.ts";

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

/** A threshold with what it answers on the calibration rows: rows, disagreements, and the agreement they prove. */
export interface CalibrationPoint {
  threshold: number;
  /** Calibration rows whose top probability is at least the threshold (the edge answers them). */
  answered: number;
  /** Of those, rows whose label is not the full model's. */
  disagreements: number;
  /** The agreement those rows prove at the calibration's confidence (Clopper–Pearson lower bound), to 4 decimals, down. */
  provenAgreement: number;
}

export type Calibration =
  | { ok: true; target: number; confidence: number; rows: number; chosen: CalibrationPoint }
  | {
      ok: false;
      target: number;
      confidence: number;
      rows: number;
      /** The threshold that proves the most agreement, and how much. */
      best: CalibrationPoint;
      /**
       * Calibration rows the target would take, were more rows like these (the same edge share and disagreement
       * rate at the threshold that needs fewest); undefined when no number would do (the edge disagrees too often).
       */
      rowsNeeded?: number;
    };

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
 * The smallest threshold on the edge's top probability at which the rows it answers prove at least `target`
 * agreement with the full model at `confidence`: the one-sided Clopper–Pearson lower bound of their agreement
 * (agreement-bound.ts) is at least the target, so the promise holds with that confidence on rows like these, not
 * just as a point estimate (which a small calibration set overfits: issue 33). Floored to 6 decimals, so that the
 * stored number still admits every row it was calibrated on. Not ok when no threshold proves the target: then the
 * best it proves, and how many rows would prove the target.
 *
 * Only the lowest threshold of each run of equal disagreement counts needs checking: within a run, a lower
 * threshold answers more rows with as many disagreements, which proves more.
 */
export function calibrateThreshold(
  edge: ProbabilityMatrix,
  full: ProbabilityMatrix,
  target: number,
  confidence = 0.95,
): Calibration {
  const e = tops(edge);
  const f = tops(full);
  const order = e.confidence.map((c, r) => [c, r] as const).sort((a, b) => b[0] - a[0]);
  // Walking from the most confident row down, each distinct confidence t answers every row at or above it
  // (clearsThreshold, protocol/cascade-rule.ts).
  const runs: { confidence: number; answered: number; disagreements: number }[] = [];
  let disagreements = 0;
  for (let i = 0; i < order.length; i++) {
    const [c, r] = order[i]!;
    if (e.label[r] !== f.label[r]) disagreements++;
    if (i + 1 < order.length && order[i + 1]![0] === c) continue;
    const point = { confidence: c, answered: i + 1, disagreements };
    if (runs.at(-1)?.disagreements === disagreements) runs[runs.length - 1] = point;
    else runs.push(point);
  }
  const floor4 = (x: number) => Math.floor(x * 1e4) / 1e4;
  const points: CalibrationPoint[] = runs.map((p) => ({
    threshold: Math.floor(p.confidence * 1e6) / 1e6,
    answered: p.answered,
    disagreements: p.disagreements,
    provenAgreement: floor4(agreementLowerBound(p.answered - p.disagreements, p.answered, confidence)),
  }));
  const base = { target, confidence, rows: edge.rows };
  if (points.length === 0) {
    return { ok: false, ...base, best: { threshold: 1, answered: 0, disagreements: 0, provenAgreement: 0 } };
  }
  const passing = points.filter((p) => p.provenAgreement >= target);
  if (passing.length > 0) return { ok: true, ...base, chosen: passing.at(-1)! };
  const best = points.reduce((a, b) => (b.provenAgreement > a.provenAgreement ? b : a));
  let rowsNeeded: number | undefined;
  for (const p of points) {
    const needed = rowsToProve(target, p.disagreements / p.answered, confidence);
    if (needed === undefined) continue;
    const rows = Math.ceil((needed * edge.rows) / p.answered);
    if (rowsNeeded === undefined || rows < rowsNeeded) rowsNeeded = rows;
  }
  return { ok: false, ...base, best, ...(rowsNeeded !== undefined ? { rowsNeeded } : {}) };
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
