import { describe, expect, it } from "vitest";
import { sha256Bytes } from "../../protocol/digest.ts";
import { parseModelConfig } from "../../protocol/model-config.ts";
import { assignmentBytes, bucketOf, inCanary } from "../../protocol/rollout/assignment.ts";
import type { RolloutView } from "../../protocol/rollout/state.ts";
import { ServedModel } from "./served-model.ts";

const config = parseModelConfig(
  {
    name: "digits",
    platform: "onnxruntime_onnx",
    inputs: [{ name: "pixels", datatype: "FP32", shape: [-1, 64] }],
    outputs: [{ name: "probabilities", datatype: "FP32", shape: [-1, 10] }],
    labels: ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"],
    maxBatchSize: 64,
    version: "1",
    versions: { "1": { file: "model.onnx", sha256: "a".repeat(64), bytes: 1, accuracy: { test: 0.98 } } },
  },
  "digits/config.json",
);
const model = () => new ServedModel({ config, edge: undefined, samples: () => [] });
const view = (over: Partial<RolloutView>): RolloutView => ({
  id: 3,
  revision: 3,
  stable: "1",
  candidate: "2",
  phase: "running",
  percent: 25,
  ...over,
});
const inputs = Array.from({ length: 400 }, (_, i) => Float32Array.from({ length: 64 }, (_, j) => (i * 7 + j) % 17));
/**
 * The pools' routing of an input (regional/rollout/rollouts.ts hashes the same bytes with node:crypto, which
 * protocol/rollout/assignment.test.ts checks equal to Web Crypto's digest).
 */
const poolPicks = async (rows: Float32Array, percent: number) =>
  inCanary(bucketOf(await sha256Bytes(assignmentBytes("digits", "2", rows))), percent) ? "2" : "1";

describe("ServedModel during a rollout", () => {
  it("maps each input to the version the pools route it to", async () => {
    const m = model();
    expect(await m.versionFor(inputs[0]!)).toBe("1");
    m.seeRollout(view({}));
    const versions = await Promise.all(inputs.map((x) => m.versionFor(x)));
    expect(versions).toEqual(await Promise.all(inputs.map((x) => poolPicks(x, 25))));
    // The candidate answering an input of the canary does not make it the served version.
    m.seeVersion("2");
    expect(m.servedVersion).toBe("1");
    const share = versions.filter((v) => v === "2").length / versions.length;
    expect(share).toBeGreaterThan(0.17);
    expect(share).toBeLessThan(0.33);
  });

  it("takes only newer revisions, and serves the stable version outside a running canary", async () => {
    const m = model();
    m.seeRollout(view({ revision: 5, percent: 100 }));
    expect(await m.versionFor(inputs[0]!)).toBe("2");
    m.seeRollout(view({ revision: 4, percent: 0 }));
    expect(m.rollout?.revision).toBe(5);
    m.seeRollout(view({ revision: 6, phase: "rolled-back", percent: 0 }));
    expect(await m.versionFor(inputs[0]!)).toBe("1");
    m.seeRollout(view({ revision: 7, percent: 0 }));
    expect(await m.versionFor(inputs[0]!)).toBe("1");
    // A rollout over a version the edge does not believe is served (a stale view): the served version.
    m.seeVersion("3");
    m.seeRollout(view({ revision: 8, percent: 100 }));
    expect(await m.versionFor(inputs[0]!)).toBe("3");
  });

  it("gives the version at once, without a promise, unless a canary splits the inputs", () => {
    const m = model();
    expect(m.versionFor(inputs[0]!)).toBe("1");
    m.seeRollout(view({ revision: 5, percent: 100 }));
    expect(m.versionFor(inputs[0]!)).toBe("2");
    m.seeRollout(view({ revision: 6, percent: 25 }));
    expect(m.versionFor(inputs[0]!)).toBeInstanceOf(Promise);
  });
});

describe("ServedModel following the registry's served state", () => {
  it("takes the served version by revision, back to an older one after a rollback, and stops following regions", () => {
    const m = model();
    m.seeVersion("2"); // before the registry: regions' answers raise it
    expect(m.servedVersion).toBe("2");
    m.seeServedState({ revision: 5, version: "3" });
    expect(m.servedVersion).toBe("3");
    m.seeServedState({ revision: 6, version: "1", rollout: view({ revision: 6, phase: "rolled-back", percent: 0 }) });
    expect(m.servedVersion).toBe("1");
    expect(m.rollout?.phase).toBe("rolled-back");
    m.seeVersion("3"); // a lagging region's answer
    m.seeServedState({ revision: 5, version: "3" }); // an older view
    expect(m.servedVersion).toBe("1");
    expect(m.registryRevision).toBe(6);
  });
});
