import { seededRandom } from "../../../protocol/seeded-random.ts";

export interface Split {
  /** Row indices the threshold is calibrated on, ascending. */
  calibration: number[];
  /** Row indices every figure is measured on and the fixture holds, ascending. */
  heldout: number[];
}

/**
 * Stratified split: within each class, rows are shuffled with a seeded PRNG and `heldoutFraction` of them
 * (rounded) are held out; each class keeps its share in both parts. The same labels, fraction and seed give
 * the same split.
 */
export function stratifiedSplit(labels: readonly number[], heldoutFraction: number, seed: number): Split {
  if (!(heldoutFraction > 0 && heldoutFraction < 1)) {
    throw new Error(`the held-out fraction must be between 0 and 1, got ${heldoutFraction}`);
  }
  const random = seededRandom(seed);
  const byClass = new Map<number, number[]>();
  labels.forEach((label, i) => {
    byClass.set(label, [...(byClass.get(label) ?? []), i]);
  });
  const calibration: number[] = [];
  const heldout: number[] = [];
  for (const label of [...byClass.keys()].sort((a, b) => a - b)) {
    const rows = byClass.get(label)!;
    for (let i = rows.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [rows[i], rows[j]] = [rows[j]!, rows[i]!];
    }
    const held = Math.round(rows.length * heldoutFraction);
    heldout.push(...rows.slice(0, held));
    calibration.push(...rows.slice(held));
  }
  return { calibration: calibration.sort((a, b) => a - b), heldout: heldout.sort((a, b) => a - b) };
}
