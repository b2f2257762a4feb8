import * as ort from "onnxruntime-web";
import { describe, expect, it } from "vitest";
import {
  EdgeVariant,
  type EdgeVariantSource,
  type Runner,
  verifyModelBytes,
} from "../../edge/inference/edge-variant.ts";
import { serialRuns } from "../../edge/inference/serial-runs.ts";
import type { ModelIo } from "../../protocol/model-config.ts";
import { modelBytes, modelConfig } from "../support/heldout.ts";
import { confidentRows, TOLERANCE, unsureRows } from "./support.ts";

// EdgeVariant's checks and concurrency with real onnxruntime-web (its Node build: the same wasm kernels the
// Worker runs; the workerd loading path itself is covered by the workerd suites).
const config = modelConfig("digits-edge");
const bytes = modelBytes("digits-edge");

async function ortRunner(model: Uint8Array, io: ModelIo): Promise<Runner> {
  const session = await ort.InferenceSession.create(model, { executionProviders: ["wasm"] });
  return serialRuns(async (data, batch) => {
    const outputs = await session.run({
      [io.inputName]: new ort.Tensor("float32", data, [batch, io.width]),
    });
    return outputs[io.outputName]!.data as Float32Array;
  });
}

const source = (over: Partial<EdgeVariantSource> = {}): EdgeVariantSource => ({
  config,
  bytes,
  createRunner: ortRunner,
  ...over,
});

describe("EdgeVariant", () => {
  it("refuses model bytes that differ from config.json's sha256 or size", async () => {
    await expect(verifyModelBytes(config, bytes)).resolves.toBeUndefined();
    const tampered = Uint8Array.from(bytes);
    tampered[tampered.length - 1]! ^= 1;
    await expect(verifyModelBytes(config, tampered)).rejects.toThrow(
      new RegExp(
        `checksum mismatch: .* config.json says [0-9a-f]{64} \\(${bytes.length} bytes\\); the edge model will not load`,
      ),
    );
    await expect(verifyModelBytes(config, bytes.subarray(1))).rejects.toThrow(`(${bytes.length - 1} bytes)`);
    let created = 0;
    const counted: EdgeVariantSource["createRunner"] = async (...args) => {
      created++;
      return ortRunner(...args);
    };
    const model = new EdgeVariant(source({ bytes: tampered, createRunner: counted }));
    await expect(model.load()).rejects.toThrow(/sha256/);
    expect(created).toBe(0); // the session is never created from unverified bytes
    expect(model.ready).toBe(false);
    expect((model.loadError as Error).message).toMatch(/sha256/);
  });

  it("retries a failed load on the next use", async () => {
    let attempts = 0;
    const model = new EdgeVariant(
      source({
        createRunner: async (...args) => {
          if (++attempts === 1) throw new Error("out of memory");
          return ortRunner(...args);
        },
      }),
    );
    const row = Float32Array.from(confidentRows[0]!.input);
    await expect(model.infer(row, 1)).rejects.toThrow("out of memory");
    expect(model.ready).toBe(false);
    const probs = await model.infer(row, 1);
    expect(probs).toHaveLength(10);
    expect(model.loads).toBe(2);
    expect(model.ready).toBe(true);
  });

  it("gives each of many overlapping calls its own rows' answer", async () => {
    const model = new EdgeVariant(source());
    const rows = [...confidentRows.slice(0, 40), ...unsureRows];
    const answers = await Promise.all(
      rows.map((r, i) =>
        i % 3 === 0
          ? model.infer(Float32Array.from([...r.input, ...r.input]), 2).then((p) => p.subarray(0, 10))
          : model.infer(Float32Array.from(r.input), 1),
      ),
    );
    expect(model.loads).toBe(1);
    for (const [i, row] of rows.entries()) {
      const expected = row.expected["digits-edge"]!;
      for (const [c, p] of expected.entries()) expect(Math.abs(answers[i]![c]! - p)).toBeLessThanOrEqual(TOLERANCE);
    }
  });

  it("exposes its calibration and stands in for digits", () => {
    const model = new EdgeVariant(source());
    expect(model.calibration.against).toEqual({ model: "digits", version: "1" });
    expect(model.calibration.threshold).toBe(config.versions["1"]!.cascade!.threshold);
    expect(model.calibration.threshold).toBeGreaterThan(0.5);
    expect(model.version).toBe("1");
  });
});
