/**
 * Triton's model configuration extension (triton-inference-server/server docs/protocol/extension_model_configuration.md):
 * `GET /v2/models/{m}/config` answers the model's configuration as Triton writes its ModelConfig protobuf in JSON
 * (model_config.proto: `data_type` as `TYPE_FP32`, `dims` without the batch dimension when `max_batch_size` is
 * above 0). Built from config.json and how the tier serves it; pure, shared by the pools and the edge.
 */
import type { ModelConfig } from "./model-config.ts";
import type { Datatype } from "./types.ts";

/** model_config.proto's DataType for each protocol datatype (BYTES is TYPE_STRING there). */
const TRITON_TYPE: Record<Datatype, string> = {
  BOOL: "TYPE_BOOL",
  UINT8: "TYPE_UINT8",
  UINT16: "TYPE_UINT16",
  UINT32: "TYPE_UINT32",
  UINT64: "TYPE_UINT64",
  INT8: "TYPE_INT8",
  INT16: "TYPE_INT16",
  INT32: "TYPE_INT32",
  INT64: "TYPE_INT64",
  FP16: "TYPE_FP16",
  FP32: "TYPE_FP32",
  FP64: "TYPE_FP64",
  BYTES: "TYPE_STRING",
};

/** How the tier serves the model, which config.json does not say. */
export interface ServingShape {
  /** The most rows one request may carry here (the request limit and the model's `maxBatchSize`, the smaller). */
  maxBatchSize: number;
  /** The dynamic batcher's queue delay in µs; undefined where requests are not batched together (the edge). */
  maxQueueDelayUs?: number;
  /** Where the model runs: `KIND_GPU` on a CUDA provider, else `KIND_CPU`. */
  kind: "KIND_CPU" | "KIND_GPU";
  /** The version this answer describes. */
  version: string;
}

/** One input or output as Triton's JSON writes a ModelInput/ModelOutput. */
export interface TritonTensorConfig {
  name: string;
  data_type: string;
  dims: number[];
}

/** The fields of Triton's model configuration JSON this system has a value for. */
export interface TritonModelConfig {
  name: string;
  platform: string;
  backend: string;
  version_policy: { specific: { versions: number[] } } | { latest: { num_versions: number } };
  max_batch_size: number;
  input: (TritonTensorConfig & {
    format: "FORMAT_NONE";
    is_shape_tensor: false;
    allow_ragged_batch: false;
    optional: false;
  })[];
  output: (TritonTensorConfig & { label_filename: string; is_shape_tensor: false })[];
  dynamic_batching?: {
    preferred_batch_size: number[];
    max_queue_delay_microseconds: number;
    preserve_ordering: boolean;
    priority_levels: number;
    default_priority_level: number;
    priority_queue_policy: Record<string, never>;
  };
  instance_group: { name: string; kind: string; count: number; gpus: number[]; profile: string[]; passive: boolean }[];
  default_model_filename: string;
  parameters: Record<string, { string_value: string }>;
}

/**
 * The model configuration of `config` as served: dims without the leading batch dimension (-1 in config.json)
 * since `max_batch_size` is above 0, as Triton requires; `dynamic_batching` only where a batcher gathers requests.
 * A numeric version is listed in `version_policy`; this system's versions may be any name, so another falls back
 * to Triton's default policy (the latest one).
 */
export function tritonModelConfig(config: ModelConfig, shape: ServingShape): TritonModelConfig {
  // A graph with a fixed batch is what Triton serves with max_batch_size 0: dims are the whole shape, no batcher.
  const fixed = config.versions[shape.version]?.fixedBatch;
  const dims = (s: readonly number[]) => (fixed === undefined ? s.slice(1) : [fixed, ...s.slice(1)]);
  const numeric = /^\d+$/.test(shape.version) ? Number(shape.version) : undefined;
  return {
    name: config.name,
    platform: config.platform,
    backend: "onnxruntime",
    version_policy: numeric !== undefined ? { specific: { versions: [numeric] } } : { latest: { num_versions: 1 } },
    max_batch_size: fixed === undefined ? shape.maxBatchSize : 0,
    input: config.inputs.map((t) => ({
      name: t.name,
      data_type: TRITON_TYPE[t.datatype as Datatype],
      format: "FORMAT_NONE",
      dims: dims(t.shape),
      is_shape_tensor: false,
      allow_ragged_batch: false,
      optional: false,
    })),
    output: config.outputs.map((t) => ({
      name: t.name,
      data_type: TRITON_TYPE[t.datatype as Datatype],
      dims: dims(t.shape),
      label_filename: "",
      is_shape_tensor: false,
    })),
    ...(shape.maxQueueDelayUs !== undefined && fixed === undefined
      ? {
          dynamic_batching: {
            preferred_batch_size: [],
            max_queue_delay_microseconds: shape.maxQueueDelayUs,
            preserve_ordering: false,
            priority_levels: 0,
            default_priority_level: 0,
            priority_queue_policy: {},
          },
        }
      : {}),
    instance_group: [{ name: `${config.name}_0`, kind: shape.kind, count: 1, gpus: [], profile: [], passive: false }],
    default_model_filename: "model.onnx",
    parameters: {},
  };
}
