import {
  status as GrpcStatus,
  Metadata,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  type UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { asServingError } from "../../hono-shared/hono-error.ts";
import { bytesOfFloat32 } from "../../protocol/binary-tensor.ts";
import { errorStatus, NotFound } from "../../protocol/errors.ts";
import { TRACEPARENT_HEADER, TRACESTATE_HEADER } from "../../protocol/headers.ts";
import type { AppDeps } from "../app-context.ts";
import { nowUs } from "../clock.ts";
import type { InferenceAnswers } from "../inference-answers.ts";
import { modelReadiness, poolReadiness } from "../readiness.ts";
import { SERVER_NAME, SERVER_VERSION } from "../server-info.ts";
import { grpcAuth } from "./auth.ts";
import { remainingMs } from "./call-deadline.ts";
import { grpcInferCall } from "./infer-call.ts";
import type {
  GrpcModelInferRequest,
  GrpcModelInferResponse,
  GrpcModelMetadataResponse,
  GrpcModelRef,
} from "./messages.ts";
import { INFERENCE_SERVICE, SERVING_STATUS } from "./proto.ts";
import { type GrpcFailure, grpcFailure, serviceError } from "./status.ts";

export interface GrpcServiceOptions {
  deps: Pick<
    AppDeps,
    | "repository"
    | "recorder"
    | "draining"
    | "poolNotReady"
    | "log"
    | "admission"
    | "sharedSecret"
    | "rollouts"
    | "tracing"
  >;
  /** The same answering code the HTTP routes use. */
  answers: InferenceAnswers;
}

type Handler<Req, Res> = (call: ServerUnaryCall<Req, Res>) => Res | Promise<Res>;

const CODE_NAMES = Object.fromEntries(Object.entries(GrpcStatus).map(([name, code]) => [code, name])) as Record<
  number,
  string
>;

/**
 * The gRPC services' handlers: `inference.GRPCInferenceService` (the Open Inference Protocol) and
 * `grpc.health.v1.Health`. ModelInfer takes the HTTP inference route's layers in the same order, with the
 * same functions: admission by the call's deadline, the deadline itself, auth (metadata), then
 * `answers.inferRows` (validation, rollout seam, batcher, counts). Every answer is counted by method and code;
 * failures carry the error family's message, its code in the `edgecascade-error-code` trailer.
 */
export function grpcServices({ deps, answers }: GrpcServiceOptions): {
  inference: UntypedServiceImplementation;
  health: UntypedServiceImplementation;
} {
  const { repository, recorder, log, admission, tracing } = deps;
  const authorize = grpcAuth(deps.sharedSecret);

  const answer = (method: string, failure: GrpcFailure | undefined) =>
    recorder.grpcResponse(method, CODE_NAMES[failure?.code ?? GrpcStatus.OK] ?? "UNKNOWN");

  function unary<Req, Res>(method: string, handler: Handler<Req, Res>) {
    return async (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
      try {
        const value = await handler(call);
        answer(method, undefined);
        callback(null, value);
      } catch (err) {
        if (!asServingError(err))
          log("error", "unhandled error", { grpcMethod: method, error: (err as Error).stack ?? String(err) });
        const failure = grpcFailure(err);
        answer(method, failure);
        callback(serviceError(failure));
      }
    };
  }

  function unimplemented(method: string, details: string) {
    return (_call: unknown, callback: sendUnaryData<unknown>) => {
      answer(method, { code: GrpcStatus.UNIMPLEMENTED, details, trailers: {} });
      callback({ code: GrpcStatus.UNIMPLEMENTED, details });
    };
  }

  const modelInfer: Handler<GrpcModelInferRequest, GrpcModelInferResponse> = async (call) => {
    const receivedUs = nowUs();
    const leftMs = remainingMs(call.getDeadline(), Date.now());
    // No edge tenant: gRPC callers are the `direct` flow.
    const admitted = admission.admit(Number.isFinite(leftMs) ? leftMs : undefined);
    let status = 500;
    let failure: unknown;
    // W3C trace context rides in the call's metadata, under the same names as HTTP's headers.
    const metadataText = (key: string) => call.metadata.get(key)[0] as string | undefined;
    const trace = tracing.enabled
      ? tracing.begin(metadataText(TRACEPARENT_HEADER), metadataText(TRACESTATE_HEADER), receivedUs)
      : undefined;
    try {
      authorize(metadataText("authorization"));
      const { model, version, call: inferCall, binary } = grpcInferCall(call.request);
      const clock = { receivedUs, deadlineUs: receivedUs + leftMs * 1000, admitted, trace };
      const result = await answers.inferRows(clock, inferCall, binary, model, version, () => undefined);
      status = 200;
      const metadata = new Metadata();
      for (const [key, value] of Object.entries(result.headers)) metadata.set(key, value);
      call.sendMetadata(metadata);
      // Triton's gRPC answers always carry raw contents; tritonclient and KServe's client read them.
      return {
        model_name: result.model,
        model_version: result.version,
        id: call.request.id,
        outputs: [{ name: result.outputName, datatype: "FP32", shape: [result.batch, result.classes] }],
        raw_output_contents: [bytesOfFloat32(result.probs)],
      };
    } catch (err) {
      status = errorStatus(err);
      failure = err;
      throw err;
    } finally {
      admitted.answered(status);
      if (trace) {
        const known = failure === undefined ? undefined : asServingError(failure);
        tracing.end(trace, {
          protocol: "grpc",
          method: "ModelInfer",
          code: CODE_NAMES[failure === undefined ? GrpcStatus.OK : grpcFailure(failure).code] ?? "UNKNOWN",
          ...(failure === undefined
            ? {}
            : { error: { code: known?.code ?? "internal", message: known?.message ?? "internal error" } }),
        });
      }
    }
  };

  const modelMetadata: Handler<GrpcModelRef, GrpcModelMetadataResponse> = (call) => {
    const { name, version } = call.request;
    const metadata = repository.metadata(name, version === "" ? undefined : version);
    return {
      name: metadata.name,
      versions: metadata.versions,
      platform: metadata.platform,
      inputs: metadata.inputs,
      outputs: metadata.outputs,
    };
  };

  const servingStatus = () => (poolReadiness(deps).ready ? SERVING_STATUS.SERVING : SERVING_STATUS.NOT_SERVING);

  return {
    inference: {
      ServerLive: unary("ServerLive", () => ({ live: true })),
      ServerReady: unary("ServerReady", () => ({ ready: poolReadiness(deps).ready })),
      ModelReady: unary<GrpcModelRef, { ready: boolean }>("ModelReady", (call) => ({
        ready: modelReadiness(repository, call.request.name, call.request.version || undefined),
      })),
      ServerMetadata: unary("ServerMetadata", () => ({ name: SERVER_NAME, version: SERVER_VERSION, extensions: [] })),
      ModelMetadata: unary("ModelMetadata", modelMetadata),
      ModelInfer: unary("ModelInfer", modelInfer),
      RepositoryModelLoad: unimplemented(
        "RepositoryModelLoad",
        "model control is served over HTTP only: POST /v2/repository/models/{model}/load with the admin token",
      ),
      RepositoryModelUnload: unimplemented(
        "RepositoryModelUnload",
        "model control is served over HTTP only: POST /v2/repository/models/{model}/unload with the admin token",
      ),
    },
    health: {
      // "" is the server as a whole (what Kubernetes' grpc probe asks by default); both mean: ready to infer.
      Check: unary<{ service: string }, { status: number }>("Check", (call) => {
        const { service } = call.request;
        if (service !== "" && service !== INFERENCE_SERVICE) {
          throw new NotFound(`unknown service "${service}"; the health service reports "" and "${INFERENCE_SERVICE}"`);
        }
        return { status: servingStatus() };
      }),
      List: unary("List", () => {
        const status = servingStatus();
        return { statuses: { "": { status }, [INFERENCE_SERVICE]: { status } } };
      }),
      Watch: (call: ServerWritableStream<unknown, unknown>) => {
        const details = "Watch is not served: Check the health instead (Kubernetes' grpc probes do)";
        answer("Watch", { code: GrpcStatus.UNIMPLEMENTED, details, trailers: {} });
        call.emit("error", { code: GrpcStatus.UNIMPLEMENTED, details });
      },
    },
  };
}
