import { setTimeout as sleep } from "node:timers/promises";
import { agreeingRows, parseAuditLabels } from "../protocol/audit.ts";
import { encodeInferResponse, readInferBody, wantsBinaryOutput } from "../protocol/binary-tensor.ts";
import { parseClassifyRequest, readClassifyInputs } from "../protocol/classify-request.ts";
import { decodeBody, requestCoding } from "../protocol/content-coding.ts";
import { ServingError } from "../protocol/errors.ts";
import { MODEL_LOAD_HEADER, MODEL_VERSION_HEADER, ROLLOUT_HEADER, SERVED_BY_HEADER } from "../protocol/headers.ts";
import { checkNamedModel, type InferCall, parseInferRequest, readInferInputs } from "../protocol/infer-request.ts";
import { parseJsonBody } from "../protocol/json-body.ts";
import type { ModelIo } from "../protocol/model-config.ts";
import { toInferResponse, toPredictions } from "../protocol/responses.ts";
import { formatRolloutHeader } from "../protocol/rollout/header.ts";
import { timingMs } from "../protocol/server-timing.ts";
import type { InputRows } from "../protocol/tensor.ts";
import type { ClassifyResponse, ServedBy } from "../protocol/types.ts";
import type { AppDeps } from "./app-context.ts";
import { nowUs } from "./clock.ts";
import type { Executed } from "./executor.ts";
import { float32Slab } from "./float32-slab.ts";
import type { Admitted } from "./middleware/admit-in-time.ts";
import type { Lease } from "./model-version.ts";
import { peerAnswers } from "./peers/peer-answers.ts";
import type { InferenceOutcome } from "./recorder.ts";
import { regionalServerTiming, simulatedDelayTiming } from "./server-timing.ts";
import type { RequestTrace } from "./tracing/request-tracing.ts";

/** An inference request as the answering code needs it, whichever HTTP layer read it. */
export interface InferenceInput {
  contentType: string | undefined;
  /** `Inference-Header-Content-Length` (v2 with binary tensor data, protocol/binary-tensor.ts). */
  jsonLength: string | undefined;
  /** The whole body, as received. */
  body: Uint8Array;
  /** `Content-Encoding` of the body (gzip, deflate or identity; protocol/content-coding.ts). Default identity. */
  contentEncoding?: string;
  /** When the pool received the request, on the `nowUs` clock. */
  receivedUs: number;
  /** When its caller stops waiting, on the same clock; `Infinity` for none. */
  deadlineUs: number;
  /** The request as admission admitted it: its tenant's flow (regional/tenants/), where its rows are told. */
  admitted: Pick<Admitted, "flow" | "rowsKnown">;
  /**
   * Its trace, when it may be traced (regional/tracing/): answering records the model, version and run in it.
   * Always present, undefined when not traced: one object shape for every request keeps the hot path's
   * property accesses monomorphic (conditional spreads here cost the pool a quarter of its throughput).
   */
  trace: RequestTrace | undefined;
  /** `x-edgecascade-audit` (protocol/audit.ts): the edge's labels; the call is an audit, not a request. */
  audit: string | undefined;
}

/**
 * When a request arrived, when its caller stops waiting, whose it is, and its trace: all the answering code needs of
 * its transport.
 */
export type InferenceClock = Pick<InferenceInput, "receivedUs" | "deadlineUs" | "admitted" | "trace">;

/** A v2 call's answer before encoding: the output `outputName` is `probs`, `[batch, classes]` row-major. */
export interface InferResult<T = undefined> {
  model: string;
  version: string;
  outputName: string;
  batch: number;
  classes: number;
  probs: Float32Array;
  /** Server-Timing, served-by, model version and rollout (names lower case). */
  headers: Record<string, string>;
  /** What `prepare` returned. */
  prepared: T;
}

/** A 200 answer: its headers (names lower case) and body. */
export interface InferenceAnswer {
  headers: Record<string, string>;
  body: string | Uint8Array<ArrayBuffer>;
}

function outcomeOf(err: unknown): InferenceOutcome {
  if (err instanceof ServingError && err.code === "deadline_exceeded") return "expired";
  if (err instanceof ServingError && err.code === "queue_full") return "rejected";
  return "failed";
}

