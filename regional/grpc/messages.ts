/**
 * The Open Inference Protocol's gRPC messages (protocol/grpc_predict_v2.proto) as regional/grpc/proto.ts
 * decodes them: field names as in the .proto, int64 as numbers, bytes as Uint8Array, every field present
 * (proto3 defaults: "" and []), a oneof's chosen field named by `parameter_choice`. Only what the service reads
 * or writes is typed.
 */

/** `InferParameter`: one of bool, int64 or string. */
export interface GrpcInferParameter {
  parameter_choice?: "bool_param" | "int64_param" | "string_param";
  bool_param?: boolean;
  int64_param?: number;
  string_param?: string;
}

/** `InferTensorContents`: the values in the repeated field of the tensor's datatype. */
export interface GrpcTensorContents {
  bool_contents?: boolean[];
  int_contents?: number[];
  int64_contents?: number[];
  uint_contents?: number[];
  uint64_contents?: number[];
  fp32_contents?: number[];
  fp64_contents?: number[];
  bytes_contents?: Uint8Array[];
}

export interface GrpcInferInputTensor {
  name: string;
  datatype: string;
  shape: number[];
  parameters?: Record<string, GrpcInferParameter>;
  contents?: GrpcTensorContents | null;
}

export interface GrpcRequestedOutput {
  name: string;
  parameters?: Record<string, GrpcInferParameter>;
}

export interface GrpcModelInferRequest {
  model_name: string;
  model_version: string;
  id: string;
  parameters?: Record<string, GrpcInferParameter>;
  inputs: GrpcInferInputTensor[];
  outputs: GrpcRequestedOutput[];
  raw_input_contents: Uint8Array[];
}

export interface GrpcModelInferResponse {
  model_name: string;
  model_version: string;
  id: string;
  outputs: { name: string; datatype: string; shape: number[] }[];
  raw_output_contents: Uint8Array[];
}

/** `ModelReadyRequest` and `ModelMetadataRequest`. */
export interface GrpcModelRef {
  name: string;
  version: string;
}

export interface GrpcModelMetadataResponse {
  name: string;
  versions: string[];
  platform: string;
  inputs: { name: string; datatype: string; shape: number[] }[];
  outputs: { name: string; datatype: string; shape: number[] }[];
}
