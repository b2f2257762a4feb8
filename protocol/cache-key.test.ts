import { describe, expect, it } from "vitest";
import { cacheKey } from "./cache-key.ts";
import { readClassifyInputs } from "./classify-request.ts";
import { parseJsonBody } from "./json-body.ts";

const signature = {
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
  readClassifyInputs(parseJsonBody(json, "application/json") as unknown[], signature, limits).data;

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
