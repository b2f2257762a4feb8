import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ServingError } from "../../protocol/errors.ts";
import { RateLimited } from "../../protocol/errors.ts";
import { modelIoOf } from "../../protocol/model-config.ts";
import type { InputRows } from "../../protocol/tensor.ts";
import { DynamicBatcher } from "../../regional/batcher.ts";
import { nowUs } from "../../regional/clock.ts";
import { createMetrics } from "../../regional/metrics.ts";
import type { ModelRecorder } from "../../regional/recorder.ts";
import { createOnnxModel, type OnnxModel } from "../../regional/session.ts";
import { TenantScheduler } from "../../regional/tenants/tenant-scheduler.ts";
import { DIRECT_FLOW, OTHER_FLOW, parseTenantSpecs, tenantTable } from "../../regional/tenants/tenant-table.ts";
import { heldout, modelBytes, modelConfig } from "../support/heldout.ts";
import {
  classifyRows,
  get,
  metric,
  post,
  startTestServer,
  TOLERANCE,
  testOptions,
  worstDifference,
} from "../support/regional-server.ts";

const rowsOf = (from: number, n: number): InputRows => ({
  data: Float32Array.from(heldout.rows.slice(from, from + n).flatMap((r) => r.input)),
  batch: n,
  width: 64,
});

/** Largest difference between output rows and the fixture's expected `digits` rows starting at `from`. */
function worstAgainstFixture(probs: Float32Array, from: number): number {
  let worst = 0;
  for (let i = 0; i < probs.length; i++) {
    const expected = heldout.rows[from + Math.floor(i / 10)]!.expected.digits![i % 10]!;
    worst = Math.max(worst, Math.abs(probs[i]! - expected));
  }
  return worst;
}

/** What the batcher reported, kept as plain numbers. */
function countingRecorder() {
  const seen = { runs: [] as number[], queueDepth: 0 };
  const recorder: ModelRecorder = {
    pending: () => {},
    queueDepth: (n) => {
      seen.queueDepth = n;
    },
    queued: () => {},
    executed: (rows) => seen.runs.push(rows),
    request: () => {},
    ready: () => {},
    predicted: () => {},
    audited: () => {},
    baseline: () => {},
    dispose: () => {},
  };
  return { seen, recorder };
}

