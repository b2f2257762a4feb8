import { describe, expect, it } from "vitest";
import { seededRandom } from "../../protocol/seeded-random.ts";
import { bernoulliLlr, fastestDecisions, verdictOf, waldBounds } from "./sprt.ts";

describe("Bernoulli SPRT", () => {
  it("has Wald's bounds and the log likelihood ratio of the counts", () => {
    const b = waldBounds(0.001, 0.01);
    expect(b.reject).toBeCloseTo(Math.log(0.99 / 0.001), 12);
    expect(b.accept).toBeCloseTo(Math.log(0.01 / 0.999), 12);
    expect(bernoulliLlr(0, 0, 0.01, 0.03)).toBe(0);
    expect(bernoulliLlr(2, 10, 0.1, 0.3)).toBeCloseTo(2 * Math.log(3) + 8 * Math.log(0.7 / 0.9), 12);
  });

  it("decides nothing before the minimum sample, then either way", () => {
    const b = waldBounds(0.05, 0.05);
    expect(verdictOf(100, 10, b, 20)).toBe("continue");
    expect(verdictOf(b.reject, 20, b, 20)).toBe("reject");
    expect(verdictOf(b.accept, 20, b, 20)).toBe("accept");
    expect(verdictOf(0, 20, b, 20)).toBe("continue");
  });

  it("names the fastest decisions of the default agreement test: 226 clean rows to pass, 7 disagreements in a row to fail", () => {
    expect(fastestDecisions(0.01, 0.03, waldBounds(0.001, 0.01))).toEqual({ accept: 226, reject: 7 });
  });

  // Ville's inequality: watched after every trial, a test of an H0 candidate rejects with probability at most
  // alpha / (1 - beta). 4000 seeded paths of the latency test with alpha = 0.05, checked after every trial.
  it.each([
    [0.05, 0.15],
    [0.01, 0.03],
  ])(
    "watched after every trial, rejects an H0 rate (p0 %f, p1 %f) at most alpha / (1 - beta) of the time",
    (p0, p1) => {
      const [alpha, beta] = [0.05, 0.05];
      const b = waldBounds(alpha, beta);
      const random = seededRandom(7);
      let rejected = 0;
      const paths = 4000;
      for (let path = 0; path < paths; path++) {
        let events = 0;
        for (let n = 1; ; n++) {
          if (random() < p0) events++;
          const v = verdictOf(bernoulliLlr(events, n, p0, p1), n, b, 1);
          if (v === "continue") continue;
          if (v === "reject") rejected++;
          break;
        }
      }
      const bound = alpha / (1 - beta);
      // Three standard errors of a rate at the bound.
      expect(rejected / paths).toBeLessThan(bound + 3 * Math.sqrt((bound * (1 - bound)) / paths));
    },
  );
});
