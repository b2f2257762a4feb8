/** Request and response shapes of `/v1/classify` and the Open Inference Protocol v2 (REST). */

/** Who answers a classify request: `auto` lets the cascade decide, `edge` and `regional` force a tier. */
export const CASCADE_MODES = ["auto", "edge", "regional"] as const;
export type CascadeMode = (typeof CASCADE_MODES)[number];

/** Which tier produced an answer. */
export type ServedBy = "cache" | "edge" | "degraded" | `regional:${string}`;

export interface ClassifyParameters {
  /** Default `auto`. */
  cascade?: CascadeMode;
}

/** `POST /v1/classify`: one row of 64 numbers, or a batch of rows. */
export interface ClassifyRequest {
  model: string;
  inputs: number[] | number[][];
  /** Pin a model version; default: the version being served. */
  version?: string;
  id?: string;
  parameters?: ClassifyParameters;
}

export interface Prediction {
  /** Index of the top class. */
  class: number;
  label: string;
  /** Probability of the top class. */
  confidence: number;
  /** Probability of every class, in class order. */
  scores: number[];
}

export interface ClassifyResponse {
  model: string;
  version: string;
  id?: string;
  predictions: Prediction[];
  servedBy: ServedBy;
}

/** Datatypes of the Open Inference Protocol. */
export const DATATYPES = [
  "BOOL",
  "UINT8",
  "UINT16",
  "UINT32",
  "UINT64",
  "INT8",
  "INT16",
  "INT32",
  "INT64",
  "FP16",
  "FP32",
  "FP64",
  "BYTES",
] as const;
export type Datatype = (typeof DATATYPES)[number];

export interface TensorMetadata {
  name: string;
  datatype: Datatype;
  /** -1 marks a variable dimension (the batch). */
  shape: number[];
}

export interface InferInputTensor {
  name: string;
  shape: number[];
  datatype: Datatype;
  /** `binary_data_size`: the values are in the binary part of the body instead (protocol/binary-tensor.ts). */
  parameters?: Record<string, unknown>;
  /** Row-major, flat or nested; absent when the values are binary. */
  data?: unknown[];
}

export interface InferRequestedOutput {
  name: string;
  parameters?: Record<string, unknown>;
}

/** `POST /v2/models/{m}[/versions/{v}]/infer`. */
export interface InferRequest {
  id?: string;
  /** Sent by KServe's clients; must name the path's model (protocol/infer-request.ts `checkNamedModel`). */
  model_name?: string;
  model_version?: string;
  parameters?: Record<string, unknown>;
  inputs: InferInputTensor[];
  outputs?: InferRequestedOutput[];
}

export interface InferOutputTensor {
  name: string;
  shape: number[];
  datatype: Datatype;
  /** `binary_data_size` when the values follow the JSON as binary data. */
  parameters?: Record<string, unknown>;
  /** Absent when the values are binary. */
  data?: number[];
}

export interface InferResponse {
  model_name: string;
  model_version?: string;
  id?: string;
  parameters?: Record<string, unknown>;
  outputs: InferOutputTensor[];
}

/** `GET /v2`. */
export interface ServerMetadata {
  name: string;
  version: string;
  extensions: string[];
}

/** `GET /v2/models/{m}[/versions/{v}]`. */
export interface ModelMetadata {
  name: string;
  versions: string[];
  platform: string;
  inputs: TensorMetadata[];
  outputs: TensorMetadata[];
  /** Extension: the class names, in the order of the output's last dimension. */
  labels: string[];
  /** Extension: the input's feature names, when the model's config has them. */
  features?: string[];
}
