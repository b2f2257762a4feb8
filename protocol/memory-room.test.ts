import { describe, expect, it } from "vitest";
import { makeRoom } from "./memory-room.ts";

const MB = 2 ** 20;
const model = (name: string, mb: number, lastUsed: number) => ({ name, bytes: mb * MB, lastUsed });

describe("makeRoom", () => {
  const candidates = [model("b", 10, 200), model("a", 10, 100), model("c", 10, 300)];

  it("evicts nothing while the load fits", () => {
    expect(makeRoom(10 * MB, 80 * MB, 100 * MB, candidates)).toEqual({ fits: true, evict: [] });
    expect(makeRoom(20 * MB, 80 * MB, 100 * MB, candidates)).toEqual({ fits: true, evict: [] });
  });

  it("evicts the least recently used first, just enough", () => {
    expect(makeRoom(25 * MB, 90 * MB, 100 * MB, candidates)).toEqual({ fits: true, evict: ["a", "b"] });
    expect(makeRoom(11 * MB, 90 * MB, 100 * MB, candidates)).toEqual({ fits: true, evict: ["a"] });
    // Ties in recency go by name, so that the choice never depends on the order models were listed in.
    const tied = [model("y", 10, 5), model("x", 10, 5)];
    expect(makeRoom(5 * MB, 100 * MB, 100 * MB, tied)).toEqual({ fits: true, evict: ["x"] });
  });

  it("refuses when what may be evicted is not enough, saying how much is held", () => {
    const room = makeRoom(45 * MB, 90 * MB, 100 * MB, candidates);
    expect(room).toEqual({
      fits: false,
      reason:
        "it needs 45.0 MB and 60.0 MB of the 100.0 MB budget is held by what cannot be evicted now " +
        "(pinned, in a rollout, loading or finishing their requests)",
    });
  });

  it("refuses a model bigger than the whole budget without evicting anything", () => {
    expect(makeRoom(101 * MB, 0, 100 * MB, candidates)).toEqual({
      fits: false,
      reason: "it needs 101.0 MB, more than the whole budget of 100.0 MB",
    });
  });
});
