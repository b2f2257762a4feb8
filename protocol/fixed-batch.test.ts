import { describe, expect, it } from "vitest";
import { inFixedBatches } from "./fixed-batch.ts";

/** A "model" of 2 features and 2 classes taking exactly `fixed` rows: each row's output is [sum, first feature]. */
function fixedModel(fixed: number) {
  const runs: number[][] = [];
  const run = (data: Float32Array, batch: number) => {
    if (batch !== fixed) throw new Error(`shape [${batch}, 2] is not [${fixed}, 2]`);
    runs.push(Array.from(data));
    const out = new Float32Array(batch * 2);
    for (let r = 0; r < batch; r++) out.set([data[r * 2]! + data[r * 2 + 1]!, data[r * 2]!], r * 2);
    return out;
  };
  return { run, runs };
}

describe("inFixedBatches", () => {
  it("runs any number of rows one fixed batch at a time, padding the last with zeros and dropping their outputs", async () => {
    const model = fixedModel(2);
    const rows = Float32Array.from([1, 2, 3, 4, 5, 6]);
    expect(Array.from(await inFixedBatches(model.run, 2, 2, 2)(rows, 3))).toEqual([3, 1, 7, 3, 11, 5]);
    expect(model.runs).toEqual([
      [1, 2, 3, 4],
      [5, 6, 0, 0],
    ]);
  });

  it("one row per run for a batch of 1, and the rows as they are when they fill the batch", async () => {
    const one = fixedModel(1);
    expect(Array.from(await inFixedBatches(one.run, 1, 2, 2)(Float32Array.from([1, 1, 2, 2]), 2))).toEqual([
      2, 1, 4, 2,
    ]);
    expect(one.runs).toHaveLength(2);
    const two = fixedModel(2);
    await inFixedBatches(two.run, 2, 2, 2)(Float32Array.from([1, 1, 2, 2]), 2);
    expect(two.runs).toEqual([[1, 1, 2, 2]]);
  });

  it("refuses an output that is not the fixed batch's", async () => {
    const wrong = async () => new Float32Array(3);
    await expect(inFixedBatches(wrong, 2, 2, 2)(new Float32Array(2), 1)).rejects.toThrow(
      "the model returned 3 values for its fixed batch of 2 rows",
    );
  });
});
