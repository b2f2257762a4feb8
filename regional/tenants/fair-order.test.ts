import { describe, expect, it } from "vitest";
import { type FairCall, fairOrder, fairTags, virtualTimeAfter } from "./fair-order.ts";

/** Serve `calls` (tenant, rows) queued at once, `batch` rows at a time, as the batcher would; the tenants' rows per batch. */
function serve(calls: { tenant: string; rows: number }[], weights: Record<string, number>, batch: number): string[][] {
  let virtual = 0;
  const finish: Record<string, number> = {};
  const queue: (FairCall & { tenant: string; rows: number })[] = calls.map((c) => {
    const tags = fairTags(virtual, finish[c.tenant] ?? 0, c.rows, weights[c.tenant]!);
    finish[c.tenant] = tags.finish;
    return { ...c, startTag: tags.start };
  });
  const batches: string[][] = [];
  while (queue.length > 0) {
    const order = fairOrder(
      queue,
      queue.map((_, i) => i),
    );
    const run: number[] = [];
    let rows = 0;
    for (const i of order) {
      if (run.length > 0 && rows + queue[i]!.rows > batch) break;
      run.push(i);
      rows += queue[i]!.rows;
    }
    virtual = virtualTimeAfter(virtual, queue, run);
    batches.push(run.map((i) => queue[i]!.tenant));
    for (const i of [...run].sort((a, b) => b - a)) queue.splice(i, 1);
  }
  return batches;
}

describe("start-time fair queueing over rows", () => {
  it("tags a tenant's calls back to back, and an idle tenant from the virtual time", () => {
    expect(fairTags(0, 0, 4, 1)).toEqual({ start: 0, finish: 4 });
    expect(fairTags(0, 4, 4, 2)).toEqual({ start: 4, finish: 6 });
    expect(fairTags(10, 4, 1, 1)).toEqual({ start: 10, finish: 11 });
  });

  it("interleaves a flood with another tenant's calls queued after it", () => {
    const flood = Array.from({ length: 8 }, () => ({ tenant: "b", rows: 4 }));
    const batches = serve([...flood, { tenant: "c", rows: 4 }, { tenant: "c", rows: 4 }], { b: 1, c: 1 }, 8);
    // c's first call starts at tag 0 with b's first: it runs in the first batch, not after b's 32 rows.
    expect(batches[0]).toEqual(["b", "c"]);
    expect(batches[1]).toEqual(["b", "c"]);
    expect(
      batches
        .slice(2)
        .flat()
        .every((t) => t === "b"),
    ).toBe(true);
  });

  it("shares rows by weight while both tenants have calls waiting", () => {
    const calls = Array.from({ length: 60 }, (_, i) => ({ tenant: i % 2 ? "heavy" : "light", rows: 2 }));
    const batches = serve(calls, { heavy: 3, light: 1 }, 8);
    // While both wait, 3 of every 4 rows are heavy's.
    const first = batches.slice(0, 6).flat();
    const heavy = first.filter((t) => t === "heavy").length;
    expect(heavy / first.length).toBeCloseTo(0.75, 1);
  });

  it("serves calls within a reservation before every tagged call, in arrival order", () => {
    const queue: FairCall[] = [{ startTag: 0 }, { reserved: true }, { startTag: 0 }, { reserved: true }];
    expect(fairOrder(queue, [0, 1, 2, 3])).toEqual([1, 3, 0, 2]);
  });

  it("returns the same array when already in order, so a pool without contention pays no sort", () => {
    const live = [0, 1, 2];
    expect(fairOrder([{}, {}, {}], live)).toBe(live);
    expect(fairOrder([{ startTag: 0 }, { startTag: 1 }, { startTag: 1 }], live)).toBe(live);
  });

  it("moves the virtual time to the latest start tag served, never back", () => {
    const queue: FairCall[] = [{ startTag: 3 }, { startTag: 7 }, { reserved: true }];
    expect(virtualTimeAfter(5, queue, [0, 2])).toBe(5);
    expect(virtualTimeAfter(5, queue, [0, 1])).toBe(7);
  });
});
