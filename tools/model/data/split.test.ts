import { describe, expect, it } from "vitest";
import { stratifiedSplit } from "./split.ts";

describe("stratifiedSplit", () => {
  const labels = [...Array(30).fill(0), ...Array(10).fill(1), ...Array(20).fill(2)];

  it("holds out the fraction of every class and puts each row in exactly one part", () => {
    const { calibration, heldout } = stratifiedSplit(labels, 0.5, 0);
    expect(heldout.filter((i) => labels[i] === 0)).toHaveLength(15);
    expect(heldout.filter((i) => labels[i] === 1)).toHaveLength(5);
    expect(heldout.filter((i) => labels[i] === 2)).toHaveLength(10);
    expect([...calibration, ...heldout].sort((a, b) => a - b)).toEqual(labels.map((_, i) => i));
    expect(heldout).toEqual([...heldout].sort((a, b) => a - b));
  });

  it("is reproducible for a seed and differs between seeds", () => {
    expect(stratifiedSplit(labels, 0.3, 7)).toEqual(stratifiedSplit(labels, 0.3, 7));
    expect(stratifiedSplit(labels, 0.3, 7).heldout).not.toEqual(stratifiedSplit(labels, 0.3, 8).heldout);
  });

  it.each([0, 1, -0.1, Number.NaN])("refuses a held-out fraction of %d", (fraction) => {
    expect(() => stratifiedSplit(labels, fraction, 0)).toThrow("between 0 and 1");
  });
});
