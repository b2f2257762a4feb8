import type { Calibration, CascadeFigures } from "../calibrate.ts";

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;

/**
 * Why no threshold keeps the promise (pure): what the calibration rows prove at best and where (an --agreement
 * that would pass), and how many rows the target would take, in calibration rows and in --data rows.
 */
export function unprovenMessage(
  calibration: Extract<Calibration, { ok: false }>,
  label: string,
  heldoutFraction: number,
): string {
  const { target, confidence, rows, best, rowsNeeded } = calibration;
  const proven =
    best.answered === 0
      ? "no threshold answers any row"
      : `the most they prove is agreement ${best.provenAgreement} (threshold ${best.threshold}: ${best.answered} rows ` +
        `answered, ${best.disagreements} disagreeing), so --agreement ${best.provenAgreement} would pass`;
  const need =
    rowsNeeded === undefined
      ? `no number of rows like these would prove ${target}: where ${label} is confident it disagrees with the full model too often; use a better edge variant or a lower --agreement`
      : `proving ${target} would take about ${rowsNeeded} calibration rows like these (about ${Math.ceil(rowsNeeded / (1 - heldoutFraction))} rows of --data at --heldout-fraction ${heldoutFraction}); use more data, a better edge variant, or a lower --agreement`;
  return `${label} cannot be shown to reach agreement ${target} with the full model at ${confidence * 100}% confidence on the ${rows} calibration rows: ${proven}; ${need}`;
}

/**
 * The refusal of an edge variant whose held-out agreement (rows nothing was fitted or calibrated on) falls below
 * the target that the calibration rows proved (pure): the promise would not hold where it matters. Undefined when
 * it holds.
 */
export function brokenPromise(
  calibration: Extract<Calibration, { ok: true }>,
  heldout: CascadeFigures,
  heldoutRows: number,
  label: string,
): string | undefined {
  const { target, confidence, chosen } = calibration;
  if (heldout.agreement >= target) return undefined;
  const answered = Math.round(heldout.edgeShare * heldoutRows);
  return (
    `${label} agrees with the full model on ${pct(heldout.agreement)} of the ${answered} held-out rows it answers at ` +
    `threshold ${chosen.threshold}, below --agreement ${target}, although its ${chosen.answered} calibration rows ` +
    `there (${chosen.disagreements} disagreeing) proved ${chosen.provenAgreement} at ${confidence * 100}% confidence: ` +
    `the promise would not hold. Use more data, a better edge variant, or a lower --agreement`
  );
}
