import { DeadlineExceeded } from "../../protocol/errors.ts";
import { nowUs } from "../../regional/clock.ts";
import type { Executed, ExecutorFactory } from "../../regional/executor.ts";
import { jsonLogger } from "../../regional/log.ts";
import { parseCommandLine } from "../../regional/options.ts";
import { startRegionalServer } from "../../regional/server.ts";
import { processFlags } from "../../tools/cli/command.ts";

const CLASSES = Number(process.env.EDGECASCADE_BENCH_CLASSES ?? 10);
/**
 * Benchmark-only entry points: the regional pool's own HTTP stack (Hono, validation, metrics, model
 * repository) with the batcher swapped out. `--mode naive` runs one `session.run` per request, unbatched;
 * `--mode ceiling` removes inference (a constant answer), measuring the HTTP stack alone. Every other flag
 * is the pool's. Not for serving: the ceiling answers nonsense.
 */
const MODES: Record<string, ExecutorFactory> = {
  naive: (context) => {
    let pending = 0;
    return {
      get pending() {
        return pending;
      },
      async submit(rows, deadlineUs): Promise<Executed> {
        if (deadlineUs <= nowUs()) throw new DeadlineExceeded();
        pending++;
        try {
          const started = nowUs();
          const probs = await context.run(rows.data, rows.batch);
          const ended = nowUs();
          const computeUs = ended - started;
          context.recorder.executed(rows.batch, computeUs / 1e6, 1);
          return {
            probs,
            queueMs: 0,
            computeMs: computeUs / 1000,
            batchRows: rows.batch,
            batchRequests: 1,
            batchStartUs: started,
            runStartUs: started,
            runEndUs: ended,
          };
        } finally {
          pending--;
        }
      },
    };
  },
  ceiling: () => ({
    pending: 0,
    // A uniform answer of the model's shape (bench:regional passes its class count; digits has 10).
    submit: async (rows) => {
      const now = nowUs();
      return {
        probs: new Float32Array(rows.batch * CLASSES).fill(1 / CLASSES),
        queueMs: 0,
        computeMs: 0,
        batchRows: rows.batch,
        batchRequests: 1,
        batchStartUs: now,
        runStartUs: now,
        runEndUs: now,
      };
    },
  }),
};

const { values, rest: poolArgs } = processFlags(
  {
    name: "regional-baselines",
    usage: `node scripts/benchmarks/regional-baselines.ts --mode ${Object.keys(MODES).join("|")} [pool options]`,
    flags: {
      mode: {
        type: "string",
        choices: Object.keys(MODES),
        required: true,
        help: "naive: one session.run per request; ceiling: no inference",
      },
    },
    // Every other flag is the pool's.
    parse: { passThrough: true },
  },
  "node scripts/benchmarks/regional-baselines.ts",
);
const mode = values.mode;
const executor = MODES[mode]!;
const parsed = parseCommandLine(poolArgs, process.env);
if (parsed.help) process.exit(2);
const log = jsonLogger({ region: parsed.options.region, pid: process.pid, mode });
const server = await startRegionalServer({ ...parsed.options, workers: 1 }, { log, executor });
void server.firstReady.then(() => log("info", "ready", { url: server.url, port: server.port, workers: 1 }));
process.on("SIGTERM", () => void server.shutdown().then(() => process.exit(0)));
