import { createServer, type Server, STATUS_CODES } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { getRequestListener, RequestError } from "@hono/node-server";
import { asServingError } from "../hono-shared/hono-error.ts";
import { errorResponse } from "../protocol/error-answer.ts";
import { BadRequest, RateLimited, ServingError } from "../protocol/errors.ts";
import { DEFAULT_LIMITS } from "../protocol/limits.ts";
import { importModelPublicKey } from "../protocol/model-signature.ts";
import { S3Registry } from "../registry/s3-registry.ts";
import { type AppDeps, createRegionalApp } from "./app.ts";
import { DynamicBatcher } from "./batcher.ts";
import { nowUs } from "./clock.ts";
import { chooseProvider } from "./execution-provider.ts";
import type { ExecutorContext, ExecutorFactory } from "./executor.ts";
import { inferenceFastPath } from "./fast-path/listener.ts";
import { type GrpcListener, listenGrpc } from "./grpc/server.ts";
import { inferenceAnswers } from "./inference-answers.ts";
import type { Logger } from "./log.ts";
import { createMetrics, type Metrics } from "./metrics.ts";
import { inferenceAdmission } from "./middleware/admit-in-time.ts";
import { localControl, type ModelControl } from "./model-control.ts";
import type { ModelStatistics } from "./model-stats.ts";
import type { RegionalOptions } from "./options.ts";
import { type PeerPlacement, Peers } from "./peers/peers.ts";
import { RefusedBodyResponse } from "./refused-body.ts";
import { RegistryFollower } from "./registry/follower.ts";
import { type LoadReport, ModelRepository, type RepositoryOptions } from "./repository.ts";
import { Rollouts } from "./rollout/rollouts.ts";
import { checkProvider } from "./session.ts";
import { TenantScheduler } from "./tenants/tenant-scheduler.ts";
import { tenantTable } from "./tenants/tenant-table.ts";
import { poolTracing } from "./tracing/pool-tracing.ts";
import type { RequestTracing } from "./tracing/request-tracing.ts";
import { delayedVersions } from "./version-delay.ts";

/** Things an embedding process (the CLI, a cluster worker, a test, a benchmark) supplies. */
export interface ServerHooks {
  log: Logger;
  /** What `/metrics` answers; default: this process's metrics. A cluster worker aggregates all workers'. */
  metricsText?: (local: Metrics) => () => Promise<string>;
  /** What `/v2/models/stats` answers; default: this process's statistics. A cluster worker sums all workers'. */
  statistics?: (local: Metrics) => () => Promise<ModelStatistics[]>;
  /** Default: the dynamic batcher. Benchmarks swap in their baselines. */
  executor?: ExecutorFactory;
  /** What admin calls go through; default: this process's. A cluster worker relays them to every worker. */
  control?: (local: ModelControl) => ModelControl;
  /** Why the pool is not ready beyond this process (a cluster's other workers); default: never. */
  poolNotReady?: () => string | undefined;
  /** Overrides of the load checks and of the retry backoff (tests). */
  loadChecks?: Pick<RepositoryOptions, "warmupBudgetMs" | "accuracyTolerance" | "retryBackoff">;
  /**
   * A cluster worker's place in its pod (its slot, the number of workers, the directory of their sockets): with
   * `--model-placement hashed` and models loaded on demand, each model's requests go to its owning worker.
   */
  placement?: PeerPlacement;
  /** What runs each version's rows (version-loader.ts); default: its session, or `--version-delay-ms`'s wrapper. */
  wrapSession?: RepositoryOptions["wrapSession"];
  /** The milliseconds shadow runs are timed by (rollout/shadow.ts); default `performance.now`. */
  shadowClock?: () => number;
}

export interface RegionalServer {
  url: string;
  port: number;
  /** The gRPC service's port; undefined when `--grpc-port off`. */
  grpcPort: number | undefined;
  repository: ModelRepository;
  rollouts: Rollouts;
  metrics: Metrics;
  /** Resolves when every model's first load has ended, successfully or not. */
  loaded: Promise<void>;
  /** Resolves the first time every model serves (readiness 200). */
  firstReady: Promise<void>;
  /** SIGHUP: reload every model from disk. */
  reload(): Promise<PromiseSettledResult<LoadReport>[]>;
  /** The pool's tracing (`TRACING_OFF` without OTEL_* exporter settings); `flush()` exports what has ended. */
  tracing: RequestTracing;
  /**
   * SIGTERM: readiness turns false, after `shutdownDelayMs` the listeners (HTTP, gRPC) close, every accepted request is
   * answered, then the sessions are released. Idempotent.
   */
  shutdown(): Promise<void>;
}

