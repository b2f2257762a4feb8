import { describe, expect, it } from "vitest";
import { answerKey, cacheKey, localCacheKey } from "./cache-key.ts";
import { readClassifyInputs } from "./classify-request.ts";
import { parseJsonBody } from "./json-body.ts";

const io = {
  name: "digits",
  inputName: "pixels",
  width: 4,
  outputName: "probabilities",
  classes: 10,
  labels: [],
  maxBatchSize: 8,
};
const limits = { maxBodyBytes: 1 << 20, maxBatch: 8 };
const rowsOf = (json: string) =>
  readClassifyInputs(parseJsonBody(json, "application/json") as unknown[], io, limits).data;

describe("cacheKey", () => {
  it("is a stable hex SHA-256", async () => {
    const key = await cacheKey("digits", "1", new Float32Array([0, 1, 2, 3]));
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(await cacheKey("digits", "1", new Float32Array([0, 1, 2, 3]))).toBe(key);
  });

  it("is the same however the numbers were written in JSON", async () => {
    const a = await cacheKey("digits", "1", rowsOf("[1, 2, 3, 4]"));
    const b = await cacheKey("digits", "1", rowsOf("[1.0, 2e0, 3.000, 0.4e1]"));
    // 0.1 and 0.10000000149011612 are the same float32.
    const c = await cacheKey("digits", "1", rowsOf("[0.1, 0, 0, 0]"));
    const d = await cacheKey("digits", "1", rowsOf("[0.10000000149011612, 0, 0, 0]"));
    expect(b).toBe(a);
    expect(d).toBe(c);
  });

  it("changes with the version, the model, the values and the batch layout", async () => {
    const rows = new Float32Array([1, 2, 3, 4]);
    const base = await cacheKey("digits", "1", rows);
    expect(await cacheKey("digits", "2", rows)).not.toBe(base);
    expect(await cacheKey("digits-edge", "1", rows)).not.toBe(base);
    expect(await cacheKey("digits", "1", new Float32Array([1, 2, 3, 5]))).not.toBe(base);
    expect(await cacheKey("digits", "1", new Float32Array([1, 2, 3, 4, 1, 2, 3, 4]))).not.toBe(base);
    // Length-prefixed fields: ("ab", "1") and ("a", "b1") cannot collide.
    expect(await cacheKey("ab", "1", rows)).not.toBe(await cacheKey("a", "b1", rows));
  });

  it("keys only the rows of a subarray view", async () => {
    const whole = new Float32Array([9, 9, 1, 2, 3, 4]);
    expect(await cacheKey("digits", "1", whole.subarray(2))).toBe(
      await cacheKey("digits", "1", new Float32Array([1, 2, 3, 4])),
    );
  });
});

describe("localCacheKey", () => {
  it("is the same however the numbers were written in JSON, and for a subarray view", () => {
    const a = localCacheKey("digits", "1", rowsOf("[1, 2, 3, 4]"));
    expect(localCacheKey("digits", "1", rowsOf("[1.0, 2e0, 3.000, 0.4e1]"))).toBe(a);
    expect(localCacheKey("digits", "1", new Float32Array([9, 9, 1, 2, 3, 4]).subarray(2))).toBe(a);
    expect(localCacheKey("digits", "1", rowsOf("[0.1, 0, 0, 0]"))).toBe(
      localCacheKey("digits", "1", rowsOf("[0.10000000149011612, 0, 0, 0]")),
    );
  });

  it("changes with the version, the model, every value and the batch layout", () => {
    const rows = new Float32Array([1, 2, 3, 4]);
    const base = localCacheKey("digits", "1", rows);
    expect(localCacheKey("digits", "2", rows)).not.toBe(base);
    expect(localCacheKey("digits-edge", "1", rows)).not.toBe(base);
    expect(localCacheKey("ab", "1", rows)).not.toBe(localCacheKey("a", "b1", rows));
    expect(localCacheKey("digits", "1", new Float32Array([1, 2, 3, 4, 1, 2, 3, 4]))).not.toBe(base);
    // Values that differ in the last bit of either half of their bytes, and -0 against 0.
    for (const i of [0, 3]) {
      const next = rows.slice();
      next[i] = Math.fround(next[i]! * (1 + 2 ** -23));
      expect(localCacheKey("digits", "1", next)).not.toBe(base);
    }
    expect(localCacheKey("m", "1", new Float32Array([-0]))).not.toBe(localCacheKey("m", "1", new Float32Array([0])));
  });

  it("keys batches longer than one String.fromCharCode call takes, by every row", () => {
    const rows = new Float32Array(64 * 64).map((_, i) => i);
    const key = localCacheKey("digits", "1", rows);
    expect(key.length).toBe("6:digits|1:1|".length + rows.length * 2);
    rows[rows.length - 1] = -1;
    expect(localCacheKey("digits", "1", rows)).not.toBe(key);
  });
});

describe("answerKey", () => {
  it("holds the local key and the SHA-256 of the shared tier, computed once", async () => {
    const rows = new Float32Array([1, 2, 3, 4]);
    const key = answerKey("digits", "1", rows);
    expect(key.local).toBe(localCacheKey("digits", "1", rows));
    const shared = key.shared();
    expect(key.shared()).toBe(shared);
    expect(await shared).toBe(await cacheKey("digits", "1", rows));
  });
});