describe("DynamicBatcher with a real onnxruntime session", () => {
  let session: OnnxModel;
  /** The session's run, held until `release()` while `hold` is set: a stand-in for a long batch in flight. */
  let gate: { hold: boolean; waiting: (() => void)[]; release(): void };
  const heldRun = async (data: Float32Array, batch: number) => {
    if (gate.hold) await new Promise<void>((resolve) => gate.waiting.push(resolve));
    return session.run(data, batch);
  };

  beforeAll(async () => {
    session = await createOnnxModel(modelBytes("digits"), modelIoOf(modelConfig("digits")), "cpu");
  });
  afterAll(() => session.release());

  const newBatcher = ({
    maxQueue = 100,
    maxBatch = 64,
    maxQueueDelayUs = 0,
    queueFull = (): ServingError => new RateLimited("full", 1, "queue_full"),
    tenants = undefined as TenantScheduler | undefined,
  } = {}) => {
    gate = {
      hold: false,
      waiting: [],
      release() {
        this.hold = false;
        for (const resolve of this.waiting.splice(0)) resolve();
      },
    };
    const { seen, recorder } = countingRecorder();
    const batcher = new DynamicBatcher(
      { run: heldRun, maxBatch, maxQueue, maxQueueDelayUs, queueFull, recorder },
      tenants,
    );
    return { batcher, seen };
  };

  it("merges calls made together into one run and gives each caller exactly its own rows", async () => {
    const { batcher, seen } = newBatcher();
    // Calls of 1, 3, 2 and 5 rows from different parts of the fixture, submitted in one tick.
    const calls = [
      [0, 1],
      [40, 3],
      [100, 2],
      [200, 5],
    ] as const;
    const results = await Promise.all(calls.map(([from, n]) => batcher.submit(rowsOf(from, n), Infinity)));
    expect(seen.runs).toEqual([11]);
    results.forEach((r, i) => {
      const [from, n] = calls[i]!;
      expect(r.probs).toHaveLength(n * 10);
      expect(r.batchRows).toBe(11);
      expect(worstAgainstFixture(r.probs, from)).toBeLessThanOrEqual(TOLERANCE);
    });
  });

  it("never puts more than maxBatch rows in a run, and never splits a call", async () => {
    const { batcher, seen } = newBatcher();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) => batcher.submit(rowsOf(i * 30, 30), Infinity)),
    );
    // 30 + 30 = 60 fits in 64; a third call would not.
    expect(seen.runs).toEqual([60, 60, 60, 60, 60]);
    results.forEach((r, i) => {
      expect(worstAgainstFixture(r.probs, i * 30)).toBeLessThanOrEqual(TOLERANCE);
    });
  });

  it("calls arriving while a run is in flight form the next batch", async () => {
    const { batcher, seen } = newBatcher();
    gate.hold = true;
    const first = batcher.submit(rowsOf(0, 1), Infinity);
    await new Promise((r) => setImmediate(r));
    expect(gate.waiting).toHaveLength(1);
    const later = [1, 2, 3, 4].map((i) => batcher.submit(rowsOf(i, 1), Infinity));
    gate.release();
    await Promise.all([first, ...later]);
    expect(seen.runs).toEqual([1, 4]);
  });

  it("counts as pending what is queued or in the run, and nothing once answered or refused", async () => {
    const { batcher } = newBatcher({ maxQueue: 4 });
    gate.hold = true;
    const first = batcher.submit(rowsOf(0, 1), Infinity);
    expect(batcher.pending).toBe(1);
    await new Promise((r) => setImmediate(r));
    expect(gate.waiting).toHaveLength(1);
    const later = [1, 2].map((i) => batcher.submit(rowsOf(i, 1), Infinity));
    // One in the run, two queued; a call past its deadline is refused without counting.
    await expect(batcher.submit(rowsOf(3, 1), 0)).rejects.toMatchObject({ code: "deadline_exceeded" });
    expect(batcher.pending).toBe(3);
    gate.release();
    await first;
    await Promise.all(later);
    expect(batcher.pending).toBe(0);
  });

  it("answers 504 for calls whose deadline passes while queued, and never runs them", async () => {
    const { batcher, seen } = newBatcher();
    gate.hold = true;
    const running = batcher.submit(rowsOf(0, 1), Infinity);
    await new Promise((r) => setImmediate(r));
    const doomed = [1, 2].map((i) => batcher.submit(rowsOf(i, 1), nowUs() + 20_000));
    const patient = batcher.submit(rowsOf(3, 1), Infinity);
    // Hold the first run until both deadlines (20 ms) are 10x past.
    await new Promise((r) => setTimeout(r, 200));
    gate.release();
    for (const d of doomed) {
      await expect(d).rejects.toMatchObject({ status: 504, code: "deadline_exceeded" });
    }
    await running;
    const last = await patient;
    expect(seen.runs).toEqual([1, 1]);
    expect(worstAgainstFixture(last.probs, 3)).toBeLessThanOrEqual(TOLERANCE);
  });

  /** Let the batcher take its decision after a run: two passes of the event loop. */
  const settle = async () => {
    for (let i = 0; i < 2; i++) await new Promise((r) => setImmediate(r));
  };
  // Queue delays far longer than the test's own steps: a wait shows as a 10 s stall, not a few milliseconds.
  const LONG_DELAY_US = 10_000_000;

  it("with a queue delay, an idle model still runs a lone call at once", async () => {
    const { batcher, seen } = newBatcher({ maxQueueDelayUs: LONG_DELAY_US });
    const started = performance.now();
    await batcher.submit(rowsOf(0, 1), Infinity);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(seen.runs).toEqual([1]);
  });

  it("with a queue delay, a busy model holds a partial batch so later calls join it", async () => {
    const { batcher, seen } = newBatcher({ maxQueueDelayUs: 1_000_000 });
    gate.hold = true;
    const first = batcher.submit(rowsOf(0, 1), Infinity);
    await new Promise((r) => setImmediate(r));
    const queued = [batcher.submit(rowsOf(1, 1), Infinity), batcher.submit(rowsOf(2, 1), Infinity)];
    gate.release();
    await first;
    await settle();
    // Without the delay, the two queued calls would have run by now; with it, a third joins them.
    const late = batcher.submit(rowsOf(3, 1), Infinity);
    const results = await Promise.all([...queued, late]);
    expect(seen.runs).toEqual([1, 3]);
    results.forEach((r, i) => {
      expect(worstAgainstFixture(r.probs, i + 1)).toBeLessThanOrEqual(TOLERANCE);
    });
  });

  it("with a queue delay, a batch that fills up runs without waiting", async () => {
    const { batcher, seen } = newBatcher({ maxBatch: 4, maxQueueDelayUs: LONG_DELAY_US });
    gate.hold = true;
    const first = batcher.submit(rowsOf(0, 1), Infinity);
    await new Promise((r) => setImmediate(r));
    const queued = [batcher.submit(rowsOf(1, 1), Infinity), batcher.submit(rowsOf(2, 1), Infinity)];
    gate.release();
    await first;
    await settle();
    const started = performance.now();
    await Promise.all([...queued, batcher.submit(rowsOf(3, 2), Infinity)]);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(seen.runs).toEqual([1, 4]);
  });

  it("a deadline already past is refused without queueing", async () => {
    const { batcher, seen } = newBatcher();
    await expect(batcher.submit(rowsOf(0, 1), nowUs() - 1)).rejects.toMatchObject({ status: 504 });
    expect(seen.runs).toEqual([]);
  });

  it("with tenants, a reservation runs first and another tenant's rows interleave with a flood queued before them", async () => {
    const metrics = createMetrics();
    const table = tenantTable(parseTenantSpecs("a=guaranteed:100,b=best-effort"));
    const tenants = new TenantScheduler(table, metrics.recorder, 64, nowUs());
    const [a, b] = [table.byName.get("a")!, table.byName.get("b")!];
    const { batcher, seen } = newBatcher({ maxBatch: 32, tenants });
    gate.hold = true;
    const first = batcher.submit(rowsOf(0, 1), Infinity, DIRECT_FLOW);
    await new Promise((r) => setImmediate(r));
    // While a run is in flight: b's flood of four 16-row calls, then a's one row (reserved) and other's 4 rows.
    const flood = [1, 17, 33, 49].map((from) => batcher.submit(rowsOf(from, 16), Infinity, b));
    const reserved = batcher.submit(rowsOf(70, 1), Infinity, a);
    const quiet = batcher.submit(rowsOf(80, 4), Infinity, OTHER_FLOW);
    gate.release();
    const [floodAnswers, reservedAnswer, quietAnswer] = await Promise.all([Promise.all(flood), reserved, quiet, first]);
    // First come first served would run b, b | b, b | a, other. Fair: a, b, other (21 rows) | b, b | b.
    expect(seen.runs).toEqual([1, 21, 32, 16]);
    expect(reservedAnswer.batchRows).toBe(21);
    expect(quietAnswer.batchRows).toBe(21);
    expect(floodAnswers.map((r) => r.batchRows)).toEqual([21, 32, 32, 16]);
    expect(worstAgainstFixture(reservedAnswer.probs, 70)).toBeLessThanOrEqual(TOLERANCE);
    expect(worstAgainstFixture(quietAnswer.probs, 80)).toBeLessThanOrEqual(TOLERANCE);
    floodAnswers.forEach((r, i) => {
      expect(worstAgainstFixture(r.probs, 1 + 16 * i)).toBeLessThanOrEqual(TOLERANCE);
    });
    const text = await metrics.text();
    expect(metric(text, "edgecascade_tenant_rows_total", { tenant: "a", share: "reserved" })).toBe(1);
    expect(metric(text, "edgecascade_tenant_rows_total", { tenant: "b", share: "best-effort" })).toBe(64);
    expect(metric(text, "edgecascade_tenant_rows_total", { tenant: "other", share: "best-effort" })).toBe(4);
  });

  it("a full queue refuses the next call with the configured error, and recovers", async () => {
    const { batcher, seen } = newBatcher({ maxQueue: 2 });
    gate.hold = true;
    const running = batcher.submit(rowsOf(0, 1), Infinity);
    await new Promise((r) => setImmediate(r));
    const queued = [batcher.submit(rowsOf(1, 1), Infinity), batcher.submit(rowsOf(2, 1), Infinity)];
    expect(seen.queueDepth).toBe(2);
    await expect(batcher.submit(rowsOf(3, 1), Infinity)).rejects.toMatchObject({
      status: 429,
      code: "queue_full",
      headers: { "retry-after": "1" },
    });
    gate.release();
    await Promise.all([running, ...queued]);
    expect(seen.queueDepth).toBe(0);
    const after = await batcher.submit(rowsOf(4, 1), Infinity);
    expect(worstAgainstFixture(after.probs, 4)).toBeLessThanOrEqual(TOLERANCE);
  });
});

