import {
  type CallOptions,
  type Client,
  type ClientReadableStream,
  type ClientUnaryCall,
  credentials,
  Metadata,
  makeGenericClientConstructor,
  type ServiceError,
} from "@grpc/grpc-js";
import { healthService, inferenceService } from "../../regional/grpc/proto.ts";

/** A unary call's outcome: the answer and the server's initial metadata, or the error. */
export type GrpcResult<T> =
  | { ok: true; value: T; metadata: Record<string, string> }
  | { ok: false; error: ServiceError };

// biome-ignore lint/suspicious/noExplicitAny: decoded messages are asserted on field by field.
type Message = any;

export interface GrpcTestClient {
  /** Call `method` of `inference.GRPCInferenceService` (or, with `service: "health"`, of grpc.health.v1.Health). */
  call(
    method: string,
    request: object,
    options?: { metadata?: Record<string, string>; deadlineMs?: number; service?: "inference" | "health" },
  ): Promise<GrpcResult<Message>>;
  /** A server-streaming method of grpc.health.v1.Health (Watch): the status it ends with. */
  stream(method: string, request: object): Promise<ServiceError | undefined>;
  /** A method the .proto does not declare (Triton's extras, e.g. ModelConfig), with an empty message. */
  callUndeclared(path: string): Promise<GrpcResult<Buffer>>;
  close(): void;
}

/** A real grpc-js client built from the same .proto definitions the pool serves. */
export function grpcClient(port: number): GrpcTestClient {
  const address = `127.0.0.1:${port}`;
  const Inference = makeGenericClientConstructor(inferenceService, "GRPCInferenceService");
  const Health = makeGenericClientConstructor(healthService, "Health");
  const clients: Record<"inference" | "health", Client> = {
    inference: new Inference(address, credentials.createInsecure()),
    health: new Health(address, credentials.createInsecure()),
  };
  type Done<T> = (err: ServiceError | null, value?: T) => void;
  function settle<T>(run: (done: Done<T>) => { on(event: "metadata", listener: (md: Metadata) => void): unknown }) {
    return new Promise<GrpcResult<T>>((resolve) => {
      let headers: Record<string, string> = {};
      const call = run((err, value) =>
        resolve(err ? { ok: false, error: err } : { ok: true, value: value as T, metadata: headers }),
      );
      call.on("metadata", (md: Metadata) => {
        headers = Object.fromEntries(Object.entries(md.getMap()).map(([k, v]) => [k, String(v)]));
      });
    });
  }
  return {
    call(method, request, options = {}) {
      type Unary = (request: object, metadata: Metadata, options: CallOptions, done: Done<Message>) => ClientUnaryCall;
      const client = clients[options.service ?? "inference"] as unknown as Record<string, Unary>;
      const metadata = new Metadata();
      for (const [k, v] of Object.entries(options.metadata ?? {})) metadata.set(k, v);
      const callOptions: CallOptions = options.deadlineMs ? { deadline: Date.now() + options.deadlineMs } : {};
      return settle((done) => client[method]!.call(client, request, metadata, callOptions, done));
    },
    stream(method, request) {
      const client = clients.health as unknown as Record<string, (request: object) => ClientReadableStream<unknown>>;
      const call = client[method]!.call(clients.health, request);
      return new Promise((resolve) => {
        call.on("data", () => {});
        call.on("error", (err: ServiceError) => resolve(err));
        call.on("end", () => resolve(undefined));
      });
    },
    callUndeclared(path) {
      return settle<Buffer>((done) =>
        clients.inference.makeUnaryRequest(
          path,
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.alloc(0),
          done,
        ),
      );
    },
    close() {
      clients.inference.close();
      clients.health.close();
    },
  };
}

/** Float32 values as the little-endian bytes `raw_input_contents` carries. */
export function rawFloat32(values: readonly number[]): Uint8Array {
  return new Uint8Array(Float32Array.from(values).buffer);
}

/** `raw_output_contents` bytes as numbers. */
export function fromRawFloat32(bytes: Uint8Array): number[] {
  return Array.from(new Float32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)));
}
