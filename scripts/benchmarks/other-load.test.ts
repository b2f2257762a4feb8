import { describe, expect, it } from "vitest";
import { otherCores, parseBusyTicks, parseTreeTicks } from "./other-load.ts";

describe("parseBusyTicks", () => {
  it("counts every field of the cpu line but idle and iowait", () => {
    const stat = "cpu  100 5 40 900 20 1 2 7 0 0\ncpu0 50 2 20 450 10 0 1 3 0 0\n";
    expect(parseBusyTicks(stat)).toBe(100 + 5 + 40 + 1 + 2 + 7);
  });

  it("is undefined without a whole cpu line", () => {
    expect(parseBusyTicks("cpu0 1 2 3 4 5 6 7 8\n")).toBeUndefined();
    expect(parseBusyTicks("cpu  1 2 3\n")).toBeUndefined();
  });
});

describe("parseTreeTicks", () => {
  it("adds utime, stime, cutime and cstime, whatever the command's name holds", () => {
    const stat = "4242 (node (x) y) S 1 4242 4242 0 -1 4194304 900 0 0 0 310 45 12 3 20 0 11 0";
    expect(parseTreeTicks(stat)).toBe(310 + 45 + 12 + 3);
  });

  it("is undefined for what is not a stat line", () => {
    expect(parseTreeTicks("4242 (node) S 1")).toBeUndefined();
  });
});

describe("otherCores", () => {
  it("is the machine's busy time minus the measured processes', in cores", () => {
    // 2 s: the machine busy 300 ticks, the server and generator 180: other work took 1.2 s of CPU, 0.6 cores.
    expect(otherCores({ machine: 1000, measured: 500 }, { machine: 1300, measured: 680 }, 2)).toBeCloseTo(0.6);
  });

  it("is never negative (the two readings are not taken at the same instant)", () => {
    expect(otherCores({ machine: 1000, measured: 500 }, { machine: 1100, measured: 610 }, 1)).toBe(0);
  });
});