describe("batching through the server under concurrency", () => {
  it("every caller gets its own answer, equal to the fixture's, while runs carry many requests", async () => {
    const server = await startTestServer(testOptions());
    try {
      // Every held-out row: most as single-row requests, some as 3-row requests, all in flight at once.
      const requests: { from: number; n: number }[] = [];
      for (let from = 0; from < heldout.rows.length; ) {
        const n = from % 7 === 0 && from + 3 <= heldout.rows.length ? 3 : 1;
        requests.push({ from, n });
        from += n;
      }
      const answers = await Promise.all(
        requests.map(({ from, n }) => post(`${server.url}/v1/classify`, { ...classifyRows(from, n), id: `r${from}` })),
      );
      answers.forEach((res, i) => {
        const { from, n } = requests[i]!;
        expect(res.status).toBe(200);
        expect(res.body.id).toBe(`r${from}`);
        expect(res.body.predictions).toHaveLength(n);
        expect(worstDifference(res.body.predictions, from)).toBeLessThanOrEqual(TOLERANCE);
      });
      const text = (await get(`${server.url}/metrics`)).body as string;
      const labels = { model: "digits", version: "1" };
      expect(metric(text, "edgecascade_inference_rows_total", labels)).toBe(heldout.rows.length);
      expect(metric(text, "edgecascade_inference_requests_total", { ...labels, outcome: "success" })).toBe(
        requests.length,
      );
      const executions = metric(text, "edgecascade_inference_executions_total", labels);
      expect(executions).toBeGreaterThan(0);
      expect(executions).toBeLessThan(requests.length);
      // Some answer came from a run shared with other requests.
      const sharedRun = answers.some((res) => {
        const rows = Number(/batch of (\d+)/.exec(res.headers["server-timing"] ?? "")?.[1]);
        return rows > res.body.predictions.length;
      });
      expect(sharedRun).toBe(true);
    } finally {
      await server.shutdown();
    }
  });
});