/**
 * `--simulated-run-ms`: every batch run waits first, as on an accelerator whose batch latency is fixed (tests and
 * validation runs: the pool's capacity is then the device's, not the shared CPU's).
 */
function simulatedDevice(context: ExecutorContext, options: RegionalOptions): ExecutorContext {
  const ms = options.simulation.simulatedRunMs;
  if (ms === 0) return context;
  return { ...context, run: (data, batch) => sleep(ms).then(() => context.run(data, batch)) };
}

/** "Come back in a second", with the status --queue-full-status configures (429 by default, or 503). */
function busyError(status: 429 | 503, code: string, message: string): ServingError {
  return status === 429
    ? new RateLimited(message, 1, code)
    : new ServingError(503, code, message, { "retry-after": "1" });
}

function queueFullError(status: 429 | 503): () => ServingError {
  return () => busyError(status, "queue_full", "the model's queue is full; retry shortly");
}

/**
 * A best-effort request refused while reservations keep the rest of the deadline: always 429 (the tenant sends
 * more than the pool can take beside the reservations), with Retry-After; the edge answers it with its own model,
 * degraded `tenant-shed`, and tries no other region.
 */
function tenantShedError(waitMs: number, deadlineMs: number, tenant: string): ServingError {
  return new RateLimited(
    `tenant "${tenant}" is best-effort and the pool is serving reservations first: about ${Math.round(waitMs)} ms of work ahead, the deadline is ${deadlineMs} ms; retry shortly`,
    1,
    "tenant_shed",
  );
}

function overloadedError(status: 429 | 503): (waitMs: number, deadlineMs: number) => ServingError {
  return (waitMs, deadlineMs) =>
    busyError(
      status,
      "overloaded",
      `the pool is overloaded: about ${Math.round(waitMs)} ms of work ahead, the deadline is ${deadlineMs} ms; retry shortly`,
    );
}

/** Malformed HTTP never reaches Hono; answer it in the same JSON shape instead of Node's bare 400. */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket): void {
  if (lingering.has(socket)) return; // already answered: what follows is dropped until the close
  if (err.code === "ECONNRESET" || !socket.writable) {
    socket.destroy();
    return;
  }
  lingering.add(socket);
  const status = err.code === "HPE_HEADER_OVERFLOW" ? 431 : 400;
  const body = JSON.stringify({ error: `malformed HTTP request (${err.code ?? "parse error"})`, code: "bad_request" });
  socket.write(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
  );
  // Lingering close: read and drop what the client is still sending (the rest of its headers, its body) and
  // end the connection once it has been quiet for a moment. Ending at once with unread bytes makes the kernel
  // answer the client's next bytes with a reset, which can throw away the answer before the client reads it
  // (the fuzz run's 431s to huge headers followed by a body).
  let quiet: ReturnType<typeof setTimeout> | undefined;
  const endWhenQuiet = () => {
    clearTimeout(quiet);
    quiet = setTimeout(() => socket.end(), QUIET_MS);
  };
  socket.on("data", endWhenQuiet).resume();
  endWhenQuiet();
  setTimeout(() => socket.destroy(), LINGER_MS).unref();
}

/** Connections answered as malformed HTTP, being drained before their close. */
const lingering = new WeakSet<Socket>();
/** A connection refused as malformed HTTP is ended once the client has sent nothing for this long, in ms. */
const QUIET_MS = 100;
/** ... and closed after this long whatever the client does, in ms. */
const LINGER_MS = 2000;

/**
 * Start a regional pool in this process: choose the execution provider, find the models, listen (liveness
 * answers at once), then load and check every model (readiness answers 200 when they serve).
 */
