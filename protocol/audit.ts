import { BadRequest } from "./errors.ts";
import { AUDIT_HEADER } from "./headers.ts";

/**
 * The live agreement audit's wire format: the edge's label (class index) of each row it answered, comma
 * separated in row order, in `x-edgecascade-audit`. A region that receives it answers as usual, counts per row
 * whether its own label is the edge's, and keeps the call out of its request metrics (docs/observability.md).
 */
export function formatAuditLabels(labels: readonly number[]): string {
  return labels.join(",");
}

/** The edge's labels of an audit of `rows` rows of a `classes`-class model; 400 for anything else. */
export function parseAuditLabels(header: string, rows: number, classes: number): number[] {
  const parts = header.split(",");
  const labels = parts.map((p) => (/^\s*\d{1,6}\s*$/.test(p) ? Number(p) : Number.NaN));
  if (parts.length !== rows || labels.some((l) => !(l < classes))) {
    throw new BadRequest(
      `${AUDIT_HEADER} must hold one class index (0 to ${classes - 1}) per row, ${rows} in all, comma separated; got "${header.slice(0, 100)}"`,
    );
  }
  return labels;
}

/** How many of `probs`' rows (`[rows, classes]`) have `labels`' class on top. */
export function agreeingRows(probs: ArrayLike<number>, labels: readonly number[], classes: number): number {
  let agreeing = 0;
  for (let row = 0; row < labels.length; row++) {
    const base = row * classes;
    let best = 0;
    for (let c = 1; c < classes; c++) if (probs[base + c]! > probs[base + best]!) best = c;
    if (best === labels[row]) agreeing++;
  }
  return agreeing;
}
