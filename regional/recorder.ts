import type { StepEvidence } from "../protocol/rollout/evidence.ts";
import type { LoadTrigger } from "./model-lifecycle.ts";

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
   * Rows answered: `probs` is `[rows, classes]`; each row counts for its predicted class and its top
   * probability (drift, protocol/drift.ts). Live answers only: no audits, no shadow runs.
   */
  predicted(probs: ArrayLike<number>, rows: number, classes: number): void;
  /**
   * An audit's rows (an edge answer re-asked, docs/observability.md): how many this version labelled as the edge
   * did and how many not. Audits count here only, never as requests.
   */
  audited(agreeing: number, disagreeing: number): void;
  /** What the version's config.json says it did on held-out rows (reported once, when it is built). */
  baseline(baseline: VersionBaseline): void;
  /**
   * The version is released (its last request answered): its gauges stop reporting, and their series go
   * unless another instance of the same version reports them. Counters and histograms keep their totals.
   */
  dispose(): void;
}

/**
 * How a tenant's request ended at the pool: as a model's request did, or refused by admission before its body was
 * read: `shed` (best-effort while reservations keep the rest of the deadline), `overloaded` (not even a request
 * within a reservation could be answered in time).
 */
export type TenantOutcome = InferenceOutcome | "shed" | "overloaded";

/** Reports for one tenant of the pool (regional/tenants/); its label is the tenant's name, `direct` or `other`. */
export interface TenantRecorder {
  /** A request ended; `seconds` after the pool received it, for those that reached a model. */
  request(outcome: TenantOutcome, seconds?: number): void;
  /** `rows` rows ran, within the tenant's reservation or as best-effort. */
  rows(rows: number, reserved: boolean): void;
}

/** What a version's config.json says it did on its held-out rows, as the metrics need it. */
export interface VersionBaseline {
  /** The class labels, in output order. */
  labels: readonly string[];
  /** Held-out rows per predicted class (`heldout.classCounts`): drift's baseline. */
  classCounts?: readonly number[];
  /**
   * For an edge variant: the model it stands for, and its rows answered and agreeing with that model at import
   * (`heldout.edgeAnswered`, `edgeAgreeing`): the live audit's baseline.
   */
  cascade?: { standsFor: string; answered: number; agreeing: number };
}

/** Work off the request path whose failure no request answers for: a rollout's shadow run, a retired version's release. */
export type BackgroundTask = "shadow-run" | "release";

export interface Recorder {
  model(name: string, version: string): ModelRecorder;
  /** A tenant's reporter, made once per tenant of the configuration; its class and reservation are reported as given. */
  tenant(name: string, tenantClass: "guaranteed" | "best-effort", reservedRowsPerS: number): TenantRecorder;
  rollout(name: string): RolloutRecorder;
  /** Reports of the model registry this pool follows (regional/registry/), `s3://bucket/prefix`. */
  registry(where: string): RegistryRecorder;
  /** The span thread's losses (regional/tracing/). */
  tracing: TracingRecorder;
  /** A `task` of `version` of `model` failed (its reason is logged where it failed). */
  backgroundFailure(task: BackgroundTask, model: string, version: string): void;
  /** A load attempt of a model ended. */
  modelLoad(name: string, outcome: "success" | "failure"): void;
  /** A load succeeded after `seconds` (file check, session, warm-up, fixture), started for `trigger`. */
  modelLoadTime(trigger: LoadTrigger, seconds: number): void;
  /** A model's serving version was evicted to make room within the memory budget. */
  modelEvicted(name: string): void;
  /** Where the repository's memory figures are read from, at each scrape. */
  modelMemory(read: () => ModelMemory): void;
  /** Whether model files must carry a valid signature (a public key is configured), or are served unsigned. */
  modelSignatures(required: boolean): void;
  /** The execution provider sessions run on. */
  executionProvider(provider: string): void;
  /** Any HTTP response, by the route pattern that answered it. */
  httpResponse(method: string, route: string, status: number): void;
  /** Any gRPC call answered, by method (`ModelInfer`, `Check`, ...) and status code name (`OK`, `NOT_FOUND`). */
  grpcResponse(method: string, code: string): void;
}

/** The repository's memory and models, as a scrape reads them. */
export interface ModelMemory {
  /** What the loaded (and retiring) versions are counted as. */
  residentBytes: number;
  /** `--model-memory-mb`, in bytes; 0 without a budget (`--load-policy all`). */
  budgetBytes: number;
  /** Models with a version serving. */
  loaded: number;
  /** Models in the repository (less those unloaded by an operator). */
  available: number;
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
  /** Where the current step's evidence is read at scrape time (null without a running rollout), for Prometheus. */
  evidence(read: () => StepEvidence | null): void;
}

/** Reports of the registry follower (only metrics.ts knows they become `edgecascade_registry_*` series). */
export interface TracingRecorder {
  /** `requests` traced requests were dropped before becoming spans: the span thread was behind. */
  dropped(requests: number): void;
  /** An export of spans failed (refused by the collector, or not sent). */
  exportFailed(): void;
}

export interface RegistryRecorder {
  /** One poll of the registry: nothing changed, something did (and was applied), or the registry could not be read. */
  poll(outcome: "unchanged" | "changed" | "failed"): void;
  /** An object of `model` was refused: a file failing its checksum or signature, a config or served state that does not parse. */
  refused(model: string, reason: "checksum" | "signature" | "config" | "served"): void;
  /** The served state's revision this process follows for `model`. */
  following(model: string, revision: number): void;
}
