import { Server, ServerCredentials } from "@grpc/grpc-js";
import { healthService, inferenceService } from "./proto.ts";
import type { GrpcServiceOptions } from "./service.ts";
import { grpcServices } from "./service.ts";

export interface GrpcListenOptions {
  host: string;
  /** 0 picks a free one. */
  port: number;
  /** Largest request message, in bytes: the HTTP body limit (`RequestLimits.maxBodyBytes`). */
  maxMessageBytes: number;
}

export interface GrpcListener {
  port: number;
  /**
   * Stop taking calls (GOAWAY to every client) and resolve once every call in flight has been answered.
   * The pool drains its HTTP listener alongside, and releases the sessions after both.
   */
  drain(): Promise<void>;
}

/**
 * Serve `inference.GRPCInferenceService` and `grpc.health.v1.Health` on their own port with grpc-js. A message
 * over `maxMessageBytes` is refused by grpc-js itself with RESOURCE_EXHAUSTED, as HTTP answers 413.
 */
export async function listenGrpc(listen: GrpcListenOptions, services: GrpcServiceOptions): Promise<GrpcListener> {
  const server = new Server({
    "grpc.max_receive_message_length": listen.maxMessageBytes,
  });
  const { inference, health } = grpcServices(services);
  server.addService(inferenceService, inference);
  server.addService(healthService, health);
  const host = listen.host.includes(":") ? `[${listen.host}]` : listen.host;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${listen.port}`, ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
  });
  let draining: Promise<void> | undefined;
  return {
    port,
    drain() {
      draining ??= new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
      return draining;
    },
  };
}
