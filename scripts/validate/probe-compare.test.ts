import { describe, expect, it } from "vitest";
import { compareRounds, heyArgs, p50, parseHeyCsv } from "./probe-compare.ts";

describe("heyArgs", () => {
  it("runs one worker at the whole rate, the same body, no compression, every request's time", () => {
    const args = heyArgs({ url: "http://127.0.0.1:8787", rate: 30, durationS: 8, body: '{"model":"digits"}' });
    expect(args.join(" ")).toBe(
      '-z 8s -q 30 -c 1 -m POST -T application/json -d {"model":"digits"} -disable-compression -o csv http://127.0.0.1:8787/v1/classify',
    );
  });
});

describe("parseHeyCsv", () => {
  it("reads each 200's time in ms and counts every status", () => {
    const csv = [
      "response-time,DNS+dialup,DNS,Request-write,Response-delay,Response-read,status-code,offset",
      "0.0031,0.0002,0.0000,0.0000,0.0029,0.0000,200,0.0010",
      "0.0024,0.0000,0.0000,0.0000,0.0023,0.0000,200,0.0343",
      "0.0050,0.0000,0.0000,0.0000,0.0049,0.0000,429,0.0676",
      "",
    ].join("\n");
    const run = parseHeyCsv(csv);
    expect(run.latencyMs.map((v) => Math.round(v * 10) / 10)).toEqual([3.1, 2.4]);
    expect(run.statuses).toEqual({ "200": 2, "429": 1 });
  });
});

describe("p50", () => {
  it("is the nearest-rank median, as the probe reports it", () => {
    expect(p50([3, 1, 2, 4])).toBe(2);
    expect(p50([1.23456])).toBe(1.235);
  });
});

describe("compareRounds", () => {
  const round = (heyMs: number, probeMs: number) => ({ heyMs, probeMs, probeFloorMs: 1, heyFloorMs: 0.8 });

  it("takes the median of the rounds' own differences and judges it against the tolerance", () => {
    const c = compareRounds([round(3, 3.2), round(4, 3.5), round(3.5, 4.5)], 0.3);
    expect(c.rounds.map((r) => [r.differenceMs, r.within])).toEqual([
      [0.2, true],
      [-0.5, false],
      [1, false],
    ]);
    expect(c.median).toEqual({
      heyMs: 3.5,
      probeMs: 3.5,
      probeFloorMs: 1,
      heyFloorMs: 0.8,
      differenceMs: 0.2,
      floorDifferenceMs: 0.2,
    });
    expect(c.roundsWithin).toBe(1);
    expect(c.holds).toBe(true);
  });

  it("holds either way within the tolerance, and not beyond it", () => {
    expect(compareRounds([round(3, 2.75), round(3, 2.8)], 0.3).holds).toBe(true);
    expect(compareRounds([round(3, 3.4), round(3, 3.3)], 0.3).holds).toBe(false);
    expect(() => compareRounds([], 0.3)).toThrow("no rounds");
  });
});
