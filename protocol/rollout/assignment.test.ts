import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { sha256Bytes } from "../digest.ts";
import { assignmentBytes, BUCKETS, bucketOf, canaryVersion, inCanary } from "./assignment.ts";

const bucket = (model: string, candidate: string, rows: number[]) =>
  bucketOf(
    createHash("sha256")
      .update(assignmentBytes(model, candidate, Float32Array.from(rows)))
      .digest(),
  );

describe("canary assignment", () => {
  it("sends the same input to the same version, by its float32 bytes", () => {
    expect(bucket("digits", "2", [1, 2, 3])).toBe(bucket("digits", "2", [1.0, 2, 3]));
    const rollout = { stable: "1", candidate: "2", percent: 5 };
    const b = bucket("digits", "2", [4, 5, 6]);
    expect(canaryVersion(b, rollout)).toBe(canaryVersion(b, rollout));
  });

  it("buckets the same at the pools (node:crypto) and at the edge (Web Crypto)", async () => {
    for (let i = 0; i < 50; i++) {
      const bytes = assignmentBytes("digits", "2", Float32Array.from([i, i / 7, -i]));
      expect(bucketOf(await sha256Bytes(bytes))).toBe(bucketOf(createHash("sha256").update(bytes).digest()));
    }
  });

  it("hashes the model and the candidate too: another rollout samples other inputs", () => {
    const inputs = Array.from({ length: 200 }, (_, i) => [i, i * 2, 7]);
    const a = inputs.map((x) => bucket("digits", "2", x));
    const b = inputs.map((x) => bucket("digits", "3", x));
    const c = inputs.map((x) => bucket("breast-cancer", "2", x));
    expect(a.filter((x, i) => x === b[i]).length).toBeLessThan(5);
    expect(a.filter((x, i) => x === c[i]).length).toBeLessThan(5);
  });

  it("puts about `percent` of inputs in the canary, and an input in at 1% stays in at every later step", () => {
    const buckets = Array.from({ length: 20_000 }, (_, i) => bucket("digits", "2", [i, i % 17, i / 3]));
    for (const percent of [1, 5, 25]) {
      const share = buckets.filter((b) => inCanary(b, percent)).length / buckets.length;
      expect(Math.abs(share - percent / 100)).toBeLessThan(0.01);
    }
    const atOne = buckets.filter((b) => inCanary(b, 1));
    expect(atOne.every((b) => inCanary(b, 5) && inCanary(b, 25) && inCanary(b, 100))).toBe(true);
    expect(buckets.every((b) => b >= 0 && b < BUCKETS && !inCanary(b, 0) && inCanary(b, 100))).toBe(true);
  });
});
