import { describe, expect, it } from "vitest";
import { heldoutOf, modelConfig } from "../test/support/heldout.ts";
import { versionFigures } from "../tools/model/figures/version-figures.ts";
import { type HeldoutSet, heldoutFigures } from "./heldout.ts";

const row = (full: number[], edge: number[]) => ({ input: [0], label: 0, expected: { m: full, "m-edge": edge } });
const SET: HeldoutSet = {
  description: "",
  split: "",
  models: { m: "1", "m-edge": "1" },
  rows: [
    row([0.9, 0.1, 0], [0.95, 0.05, 0]), // edge answers, agrees
    row([0.2, 0.8, 0], [0.91, 0.09, 0]), // edge answers, disagrees
    row([0.1, 0.2, 0.7], [0.4, 0.3, 0.3]), // edge unsure
  ],
};

describe("heldoutFigures", () => {
  it("counts predicted classes, and an edge variant's answered and agreeing rows at its threshold", () => {
    expect(heldoutFigures(SET, "m", 3)).toEqual({ rows: 3, classCounts: [1, 1, 1] });
    expect(heldoutFigures(SET, "m-edge", 3, { threshold: 0.9, fullModel: "m" })).toEqual({
      rows: 3,
      classCounts: [3, 0, 0],
      edgeAnswered: 2,
      edgeAgreeing: 1,
    });
  });

  it("refuses a fixture without the model's outputs", () => {
    expect(() => heldoutFigures(SET, "other", 3)).toThrow(/no expected output for other/);
  });
});

describe("the committed configs' held-out figures", () => {
  it("are what their fixtures give (npm run model -- figures), and agree with the cascade figures of import", () => {
    for (const name of ["digits", "digits-edge", "breast-cancer", "breast-cancer-edge"]) {
      const config = modelConfig(name);
      const entry = config.versions[config.version]!;
      expect(entry.heldout, name).toEqual(versionFigures(config, config.version, heldoutOf(name)));
      const test = entry.cascade?.test;
      if (test) {
        const { rows, edgeAnswered, edgeAgreeing } = entry.heldout!;
        expect(edgeAnswered! / rows).toBeCloseTo(test.edgeShare, 4);
        expect(edgeAgreeing! / edgeAnswered!).toBeCloseTo(test.agreement, 4);
      }
    }
  });
});
