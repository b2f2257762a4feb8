import { describe, expect, it } from "vitest";
import type { HeldoutRow } from "../../protocol/heldout.ts";
import { seededRandom } from "../../protocol/seeded-random.ts";
import { hotRowsOf, probeMix } from "./mix.ts";

const row = (confidence: number, fill: number): HeldoutRow => ({
  input: Array.from({ length: 64 }, () => fill),
  label: 0,
  expected: {
    "digits-edge": [confidence, ...Array.from({ length: 9 }, () => (1 - confidence) / 9)],
    digits: [0.9, 0.1],
  },
});
// Confident rows (0.95, 0.99), unconfident (0.3), and one too close to the 0.7 threshold to use (0.72).
const rows = [row(0.95, 1), row(0.3, 2), row(0.99, 3), row(0.72, 4), row(0.3, 5)];
const EDGE = { model: "digits-edge", threshold: 0.7 };

describe("probeMix", () => {
  it("is reproducible for a seed", () => {
    const a = probeMix(rows, EDGE, seededRandom(7));
    const b = probeMix(rows, EDGE, seededRandom(7));
    for (let i = 0; i < 50; i++) expect(a()).toEqual(b());
  });

  it("sends the shares asked for, from the right side of the threshold", () => {
    const next = probeMix(rows, EDGE, seededRandom(1), { repeatShare: 0.5, unconfidentShare: 0.2, hotRows: 1 });
    const counts = { repeat: 0, confident: 0, unconfident: 0 };
    for (let i = 0; i < 5000; i++) {
      const r = next();
      counts[r.kind]++;
      if (r.kind === "unconfident") expect([1, 4]).toContain(r.row);
      else expect([0, 2]).toContain(r.row);
      if (r.kind === "repeat") expect(r.row).toBe(0);
      expect(r.row).not.toBe(3);
    }
    expect(counts.repeat / 5000).toBeCloseTo(0.5, 1);
    expect(counts.unconfident / 5000).toBeCloseTo(0.2, 1);
    expect(counts.confident / 5000).toBeCloseTo(0.3, 1);
  });

  it("repeats send the row unchanged; fresh rows never repeat an input", () => {
    const next = probeMix(rows, EDGE, seededRandom(3));
    const fresh = new Set<string>();
    for (let i = 0; i < 3000; i++) {
      const r = next();
      if (r.kind === "repeat") {
        expect(r.inputs).toEqual(rows[r.row]!.input);
        continue;
      }
      const key = JSON.stringify(r.inputs);
      expect(fresh.has(key)).toBe(false);
      fresh.add(key);
      const changed = r.inputs.filter((v, i) => v !== rows[r.row]!.input[i]);
      expect(changed).toHaveLength(1);
      const i = r.inputs.findIndex((v, i) => v !== rows[r.row]!.input[i]);
      expect(Math.abs(changed[0]! - rows[r.row]!.input[i]!)).toBeLessThanOrEqual(
        1e-3 * Math.max(1, rows[r.row]!.input[i]!),
      );
      expect(Math.fround(changed[0]!)).not.toBe(Math.fround(rows[r.row]!.input[i]!));
    }
  });

  it("starts the fresh rows' changes at offsetBase: another base, none of the same inputs", () => {
    const fresh = (offsetBase: number) => {
      const next = probeMix(rows, EDGE, seededRandom(4), { offsetBase });
      return Array.from({ length: 500 }, next).flatMap((r) => (r.kind === "repeat" ? [] : [JSON.stringify(r.inputs)]));
    };
    expect(fresh(7)).toEqual(fresh(7));
    const other = new Set(fresh(10_000));
    expect(fresh(7).filter((inputs) => other.has(inputs))).toEqual([]);
  });

  it("with repeatShare 1, repeats the hot set only: the rows hotRowsOf names", () => {
    expect(hotRowsOf(rows, EDGE)).toEqual([0, 2]);
    expect(hotRowsOf(rows, EDGE, { hotRows: 1 })).toEqual([0]);
    expect(hotRowsOf(rows, undefined, { hotRows: 3 })).toEqual([0, 1, 2]);
    const next = probeMix(rows, EDGE, seededRandom(2), { repeatShare: 1, hotRows: 1 });
    for (let i = 0; i < 200; i++) expect(next()).toEqual({ kind: "repeat", row: 0, inputs: rows[0]!.input });
  });

  it("without an edge variant, every fresh row is forwarded", () => {
    const next = probeMix(rows, undefined, seededRandom(5), { repeatShare: 0.5, hotRows: 2 });
    const kinds = new Set<string>();
    for (let i = 0; i < 1000; i++) {
      const r = next();
      kinds.add(r.kind);
      if (r.kind === "repeat") expect([0, 1]).toContain(r.row);
    }
    expect([...kinds].sort()).toEqual(["repeat", "unconfident"]);
  });

  it("refuses rows that do not straddle the threshold", () => {
    expect(() => probeMix([row(0.95, 1)], EDGE, seededRandom(1))).toThrow("both confident and unconfident");
  });

  it("splits at the threshold itself when the margin leaves no row below it (a two-class threshold near 0.5)", () => {
    const row = (p: number, i: number): HeldoutRow => ({ input: [i], label: 0, expected: { e: [p, 1 - p] } });
    const rows = [0.5, 0.507, 0.9, 0.95, 0.99].map(row);
    const next = probeMix(rows, { model: "e", threshold: 0.517857 }, seededRandom(1), {
      repeatShare: 0,
      unconfidentShare: 1,
    });
    const picked = new Set(Array.from({ length: 50 }, () => next().row));
    expect([...picked].sort()).toEqual([0, 1]);
  });
});
