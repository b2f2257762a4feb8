import type { IncomingMessage, RequestListener, ServerResponse } from "node:http";
import { asServingError } from "../../hono-shared/hono-error.ts";
import { INFERENCE_HEADER_LENGTH } from "../../protocol/binary-tensor.ts";
import { bodyTooLarge } from "../../protocol/body-limit.ts";
import { errorAnswer } from "../../protocol/error-answer.ts";
import { BadRequest, type ServingError } from "../../protocol/errors.ts";
import {
  AUDIT_HEADER,
  DEADLINE_HEADER,
  SIGNATURE_HEADER,
  TENANT_HEADER,
  TIMESTAMP_HEADER,
  TRACEPARENT_HEADER,
  TRACESTATE_HEADER,
} from "../../protocol/headers.ts";
import type { AppDeps } from "../app-context.ts";
import { nowUs } from "../clock.ts";
import { deadlineAt, deadlineMs } from "../deadline-header.ts";
import type { InferenceAnswer, InferenceAnswers, InferenceInput } from "../inference-answers.ts";
import type { Admitted } from "../middleware/admit-in-time.ts";
import { checkEdgeSignature } from "../middleware/signature-auth.ts";
import { ended } from "../tracing/request-end.ts";
import type { RequestTrace } from "../tracing/request-tracing.ts";
import { type FastRoute, fastRoute } from "./route.ts";

export interface FastPathOptions {
  deps: Pick<AppDeps, "limits" | "sharedSecret" | "recorder" | "draining" | "log" | "admission" | "tracing">;
  /** The same answering code the Hono routes use. */
  answers: InferenceAnswers;
  /** Every request the fast path does not take: the Hono app's listener. */
  fallback: RequestListener;
}

/** A response of the fast path: its status, headers (names lower case) and body. */
interface FastAnswer {
  status: number;
  headers: Record<string, string>;
  body: string | Uint8Array<ArrayBuffer>;
}

const header = (req: IncomingMessage, name: string) => req.headers[name] as string | undefined;

/**
 * The pool's hot routes on plain node:http, in front of the Hono app: POST `/v1/classify` and v2 `infer`
 * (which requests it takes: `fastRoute`). It applies the same layers as the Hono route, in the same order
 * and with the same code (deadline header, admission by deadline and tenant, 413 from Content-Length, edge signature
 * (over the tenant too), then
 * `InferenceAnswers`), counts the response under the same route pattern, marks answers `Connection: close`
 * while draining, and answers errors with the same `errorAnswer`.
 *
 * Why not Hono for these: profiled under load (docs/performance.md), @hono/node-server's Request/Response
 * conversion, Hono's context, routing and middleware chain cost about as much CPU per request as Node's whole
 * HTTP layer does for a plain handler, which kept the batching pool from pulling ahead of a plain
 * per-request server.
 */
export function inferenceFastPath({ deps, answers, fallback }: FastPathOptions): RequestListener {
  const { limits, sharedSecret, recorder, draining, log, admission, tracing } = deps;
  const signature = sharedSecret === undefined ? undefined : { secret: sharedSecret };

  /** An audit's response is not counted: it is no client's request (protocol/audit.ts). */
  function write(res: ServerResponse, pattern: string, { status, headers, body }: FastAnswer, audit = false): void {
    if (!audit) recorder.httpResponse("POST", pattern, status);
    if (draining()) headers.connection = "close";
    headers["content-length"] = String(Buffer.byteLength(body));
    res.writeHead(status, headers);
    res.end(body);
  }

  /**
   * The deadline header (400 when malformed), admission (a refused request's body is never read), then the
   * answer. Written with callbacks rather than async functions and a body promise: on this path each promise
   * is an allocation and a microtask per request, and the pool's CPU per request is what bench:regional
   * compares with a plain server.
   */
  function serve(req: IncomingMessage, res: ServerResponse, route: FastRoute): void {
    const receivedUs = nowUs();
    const audit = header(req, AUDIT_HEADER);
    let admitted: Admitted;
    let ms: number | undefined;
    const tenant = header(req, TENANT_HEADER);
    try {
      ms = deadlineMs(header(req, DEADLINE_HEADER));
      admitted = admission.admit(ms, tenant);
    } catch (err) {
      write(res, route.pattern, errorAnswer(err), audit !== undefined);
      return;
    }
    let settled = false;
    let trace: RequestTrace | undefined;
    const finish = (result: FastAnswer, error?: ServingError) => {
      admitted.answered(result.status);
      write(res, route.pattern, result, audit !== undefined);
      if (trace) tracing.end(trace, ended(route.pattern, result.status, error));
    };
    const fail = (err: unknown) => {
      const known = asServingError(err);
      if (!known) {
        log("error", "unhandled error", { method: "POST", path: req.url, error: (err as Error).stack ?? String(err) });
      }
      finish(errorAnswer(known ?? err), known);
    };
    const succeed = (answer: InferenceAnswer) => finish({ status: 200, headers: answer.headers, body: answer.body });
    const deadlineUs = deadlineAt(ms, receivedUs);
    // Off, or under a parent marked unsampled: nothing is read beyond these two headers, nothing is carried.
    if (tracing.enabled) {
      trace = tracing.begin(header(req, TRACEPARENT_HEADER), header(req, TRACESTATE_HEADER), receivedUs);
    }
    if (Number(header(req, "content-length") ?? 0) > limits.maxBodyBytes) {
      fail(bodyTooLarge(limits.maxBodyBytes));
      return;
    }
    // The body as one Buffer (Node's parser stops at Content-Length); a connection lost mid-body is a 400.
    let first: Buffer | undefined;
    let chunks: Buffer[] | undefined;
    req.on("data", (chunk: Buffer) => {
      if (first === undefined) first = chunk;
      else if (chunks === undefined) chunks = [first, chunk];
      else chunks.push(chunk);
    });
    req.on("error", (err) => {
      if (settled) return;
      settled = true;
      fail(new BadRequest(`the request body could not be read: ${err.message}`));
    });
    req.on("end", () => {
      if (settled) return;
      settled = true;
      const body = chunks ? Buffer.concat(chunks) : (first ?? Buffer.alloc(0));
      let answering: Promise<InferenceAnswer> | undefined;
      try {
        if (signature) {
          const call = { method: "POST", path: req.url!, body, tenant, audit };
          checkEdgeSignature(signature, call, header(req, TIMESTAMP_HEADER), header(req, SIGNATURE_HEADER));
        }
        const input: InferenceInput = {
          contentType: header(req, "content-type"),
          jsonLength: header(req, INFERENCE_HEADER_LENGTH),
          body,
          contentEncoding: header(req, "content-encoding"),
          receivedUs,
          deadlineUs,
          admitted,
          trace,
          audit,
        };
        if (route.kind === "classify") answers.classifyTo(input, succeed, fail);
        else answering = answers.infer(input, route.model, "version" in route ? route.version : undefined);
      } catch (err) {
        fail(err);
        return;
      }
      answering?.then(succeed, fail);
    });
  }

  return (req, res) => {
    const route = fastRoute({
      method: req.method,
      url: req.url,
      host: req.headers.host,
      transferEncoding: req.headers["transfer-encoding"],
    });
    if (route) serve(req, res, route);
    else fallback(req, res);
  };
}