export async function startRegionalServer(options: RegionalOptions, hooks: ServerHooks): Promise<RegionalServer> {
  const { log } = hooks;
  const metrics = createMetrics();
  let announceReady = () => {};
  const firstReady = new Promise<void>((resolve) => {
    announceReady = resolve;
  });
  const decision = await chooseProvider(options.ep, checkProvider);
  if (decision.fallbackReason) {
    log("warn", `execution provider: cpu (--ep ${options.ep}: cuda did not load)`, { reason: decision.fallbackReason });
  } else {
    log("info", `execution provider: ${decision.provider}`, { ep: options.ep });
  }
  metrics.recorder.executionProvider(decision.provider);

  const tenants = new TenantScheduler(
    tenantTable(options.tenants),
    metrics.recorder,
    DEFAULT_LIMITS.maxBatch,
    nowUs(),
    1 / options.workers,
  );
  const publicKey = options.modelPublicKey ? await importModelPublicKey(options.modelPublicKey) : undefined;
  metrics.recorder.modelSignatures(!!publicKey);
  if (publicKey) {
    log("info", `model signatures: required, key ${publicKey.id}`, { modelSigningKey: publicKey.id });
  } else {
    log(
      "warn",
      "MODEL SIGNATURES NOT VERIFIED: serving unsigned models (no --model-public-key / MODEL_PUBLIC_KEY); model files are only checked against config.json's sha256",
      { modelSigningKey: null },
    );
  }

  // With --registry, the models are what the registry serves, fetched and checked into this process's directory.
  let follower: RegistryFollower | undefined;
  if (options.registry) {
    follower = new RegistryFollower({
      registry: new S3Registry({ url: options.registry, endpoint: options.registryEndpoint }),
      dir: join(options.registryCache ?? join(tmpdir(), "edgecascade-registry"), String(process.pid)),
      publicKey: publicKey!,
      pollMs: options.registryPollMs,
      log,
      recorder: metrics.recorder.registry(options.registry),
    });
    await follower.initialSync();
  }

  const repository = new ModelRepository(
    {
      modelsDir: follower?.dir ?? options.modelsDir,
      provider: decision.provider,
      maxBatch: options.maxBatch,
      maxQueue: options.maxQueue,
      maxQueueDelayUs: options.maxQueueDelayUs,
      queueFull: queueFullError(options.queueFullStatus),
      // The batcher serves the pool's tenants fairly; benchmarks' baselines take none.
      executor: hooks.executor ?? ((context) => new DynamicBatcher(simulatedDevice(context, options), tenants)),
      onFirstReady: () => announceReady(),
      loadPolicy: options.loadPolicy,
      pinned: options.pinnedModels,
      memoryBudgetBytes: options.modelMemoryMb * 2 ** 20,
      publicKey,
      wrapSession: hooks.wrapSession ?? delayedVersions(options.simulation.versionDelayMs),
      ...hooks.loadChecks,
    },
    metrics.recorder,
    log,
  );
  await repository.discover();
  const rollouts = new Rollouts(repository, metrics.recorder, log, hooks.shadowClock);

  const tracing = poolTracing(options, options.region, log, metrics.recorder.tracing);

  let draining = false;
  const metricsText = hooks.metricsText?.(metrics) ?? metrics.text;
  const local = localControl(repository, rollouts);
  const deps: AppDeps = {
    region: options.region,
    repository,
    rollouts,
    control: hooks.control?.(local) ?? local,
    recorder: metrics.recorder,
    provider: decision.provider,
    modelSigningKey: publicKey?.id,
    metricsText,
    statistics: hooks.statistics?.(metrics) ?? (async () => metrics.statistics()),
    metricsContentType: metrics.contentType,
    draining: () => draining,
    poolNotReady: hooks.poolNotReady ?? (() => undefined),
    log,
    limits: DEFAULT_LIMITS,
    maxQueueDelayUs: options.maxQueueDelayUs,
    simulatedDelayMs: options.simulation.delayMs,
    admission: inferenceAdmission({
      minInFlight: options.maxBatch,
      refuse: overloadedError(options.queueFullStatus),
      tenants,
      shed: tenantShedError,
      bestEffortWaitShare: options.bestEffortWaitPercent / 100,
    }),
    tenants,
    tracing,
    sharedSecret: options.sharedSecret,
    adminToken: options.adminToken,
  };
  let peerServer: Server | undefined;
  if (hooks.placement && options.modelPlacement === "hashed" && repository.policy === "on-demand") {
    const peers = new Peers(hooks.placement, (model) => repository.runsHere(model), log);
    deps.peers = peers;
    // What the other workers hand this one: their requests' rows for the models it owns, already checked by
    // them (the edge's signature, the simulated distance); counted here as the model's, not again as HTTP.
    const peerDeps: AppDeps = {
      ...deps,
      peers: undefined,
      sharedSecret: undefined,
      simulatedDelayMs: 0,
      recorder: { ...metrics.recorder, httpResponse: () => {} },
    };
    const peerAnswers = inferenceAnswers(peerDeps);
    const peerApp = createRegionalApp(peerDeps, peerAnswers);
    peerServer = await peers.listen(
      inferenceFastPath({ deps: peerDeps, answers: peerAnswers, fallback: getRequestListener(peerApp.fetch) }),
    );
    log("info", "model placement: hashed; this worker owns its share of the models loaded on demand", {
      slot: hooks.placement.slot,
      workers: hooks.placement.workers,
    });
  }
  const answers = inferenceAnswers(deps);
  const app = createRegionalApp(deps, answers);

  const honoListener = getRequestListener(app.fetch, {
    // HTTP/1.0 clients (some load balancers' health checks) may omit Host; routes never read it.
    hostname: "localhost",
    // Requests @hono/node-server refuses before Hono sees them (bad Host, backslash in the path): same JSON.
    errorHandler(err) {
      const known = asServingError(
        err instanceof RequestError ? new BadRequest(`malformed request: ${err.message}`) : err,
      );
      if (!known) log("error", "unhandled error", { error: (err as Error).stack ?? String(err) });
      return errorResponse(known ?? err);
    },
  });
  // The hot inference POSTs on plain node:http, everything else (and what the fast path declines) through Hono.
  // A 413 to a client still sending its body is read by that client (refused-body.ts), on either path.
  const server = createServer(
    { ServerResponse: RefusedBodyResponse },
    inferenceFastPath({ deps, answers, fallback: honoListener }),
  );
  server.on("clientError", answerClientError);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host === "0.0.0.0" || options.host === "::" ? "127.0.0.1" : options.host;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  let grpc: GrpcListener | undefined;
  if (options.grpcPort !== undefined) {
    const listen = { host: options.host, port: options.grpcPort, maxMessageBytes: deps.limits.maxBodyBytes };
    grpc = await listenGrpc(listen, { deps, answers }).catch((err: Error) => {
      server.close();
      throw new Error(`gRPC port ${options.grpcPort}: ${err.message}`);
    });
  }
  log("info", "listening", { url, port, grpcPort: grpc?.port, region: options.region });

  const loaded = repository.loadAll().then(() => follower?.follow(repository, rollouts));
  let stopping: Promise<void> | undefined;

  return {
    url,
    port,
    grpcPort: grpc?.port,
    repository,
    rollouts,
    metrics,
    loaded,
    firstReady,
    // With a registry, SIGHUP reads it at once (and applies what changed); without, every model is read from disk.
    reload: () => (follower ? follower.pollNow().then(() => []) : repository.reloadAll()),
    tracing,
    shutdown() {
      stopping ??= (async () => {
        draining = true;
        log("info", "draining: readiness is false", { shutdownDelayMs: options.shutdownDelayMs });
        if (options.shutdownDelayMs > 0) await sleep(options.shutdownDelayMs);
        await Promise.all([
          new Promise<void>((resolve) => {
            server.close(() => resolve());
            server.closeIdleConnections();
          }),
          grpc?.drain(),
          peerServer &&
            new Promise<void>((resolve) => {
              peerServer.close(() => resolve());
              peerServer.closeIdleConnections();
            }),
        ]);
        follower?.stop();
        await deps.peers?.close();
        await repository.close();
        await follower?.remove();
        // The last spans: exported (or given up on by the exporter's timeout) before the process ends.
        await tracing
          .shutdown()
          .catch((err: Error) => log("warn", "tracing: last spans not exported", { reason: err.message }));
        log("info", "drained: every accepted request was answered");
      })();
      return stopping;
    },
  };
}
