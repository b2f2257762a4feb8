import { readFileSync } from "node:fs";
import type { MethodDefinition, ServiceDefinition } from "@grpc/grpc-js";
import protobuf from "protobufjs";

/**
 * The gRPC services the pool serves, read from their own .proto files by protobufjs at start-up:
 * `inference.GRPCInferenceService` (protocol/grpc_predict_v2.proto, the Open Inference Protocol as KServe
 * publishes it) and `grpc.health.v1.Health` (protocol/grpc_health_v1.proto, for Kubernetes' `grpc` probes).
 * The grpc-js definitions are built here rather than by @grpc/proto-loader: protobufjs is the one protobuf
 * runtime of the repository already (tools/model/onnx/proto.ts), and the messages keep the .proto's field
 * names. Tests build their client from the same definitions.
 */

const DECODE: protobuf.IConversionOptions = {
  longs: Number,
  defaults: true,
  oneofs: true,
  arrays: true,
  objects: true,
};

function load(file: string): protobuf.Root {
  return protobuf.parse(readFileSync(new URL(`../../protocol/${file}`, import.meta.url), "utf8"), { keepCase: true })
    .root;
}

function definition(root: protobuf.Root, serviceName: string): ServiceDefinition {
  const service = root.lookupService(serviceName);
  const methods: Record<string, MethodDefinition<object, object>> = {};
  for (const method of service.methodsArray) {
    method.resolve();
    const request = method.resolvedRequestType!;
    const response = method.resolvedResponseType!;
    const serialize = (type: protobuf.Type) => (value: object) => {
      const bytes = type.encode(value).finish();
      return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    };
    const deserialize = (type: protobuf.Type) => (bytes: Buffer) => type.toObject(type.decode(bytes), DECODE);
    methods[method.name] = {
      path: `/${serviceName}/${method.name}`,
      requestStream: !!method.requestStream,
      responseStream: !!method.responseStream,
      requestSerialize: serialize(request),
      requestDeserialize: deserialize(request),
      responseSerialize: serialize(response),
      responseDeserialize: deserialize(response),
      originalName: method.name,
    };
  }
  return methods;
}

export const INFERENCE_SERVICE = "inference.GRPCInferenceService";
export const HEALTH_SERVICE = "grpc.health.v1.Health";

/** `inference.GRPCInferenceService`: every method of the .proto, by name (`ModelInfer`, ...). */
export const inferenceService: ServiceDefinition = definition(load("grpc_predict_v2.proto"), INFERENCE_SERVICE);

/** `grpc.health.v1.Health`: Check, List, Watch. */
export const healthService: ServiceDefinition = definition(load("grpc_health_v1.proto"), HEALTH_SERVICE);

/** `HealthCheckResponse.ServingStatus`. */
export const SERVING_STATUS = { SERVING: 1, NOT_SERVING: 2 } as const;
