/**
 * What the serving code reports about itself. Only metrics.ts knows these become Prometheus series; the
 * batcher, the repository and the routes call this interface.
 */

/** How an inference request that reached a model ended. */
export type InferenceOutcome = "success" | "rejected" | "expired" | "failed";

/** Reports for one model version (label lookups done once, outside the request path). */
export interface ModelRecorder {
  /** A request was accepted by the model (+1) or answered (-1). */
  pending(delta: 1 | -1): void;
  /** Requests waiting in the batcher's queue now. */
  queueDepth(depth: number): void;
  /** A request left the queue for a run after waiting `seconds`. */
  queued(seconds: number): void;
  /** One `session.run` of `rows` rows, gathered from `requests` requests, took `seconds`. */
  executed(rows: number, seconds: number, requests: number): void;
  /** A request ended, `seconds` after the pool received it. */
  request(outcome: InferenceOutcome, seconds: number): void;
  /** Whether this version serves. */
  ready(ready: boolean): void;
  /**
   * The version is released (its last request answered): its gauges stop reporting, and their series go
   * unless another instance of the same version reports them. Counters and histograms keep their totals.
   */
  dispose(): void;
}

export interface Recorder {
  model(name: string, version: string): ModelRecorder;
  rollout(name: string): RolloutRecorder;
  /** A load attempt of a model ended. */
  modelLoad(name: string, outcome: "success" | "failure"): void;
  /** Whether model files must carry a valid signature (a public key is configured), or are served unsigned. */
  modelSignatures(required: boolean): void;
  /** The execution provider sessions run on. */
  executionProvider(provider: string): void;
  /** Any HTTP response, by the route pattern that answered it. */
  httpResponse(method: string, route: string, status: number): void;
  /** Any gRPC call answered, by method (`ModelInfer`, `Check`, ...) and status code name (`OK`, `NOT_FOUND`). */
  grpcResponse(method: string, code: string): void;
}

/** Reports of one model's rollouts (only metrics.ts knows they become `edgecascade_rollout_*` series). */
export interface RolloutRecorder {
  /** A rollout of `candidate` started: earlier candidates' percent series go. */
  started(candidate: string): void;
  /** The share of requests `candidate` answers now. */
  percent(candidate: string, percent: number): void;
  rolledBack(): void;
  promoted(): void;
  /** A live request's copy for the shadow: run, or dropped because the shadow queue was full. */
  shadow(outcome: "queued" | "dropped"): void;
  /** Rows compared in shadow, and how many of them the versions labelled differently. */
  compared(rows: number, disagreements: number): void;
}
