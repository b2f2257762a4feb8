import cluster from "node:cluster";
import { UsageError } from "../tools/cli/errors.ts";
import { simulationWarning } from "../tools/cli/flags.ts";
import { PEER_DIR_ENV, runPrimary, WORKER_SLOT_ENV, workerChannel } from "./cluster.ts";
import { jsonLogger } from "./log.ts";
import { HELP, parseCommandLine, type RegionalOptions } from "./options.ts";
import { startRegionalServer } from "./server.ts";

/**
 * `npm run regional -- --port P --region NAME [...]` (see `--help`). With `--workers 1` the pool runs in this
 * process; with more, this process is the cluster primary and each worker runs the pool.
 */
async function main(): Promise<number | undefined> {
  let options: RegionalOptions;
  let simulating: string[];
  try {
    const parsed = parseCommandLine(process.argv.slice(2), process.env);
    if (parsed.help) {
      process.stdout.write(HELP);
      return 0;
    }
    ({ options, simulating } = parsed);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`regional: ${err.message}\n(see --help)\n`);
    return 2;
  }

  const clustered = options.workers > 1;
  const log = jsonLogger({
    region: options.region,
    pid: process.pid,
    ...(cluster.isWorker ? { worker: cluster.worker?.id } : {}),
  });
  // Once per pool: by the primary, or by the only process; workers would repeat it.
  const simulation = simulationWarning(simulating);
  if (simulation && cluster.isPrimary) log("warn", simulation, { simulation: options.simulation });
  if (clustered && cluster.isPrimary) return runPrimary(options.workers, log);

  // Signals are handled from the start: one that arrives while models still load (a pod deleted during its
  // start-up) ends the process with 0 at once, as there is nothing to drain yet, instead of killing it.
  let server: Awaited<ReturnType<typeof startRegionalServer>> | undefined;
  const stop = (signal: string) => {
    log("info", `${signal}: shutting down`);
    if (!server) process.exit(0);
    server.shutdown().then(
      () => process.exit(0),
      (err: Error) => {
        log("error", `${signal}: shutdown failed`, { reason: err.message });
        process.exit(1);
      },
    );
  };
  // Ctrl-C reaches the primary and the workers alike (one process group); the primary forwards SIGTERM too.
  // Both ask for the same drain, so repeats are harmless.
  process.on("SIGTERM", () => stop("SIGTERM"));
  process.on("SIGINT", () => stop("SIGINT"));
  // A worker whose primary is gone would serve unsupervised.
  if (cluster.isWorker) process.on("disconnect", () => stop("primary gone"));
  process.on("SIGHUP", () => {
    if (!server) {
      log("info", "SIGHUP during start-up: ignored, every model is being read from disk already");
      return;
    }
    log("info", "SIGHUP: reloading every model from disk");
    // Each model's failed load is logged by the repository; this catches what fails before any load (the
    // directory unreadable mid-rollout), which would otherwise be an unhandled rejection and end the process.
    server.reload().catch((err: Error) => {
      log("error", "SIGHUP: reload failed; the serving versions keep serving", { reason: err.message });
    });
  });

  let channel: ReturnType<typeof workerChannel> | undefined;
  const slot = process.env[WORKER_SLOT_ENV];
  const peerDir = process.env[PEER_DIR_ENV];
  const running = await startRegionalServer(options, {
    log,
    ...(clustered && slot !== undefined && peerDir !== undefined
      ? { placement: { slot: Number(slot), workers: options.workers, dir: peerDir } }
      : {}),
    ...(clustered
      ? {
          metricsText: (local) => {
            channel = workerChannel(local, log);
            return channel.metricsText;
          },
          // Called after metricsText: the channel exists.
          statistics: () => channel!.statistics,
          control: (local) => channel!.control(local),
          poolNotReady: () => (channel ? channel.poolNotReady() : "this worker has not joined its pool yet"),
        }
      : {}),
  });
  server = running;
  const { url, port, grpcPort } = running;
  channel?.listening(url, port);
  void running.firstReady.then(() =>
    channel ? channel.ready() : log("info", "ready", { url, port, grpcPort, workers: 1 }),
  );

  return undefined;
}

main().then(
  (code) => {
    if (code !== undefined) process.exitCode = code;
  },
  (err: Error) => {
    process.stderr.write(`regional: ${err.message}\n`);
    process.exit(1);
  },
);
