import { describe, expect, it } from "vitest";
import { modelConfig } from "../test/support/heldout.ts";
import { tritonModelConfig } from "./triton-config.ts";

describe("tritonModelConfig", () => {
  it("writes config.json as Triton's model configuration JSON: TYPE_FP32, dims without the batch dimension", () => {
    const config = tritonModelConfig(modelConfig("digits"), {
      maxBatchSize: 64,
      maxQueueDelayUs: 500,
      kind: "KIND_CPU",
      version: "1",
    });
    expect(config).toEqual({
      name: "digits",
      platform: "onnxruntime_onnx",
      backend: "onnxruntime",
      version_policy: { specific: { versions: [1] } },
      max_batch_size: 64,
      input: [
        {
          name: "pixels",
          data_type: "TYPE_FP32",
          format: "FORMAT_NONE",
          dims: [64],
          is_shape_tensor: false,
          allow_ragged_batch: false,
          optional: false,
        },
      ],
      output: [
        { name: "probabilities", data_type: "TYPE_FP32", dims: [10], label_filename: "", is_shape_tensor: false },
      ],
      dynamic_batching: {
        preferred_batch_size: [],
        max_queue_delay_microseconds: 500,
        preserve_ordering: false,
        priority_levels: 0,
        default_priority_level: 0,
        priority_queue_policy: {},
      },
      instance_group: [{ name: "digits_0", kind: "KIND_CPU", count: 1, gpus: [], profile: [], passive: false }],
      default_model_filename: "model.onnx",
      parameters: {},
    });
  });

  it("leaves dynamic_batching out where nothing batches requests, and a version that is not a number to `latest`", () => {
    const config = tritonModelConfig(modelConfig("breast-cancer"), {
      maxBatchSize: 8,
      kind: "KIND_GPU",
      version: "v2",
    });
    expect(config).not.toHaveProperty("dynamic_batching");
    expect(config).toMatchObject({
      max_batch_size: 8,
      version_policy: { latest: { num_versions: 1 } },
      input: [{ name: "features", dims: [30] }],
      output: [{ name: "probabilities", dims: [2] }],
      instance_group: [{ kind: "KIND_GPU" }],
    });
  });

  it("a version whose graph has a fixed batch is what Triton serves with max_batch_size 0: whole dims, no batcher", () => {
    const digits = modelConfig("digits");
    const fixed = { ...digits, versions: { "1": { ...digits.versions["1"]!, fixedBatch: 1 } } };
    const config = tritonModelConfig(fixed, { maxBatchSize: 64, maxQueueDelayUs: 0, kind: "KIND_CPU", version: "1" });
    expect(config.max_batch_size).toBe(0);
    expect(config.input[0]!.dims).toEqual([1, 64]);
    expect(config.output[0]!.dims).toEqual([1, 10]);
    expect(config.dynamic_batching).toBeUndefined();
  });
});