/**
 * `/v1/classify` and v2 `infer`, apart from HTTP: parse, lease the serving version, validate the rows
 * against it, run them through its batcher, count the outcome and build the answer. Failures are thrown as
 * `ServingError`s. Both HTTP layers answer through this (the node:http fast path and the Hono routes, see
 * regional/fast-path/), so they cannot drift apart.
 */
export function inferenceAnswers(deps: AppDeps) {
  const { repository, rollouts, limits, tenants } = deps;
  const servedBy: ServedBy = `regional:${deps.region}`;
  const delayTiming = simulatedDelayTiming(deps.simulatedDelayMs);
  /** Where requests' rows are written: views of shared buffers rather than a buffer per request. */
  const rowArrays = float32Slab();
  const onPeers = peerAnswers(deps, servedBy, rowArrays);

  /**
   * Start `rows` on the leased version: pending until `succeeded` or `failed` counts its end. Not an async
   * function, and its end is handled by the caller's one `then`: on the pool's hot path every promise layer is
   * an allocation and a microtask per request.
   */
  function start(input: InferenceClock, lease: Lease, rows: InputRows): Promise<Executed> {
    lease.model.recorder.pending(1);
    try {
      if (deps.simulatedDelayMs > 0) {
        return sleep(deps.simulatedDelayMs).then(() => lease.model.infer(rows, input.deadlineUs, input.admitted.flow));
      }
      return lease.model.infer(rows, input.deadlineUs, input.admitted.flow);
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /** What answering learnt, into the request's trace (when it has one). */
  function traced(input: InferenceClock, lease: Lease, rows: InputRows, result?: Executed, audit?: number[]): void {
    const trace = input.trace;
    if (!trace) return;
    trace.model = lease.model.name;
    trace.version = lease.model.version;
    trace.rows = rows.batch;
    if (result) trace.run = result;
    if (audit) trace.audit = true;
  }

  /**
   * A started run that failed: count its outcome (a failure also at the rollout's seam) and rethrow. An audit's
   * failure is no request's: it counts nowhere but in the pending gauge.
   */
  function failed(input: InferenceClock, lease: Lease, rows: InputRows, err: unknown, audit?: number[]): never {
    traced(input, lease, rows, undefined, audit);
    lease.model.recorder.pending(-1);
    if (audit) throw err;
    const outcome = outcomeOf(err);
    if (outcome === "failed") rollouts.afterAnswer(lease.model, rows, false);
    const seconds = (nowUs() - input.receivedUs) / 1e6;
    lease.model.recorder.request(outcome, seconds);
    tenants.recorder(input.admitted.flow).request(outcome, seconds);
    throw err;
  }

  /**
   * A started run that succeeded: the rollout's seam, the count, and the answer's Server-Timing, served-by, model
   * version and rollout headers, added to `headers` (in that order) and returned. Server-Timing is written by hand
   * (`regionalServerTiming`) rather than by hono/timing, whose per-metric quoting and bookkeeping cost about as
   * much CPU as serializing the answer (profiled at ~10k req/s).
   */
  function succeeded(
    input: InferenceClock,
    lease: Lease,
    rows: InputRows,
    result: Executed,
    headers: Record<string, string>,
    audit?: number[],
  ): Record<string, string> {
    const { recorder, version } = lease.model;
    let endUs: number;
    try {
      // The rollout's seam: count the answer and hand a copy to the shadow runner (which runs later). An audit is
      // no live answer: it is neither rollout evidence nor a shadow copy.
      if (!audit) rollouts.afterAnswer(lease.model, rows, true);
      endUs = nowUs();
      const { queueMs, computeMs, batchRows } = result;
      const totalMs = (endUs - input.receivedUs) / 1000;
      headers["server-timing"] = regionalServerTiming(delayTiming, { queueMs, computeMs, batchRows, totalMs });
      headers[SERVED_BY_HEADER] = servedBy;
      headers[MODEL_VERSION_HEADER] = version;
      const rollout = rollouts.view(lease.model.name);
      if (rollout) headers[ROLLOUT_HEADER] = formatRolloutHeader(rollout);
    } catch (err) {
      return failed(input, lease, rows, err, audit);
    }
    traced(input, lease, rows, result, audit);
    recorder.pending(-1);
    const classes = lease.model.io.classes;
    if (audit) {
      // Counted as an audit only: never in the request count, the latency histograms, the tenant's series or drift.
      const agreeing = agreeingRows(result.probs, audit, classes);
      recorder.audited(agreeing, audit.length - agreeing);
    } else {
      const seconds = (endUs - input.receivedUs) / 1e6;
      recorder.request("success", seconds);
      tenants.recorder(input.admitted.flow).request("success", seconds);
      recorder.predicted(result.probs, rows.batch, classes);
    }
    return headers;
  }

  /**
   * The body decoded from its Content-Encoding, within the body limit once decoded (413 past it). A plain body,
   * nearly every one, is handed back as it is, without a promise on the way.
   */
  const decoded = (input: InferenceInput): Uint8Array | Promise<Uint8Array> => {
    const coding = requestCoding(input.contentEncoding);
    return coding === "identity" ? input.body : decodeBody(input.body, coding, limits.maxBodyBytes);
  };

  /**
   * A v2 call checked by `parseInferRequest`, run on `model`: lease, validate the rows against the version
   * (with `binary`, the bytes of inputs sent as binary data), rollout seam, batcher. `prepare` runs on the
   * version's inputs and outputs before the rows are queued, so a request it refuses never runs; its result comes back
   * as `prepared`. Each protocol encodes the result its own way: HTTP JSON or binary (`infer`), gRPC
   * (regional/grpc/).
   */
  async function inferRows<T>(
    clock: InferenceClock,
    call: InferCall,
    binary: Uint8Array,
    model: string,
    version: string | undefined,
    prepare: (io: ModelIo) => T,
  ): Promise<InferResult<T>> {
    if (clock.trace && call.request.id !== undefined) clock.trace.requestId = call.request.id;
    const peer = deps.peers?.ownerOf(model);
    const onPeer = peer && (await onPeers.infer(peer, clock, call, binary, model, version, prepare));
    if (onPeer) return onPeer;
    const askedUs = nowUs();
    const leased = repository.lease(model, version, clock.deadlineUs);
    const acquired = leased instanceof Promise ? await leased : leased;
    const initial: Record<string, string> = {};
    if (leased instanceof Promise) initial[MODEL_LOAD_HEADER] = timingMs((nowUs() - askedUs) / 1000);
    let lease = acquired;
    try {
      const rows = readInferInputs(call, acquired.model.io, limits, binary, rowArrays);
      clock.admitted.rowsKnown(rows.batch);
      lease = rollouts.route(acquired, rows, version !== undefined);
      const { io } = lease.model;
      const prepared = prepare(io);
      const ran = lease;
      let result: Executed;
      try {
        result = await start(clock, ran, rows);
      } catch (err) {
        failed(clock, ran, rows, err);
      }
      const headers = succeeded(clock, ran, rows, result, initial);
      return {
        model,
        version: lease.model.version,
        outputName: io.outputName,
        batch: rows.batch,
        classes: io.classes,
        probs: result.probs,
        headers,
        prepared,
      };
    } finally {
      lease.release();
    }
  }

  /**
   * `/v1/classify` of a decoded body: one `then` on the run, the lease released once it ends, then `answered` or
   * `failedWith` called (a request refused before the run throws here instead).
   */
  function classifyBody(
    input: InferenceInput,
    body: Uint8Array,
    answered: (answer: InferenceAnswer) => void,
    failedWith: (err: unknown) => void,
  ): void {
    const call = parseClassifyRequest(parseJsonBody(body, input.contentType));
    if (input.trace && call.id !== undefined) input.trace.requestId = call.id;
    const peer = deps.peers?.ownerOf(call.model);
    if (peer) {
      onPeers.classify(peer, input, call, answered, failedWith, () => classifyHere(input, call, answered, failedWith));
      return;
    }
    classifyHere(input, call, answered, failedWith);
  }

  /** `/v1/classify` of a parsed call on this worker: its lease (at once, or after a load on demand), then the run. */
  function classifyHere(
    input: InferenceInput,
    call: ReturnType<typeof parseClassifyRequest>,
    answered: (answer: InferenceAnswer) => void,
    failedWith: (err: unknown) => void,
  ): void {
    const leased = repository.lease(call.model, call.version, input.deadlineUs);
    if (leased instanceof Promise) {
      // A model loaded on demand: its first requests wait for the load (within their deadline), and say so.
      const askedUs = nowUs();
      leased.then((acquired) => {
        try {
          classifyLeased(input, call, acquired, answered, failedWith, (nowUs() - askedUs) / 1000);
        } catch (err) {
          failedWith(err);
        }
      }, failedWith);
      return;
    }
    classifyLeased(input, call, leased, answered, failedWith);
  }

  /** `/v1/classify` of a parsed call on the version it leased. */
  function classifyLeased(
    input: InferenceInput,
    call: ReturnType<typeof parseClassifyRequest>,
    acquired: Lease,
    answered: (answer: InferenceAnswer) => void,
    failedWith: (err: unknown) => void,
    loadWaitMs?: number,
  ): void {
    let lease = acquired;
    let rows: InputRows;
    let audit: number[] | undefined;
    try {
      rows = readClassifyInputs(call.inputs, acquired.model.io, limits, rowArrays);
      input.admitted.rowsKnown(rows.batch);
      if (input.audit !== undefined) audit = parseAuditLabels(input.audit, rows.batch, acquired.model.io.classes);
      // The rollout's seam: during a canary the input's hash may pick the candidate.
      lease = rollouts.route(acquired, rows, call.version !== undefined);
    } catch (err) {
      lease.release();
      throw err;
    }
    const leased = lease;
    start(input, leased, rows).then(
      (result) => {
        let answer: InferenceAnswer;
        try {
          const initial: Record<string, string> = { "content-type": "application/json" };
          if (loadWaitMs !== undefined) initial[MODEL_LOAD_HEADER] = timingMs(loadWaitMs);
          const headers = succeeded(input, leased, rows, result, initial, audit);
          const { io, version } = leased.model;
          const response: ClassifyResponse = {
            model: call.model,
            version,
            ...(call.id !== undefined ? { id: call.id } : {}),
            predictions: toPredictions(result.probs, rows.batch, io.labels),
            servedBy,
          };
          answer = { headers, body: JSON.stringify(response) };
        } catch (err) {
          leased.release();
          failedWith(err);
          return;
        }
        leased.release();
        answered(answer);
      },
      (err: unknown) => {
        let thrown: unknown;
        try {
          failed(input, leased, rows, err, audit);
        } catch (counted) {
          thrown = counted;
        }
        leased.release();
        failedWith(thrown);
      },
    );
  }

  /**
   * `/v1/classify`, its answer or error handed to the callbacks rather than a promise: the fast path passes its
   * own, so its answer takes no promise of its own on the way (each is an allocation and a microtask per request).
   */
  function classifyTo(
    input: InferenceInput,
    answered: (answer: InferenceAnswer) => void,
    failedWith: (err: unknown) => void,
  ): void {
    try {
      const raw = decoded(input);
      if (raw instanceof Uint8Array) classifyBody(input, raw, answered, failedWith);
      else raw.then((body) => classifyBody(input, body, answered, failedWith)).catch(failedWith);
    } catch (err) {
      failedWith(err);
    }
  }

  return {
    classify(input: InferenceInput): Promise<InferenceAnswer> {
      return new Promise((resolve, reject) => classifyTo(input, resolve, reject));
    },

    classifyTo,

    async infer(input: InferenceInput, model: string, version?: string): Promise<InferenceAnswer> {
      const raw = decoded(input);
      const body = raw instanceof Uint8Array ? raw : await raw;
      const { json, binary } = readInferBody(body, input.jsonLength, input.contentType);
      const call = parseInferRequest(json);
      checkNamedModel(call, model, version);
      const answered = await inferRows(input, call, binary, model, version, (io) =>
        wantsBinaryOutput(call.request, io.outputName),
      );
      const binaryOutput = answered.prepared;
      const response = toInferResponse({ ...answered, id: call.request.id, binary: binaryOutput });
      const encoded = encodeInferResponse(response, answered.probs, binaryOutput);
      return { headers: { ...encoded.headers, ...answered.headers }, body: encoded.body };
    },

    inferRows,
  };
}

export type InferenceAnswers = ReturnType<typeof inferenceAnswers>;
