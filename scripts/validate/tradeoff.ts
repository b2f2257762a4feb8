import { argmax, type HeldoutRow } from "../../protocol/heldout.ts";

/** What a cascade threshold does on the held-out rows, computed from both models' expected outputs. */
export interface CascadeOutcome {
  threshold: number;
  /** Share of rows the edge model answers on its own (its top probability clears the threshold). */
  edgeShare: number;
  /** Share of rows the cascade labels correctly: the edge model's label where it answers, the full model's else. */
  accuracy: number;
}

/** The cascade's edge share and accuracy at `threshold` on `rows` (pure; exact, no sampling). */
export function cascadeOutcome(
  rows: readonly HeldoutRow[],
  threshold: number,
  model: string,
  edgeModel: string,
): CascadeOutcome {
  let edge = 0;
  let correct = 0;
  for (const row of rows) {
    const edgeProbs = row.expected[edgeModel]!;
    const atEdge = Math.max(...edgeProbs) >= threshold;
    if (atEdge) edge++;
    if (argmax(atEdge ? edgeProbs : row.expected[model]!) === row.label) correct++;
  }
  return { threshold, edgeShare: edge / rows.length, accuracy: correct / rows.length };
}
