import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { EdgeFigures } from "../../edge/analytics/figures.ts";
import { argmax, type HeldoutRow } from "../../protocol/heldout.ts";
import { formatTraceParent, parseTraceParent } from "../../protocol/trace-context.ts";
import type { ClassifyResponse } from "../../protocol/types.ts";
import { wilson } from "../../protocol/wilson.ts";
import { type OtlpReceiver, startOtlpReceiver } from "../../scripts/otlp/receiver.ts";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { type AuditGate, startAuditGate } from "../support/audit-gate.ts";
import { biasedDigits, biasedLabel } from "../support/candidates.ts";
import { sleep, until } from "../support/regional-process.ts";
import {
  addVersion,
  copyModels,
  counted,
  get,
  metric,
  startTestServer,
  type TestServer,
  testOptions,
} from "../support/regional-server.ts";
import {
  classify,
  confidentRows,
  EU_CENTRAL,
  FRANKFURT,
  getJson,
  NO_HEDGES,
  post,
  regionStatus,
  regionsVar,
  serverTiming,
  unsureRows,
  warmEdge,
} from "./support.ts";

// The edge and one real pool behind it, observed from outside: the pool traces to a real OTLP/HTTP receiver,
// the Worker keeps its Analytics Engine points in the isolate (LOCAL_PLATFORM=memory, as npm start does), and
// the pool serves a digits version that labels a known share of the rows differently from the edge variant:
// an edge variant miscalibrated on purpose, as far as the live audit can tell. The edge reaches the pool through a
// gate (test/support/audit-gate.ts) that can hold the audits' calls: what an answer does while its audit is out.
const SECRET = "observability-secret";
const BIASED = biasedDigits(0.2);
const AUDIT_SHARE = 0.5;
let receiver: OtlpReceiver;
let models: ReturnType<typeof copyModels>;
let pool: TestServer;
let gate: AuditGate;
let worker: EdgeWorker;

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  models = copyModels();
  await addVersion(models.dir, "digits", "2", { bytes: BIASED.bytes, accuracy: BIASED.accuracy, makeDefault: true });
  pool = await startTestServer(
    testOptions(["--models", models.dir, "--region", "eu"], {
      REGIONAL_SHARED_SECRET: SECRET,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      // Requests without a parent are not traced: every span here continues a trace the edge forwarded.
      OTEL_TRACES_SAMPLER: "parentbased_always_off",
    }),
  );
  gate = await startAuditGate(pool.url);
  worker = await warmEdge(
    await startEdgeWorker({
      memoryPlatform: true,
      vars: {
        REGIONS: regionsVar([{ name: "eu", url: gate.url, at: EU_CENTRAL }]),
        REGIONAL_SHARED_SECRET: SECRET,
        SLO_BUDGET_MS: "20000",
        // An audit's deadline: the edge must not give up on one the gate holds, however slow the machine.
        REGION_CHECK_TIMEOUT_MS: "60000",
        ...NO_HEDGES,
        TRACE_SAMPLE_RATIO: "1",
        AUDIT_SHARE: String(AUDIT_SHARE),
        AUDIT_MAX_PER_SECOND: "100000",
        AUDIT_SEED: "7",
      },
    }),
  );
});
afterAll(async () => {
  await worker?.dispose();
  gate?.release();
  await gate?.close();
  await pool?.shutdown();
  await receiver?.close();
  models?.remove();
});

const hex = (bytes: number) => randomBytes(bytes).toString("hex");

/** The trace an answer names in its Server-Timing (`traceparent;desc="00-..."`). */
function namedTrace(headers: Headers) {
  const parent = parseTraceParent(serverTiming(headers).traceparent?.desc);
  expect(parent, headers.get("server-timing") ?? "").toBeDefined();
  return parent!;
}

/** The pool's spans of a trace, once exported. */
async function poolSpans(traceId: string) {
  await pool.tracing.flush();
  return receiver.trace(traceId);
}

interface ObservedStatus {
  observed: EdgeFigures & {
    written: number;
    latest: { index: string; blobs: string[]; doubles: number[] }[];
  };
}
const observed = async () => (await getJson<ObservedStatus>(worker, "/status")).body.observed;
const requestPoints = (o: ObservedStatus["observed"]) => o.latest.filter((p) => p.blobs[0] !== "audit");
const poolMetrics = async () => (await get(`${pool.url}/metrics`)).body as string;

/**
 * Until every audit the gate has seen is answered and the edge has written its outcome (each audit here is one
 * row: its rows, or its failure, count once). Release what the gate holds first.
 */
async function auditsSettled() {
  await until("every audit answered and its outcome written at the edge", async () => {
    const seen = gate.audits();
    if (seen.some((a) => a.answer === undefined && !a.abandoned)) return false;
    const written = (await observed()).audits.digits;
    return (written ? written.rows + written.failed : 0) === seen.length;
  });
}

const { k, delta } = BIASED.bias;
const edgeLabel = (r: HeldoutRow) => argmax(r.expected["digits-edge"]!);
/**
 * Held-out rows the edge variant answers and the pool's version labels otherwise, as inputs no test sent before
 * (one pixel moved by 1/1000: a new cache key, the same answers).
 */
const freshDisagreeing = confidentRows
  .filter((r) => edgeLabel(r) !== biasedLabel(r, k, delta))
  .map((r) => ({ ...r, input: [r.input[0]! + 0.001, ...r.input.slice(1)] }));

describe("one trace across tiers", () => {
  it("a forwarded row continues the client's trace into the pool, and the answer names it", async () => {
    const client = { traceId: hex(16), parentId: hex(8), flags: 1 };
    const answer = await classify(worker, [unsureRows[0]!], undefined, {
      cf: FRANKFURT,
      headers: { traceparent: formatTraceParent(client), tracestate: "shop=7" },
    });
    expect(answer.body.servedBy).toBe("regional:eu");
    expect(namedTrace(answer.headers)).toMatchObject({ traceId: client.traceId, parentId: client.parentId });
    const spans = await poolSpans(client.traceId);
    expect(spans.map((s) => s.name).sort()).toEqual(["POST /v1/classify", "batch", "compute", "queue"]);
    const root = spans.find((s) => s.name === "POST /v1/classify")!;
    expect(root.parentSpanId).toBe(client.parentId);
    expect(root.attributes).toMatchObject({ "triton.model_name": "digits", "triton.model_version": "2" });
  });

  it("without a client context, the pool's spans carry the trace id the edge started and named", async () => {
    const answer = await classify(worker, [unsureRows[1]!], undefined, { cf: FRANKFURT });
    expect(answer.body.servedBy).toBe("regional:eu");
    const named = namedTrace(answer.headers);
    expect(named.flags & 1).toBe(1); // TRACE_SAMPLE_RATIO=1
    const spans = await poolSpans(named.traceId);
    expect(spans).toHaveLength(4);
    expect(spans.find((s) => s.kind === 2)!.parentSpanId).toBe(named.parentId);
  });

  it("a client context marked unsampled is forwarded as such and the pool makes no spans for it", async () => {
    const client = { traceId: hex(16), parentId: hex(8), flags: 0 };
    const answer = await classify(worker, [unsureRows[2]!], undefined, {
      cf: FRANKFURT,
      headers: { traceparent: formatTraceParent(client) },
    });
    expect(answer.body.servedBy).toBe("regional:eu");
    expect(namedTrace(answer.headers).traceId).toBe(client.traceId);
    // A sampled request after it: once its spans are in, anything of the first would be too.
    const after = await classify(worker, [unsureRows[3]!], undefined, { cf: FRANKFURT });
    expect(await poolSpans(namedTrace(after.headers).traceId)).toHaveLength(4);
    expect(receiver.trace(client.traceId)).toEqual([]);
  });

  it("every answer names its trace, an error too", async () => {
    const refused = await post(worker, "/v1/classify", { model: "digits", inputs: [1, 2] });
    expect(refused.status).toBe(400);
    namedTrace(refused.headers);
    const health = await worker.dispatchFetch(`${worker.url}/v2/health/ready`);
    namedTrace(health.headers as unknown as Headers);
  });
});

describe("the edge's own numbers (Analytics Engine, in the isolate here)", () => {
  it("one classify writes exactly one data point, with every field", async () => {
    const before = await observed();
    const row = confidentRows[0]!;
    const answer = await classify(worker, [row], undefined, { cf: FRANKFURT });
    expect(answer.body.servedBy).toBe("edge");
    const after = await observed();
    const point = requestPoints(after).at(-1)!;
    expect(point.index).toBe("digits");
    const label = String(argmax(row.expected["digits-edge"]!));
    expect(point.blobs).toEqual([
      "edge",
      "",
      "digits",
      answer.body.version,
      "FRA",
      "",
      "anonymous",
      "200",
      label,
      namedTrace(answer.headers).traceId,
    ]);
    const top = Math.max(...row.expected["digits-edge"]!);
    expect(point.doubles[0]).toBeGreaterThanOrEqual(0); // latency: the Worker's clock
    expect(point.doubles[1]).toBeCloseTo(top, 5); // the edge variant's top probability
    expect(point.doubles.slice(2, 5)).toEqual([0, 1, 0]); // no region, one row, not an audit
    expect(point.doubles[5]).toBeCloseTo(top, 5);
    // Exactly one request point per request: the audit, if this answer was drawn, writes its own.
    const requestsWritten = (o: ObservedStatus["observed"]) =>
      Object.values(o.models).reduce((n, m) => n + m.answered + m.errors, 0);
    expect(requestsWritten(after) - requestsWritten(before)).toBe(1);
  });

  it("a forwarded answer's point names the region and its time; a refused request writes one error point", async () => {
    const answer = await classify(worker, [unsureRows[4]!], undefined, { cf: FRANKFURT });
    expect(answer.body.servedBy).toBe("regional:eu");
    const forwarded = requestPoints(await observed()).at(-1)!;
    expect(forwarded.blobs.slice(0, 6)).toEqual(["regional", "", "digits", "2", "FRA", "eu"]);
    expect(forwarded.doubles[2]).toBeGreaterThanOrEqual(0);
    expect(forwarded.doubles[1]).toBeLessThan(1); // the edge variant ran and was unsure
    const refused = await post(worker, "/v1/classify", { model: "digits", inputs: [1, 2] }, { cf: FRANKFURT });
    expect(refused.status).toBe(400);
    const error = requestPoints(await observed()).at(-1)!;
    expect(error.blobs).toEqual([
      "error",
      "",
      "digits",
      "",
      "FRA",
      "",
      "anonymous",
      "400",
      "",
      namedTrace(refused.headers).traceId,
    ]);
  });
});

describe("the live agreement audit, end to end", () => {
  it("measures the share of edge answers the full model disagrees with, within its interval", async () => {
    // Earlier tests' edge answers may have been audited too: both sides are counted from here on.
    await auditsSettled();
    const auditBefore = (await observed()).audits.digits ?? { rows: 0, agreeing: 0, failed: 0 };
    const metricsBefore = await poolMetrics();
    const digits = { model: "digits", version: "2" };
    // Each input once (a repeat would be a cache hit, which is never audited).
    const seen = new Set<string>([JSON.stringify(confidentRows[0]!.input)]);
    const rows: HeldoutRow[] = confidentRows.filter(
      (r) => !seen.has(JSON.stringify(r.input)) && seen.add(JSON.stringify(r.input)),
    );
    for (const row of rows) {
      const answer = await classify(worker, [row], undefined, { cf: FRANKFURT });
      expect(answer.body.servedBy).toBe("edge");
    }
    // The known share: edge answers the pool's version labels otherwise.
    const known = rows.filter((r) => edgeLabel(r) !== biasedLabel(r, k, delta)).length / rows.length;
    expect(known).toBeGreaterThan(0.1);

    // Audits run after the answers (waitUntil).
    await auditsSettled();
    const total = (await observed()).audits.digits!;
    const audit = {
      rows: total.rows - auditBefore.rows,
      agreeing: total.agreeing - auditBefore.agreeing,
      failed: total.failed - auditBefore.failed,
    };
    const interval = wilson(audit.agreeing, audit.rows);
    expect(audit.failed).toBe(0);
    // The pool counted what the edge wrote, row for row.
    const metricsAfter = await poolMetrics();
    const poolCount = (labels: Record<string, string>) =>
      counted(metricsAfter, "edgecascade_cascade_audit_total", labels) -
      counted(metricsBefore, "edgecascade_cascade_audit_total", labels);
    expect(poolCount(digits)).toBe(audit.rows);
    expect(poolCount({ ...digits, agree: "true" })).toBe(audit.agreeing);
    // About AUDIT_SHARE of the edge answers were audited (the draws are seeded: the same ones every run).
    expect(audit.rows / rows.length).toBeGreaterThan(AUDIT_SHARE - 0.1);
    expect(audit.rows / rows.length).toBeLessThan(AUDIT_SHARE + 0.1);
    // The measured disagreement holds the known share within its Wilson 95% interval.
    const disagreement = { lower: 1 - interval.upper, upper: 1 - interval.lower };
    // The figures docs/observability.md quotes.
    const pct = (x: number) => `${(100 * x).toFixed(1)}%`;
    console.log(
      `audit: ${rows.length} edge answers, known disagreement ${pct(known)}; ${audit.rows} audited ` +
        `(${pct(audit.rows / rows.length)}), ${audit.agreeing} agreeing; measured disagreement ` +
        `${pct(1 - audit.agreeing / audit.rows)}, Wilson 95% [${pct(disagreement.lower)}, ${pct(disagreement.upper)}]`,
    );
    expect(known).toBeGreaterThanOrEqual(disagreement.lower);
    expect(known).toBeLessThanOrEqual(disagreement.upper);
  });

  it("never delays an answer, is never cached, and counts in no SLO series at either tier", async () => {
    await auditsSettled();
    const digits = { model: "digits", version: "2" };
    const poolBefore = await poolMetrics();
    const regionBefore = await regionStatus(worker, "eu", FRANKFURT);
    const before = await observed();
    const auditsBefore = gate.audits().length;

    // With the gate holding every audit, the edge answers: an answer that waited for its audit would never come.
    gate.hold();
    const answers = new Map<string, { row: HeldoutRow; label: number }>();
    for (const row of freshDisagreeing.slice(0, 12)) {
      const answer = await classify(worker, [row], undefined, { cf: FRANKFURT });
      expect(answer.body.servedBy).toBe("edge");
      expect(answer.body.predictions[0]!.class).toBe(edgeLabel(row));
      answers.set(namedTrace(answer.headers).traceId, { row, label: edgeLabel(row) });
    }
    await until("an audit of these answers at the gate", () => gate.audits().length > auditsBefore);
    const held = gate.audits().slice(auditsBefore);
    for (const audit of held) {
      // Each one an audit of an answer already given, still held: not answered, not given up on.
      expect(answers.has(parseTraceParent(audit.traceparent)!.traceId)).toBe(true);
      expect(audit).toMatchObject({ held: true, answer: undefined, abandoned: false });
    }
    gate.release();
    await auditsSettled();
    const audited = gate.audits().slice(auditsBefore);
    // AUDIT_SHARE (0.5) of the answers, seeded: some audited, not all.
    expect(audited.length).toBeGreaterThan(0);
    expect(audited.length).toBeLessThan(answers.size);

    // Never cached: each audited row, asked again, is the edge's answer from the cache, not the region's label.
    for (const audit of audited) {
      const { row, label } = answers.get(parseTraceParent(audit.traceparent)!.traceId)!;
      const region = JSON.parse(audit.answer!.body) as ClassifyResponse;
      expect(region.predictions[0]!.class).not.toBe(label);
      const again = await classify(worker, [row], undefined, { cf: FRANKFURT });
      expect(again.body.servedBy).toBe("cache");
      expect(again.body.predictions[0]!.class).toBe(label);
    }

    // Counted as audits only. At the pool: the audit counter, and none of the series the SLO rules, the tenants'
    // figures and drift read (deploy/prometheus/slo.rules.yml, cascade.rules.yml).
    const poolAfter = await poolMetrics();
    // Counters read as 0 until their first count (counted); the histogram's series must be there (metric).
    const grew = (name: string, labels: Record<string, string> = {}) =>
      name.endsWith("_total")
        ? counted(poolAfter, name, labels) - counted(poolBefore, name, labels)
        : metric(poolAfter, name, labels) - metric(poolBefore, name, labels);
    expect(grew("edgecascade_cascade_audit_total", digits)).toBe(audited.length);
    expect(grew("edgecascade_cascade_audit_total", { ...digits, agree: "false" })).toBe(audited.length);
    // (The route, as the rules read it: this test's own scrapes of /metrics count there.)
    for (const [series, labels] of [
      ["edgecascade_inference_requests_total", {}],
      ["edgecascade_inference_request_duration_seconds_count", {}],
      ["edgecascade_http_responses_total", { route: "/v1/classify" }],
      ["edgecascade_tenant_requests_total", {}],
      ["edgecascade_predictions_total", {}],
    ] as const) {
      expect(grew(series, labels), series).toBe(0);
    }
    // At the edge: no region call in the isolate's book (breaker, reach, hedges), no regional answer; one
    // request point per client request (edge answers, then cache hits), the audits' outcomes apart.
    const regionAfter = await regionStatus(worker, "eu", FRANKFURT);
    expect(regionAfter.counters).toEqual(regionBefore.counters);
    expect(regionAfter.places).toEqual(regionBefore.places);
    const after = await observed();
    const tiers = (o: ObservedStatus["observed"]) => o.models.digits!;
    expect(tiers(after).edge - tiers(before).edge).toBe(answers.size);
    expect(tiers(after).cache - tiers(before).cache).toBe(audited.length);
    expect(tiers(after).regional).toBe(tiers(before).regional);
    expect(after.audits.digits!.rows - before.audits.digits!.rows).toBe(audited.length);
    expect(after.audits.digits!.agreeing).toBe(before.audits.digits!.agreeing);
  });

  it("leaves out rows a client made the edge answer (cascade: edge) that the cascade would have forwarded", async () => {
    await auditsSettled();
    const auditsBefore = gate.audits().length;
    const forced = new Set<string>();
    for (const row of unsureRows.slice(0, 20)) {
      const answer = await classify(worker, [row], { cascade: "edge" }, { cf: FRANKFURT });
      expect(answer.body.servedBy).toBe("edge");
      forced.add(namedTrace(answer.headers).traceId);
    }
    // Then answers the cascade chose, until one is audited: the forced ones' audits, had any been drawn, went
    // out before it.
    for (const row of freshDisagreeing.slice(12)) {
      await classify(worker, [row], undefined, { cf: FRANKFURT });
      if (gate.audits().length > auditsBefore) break;
      await sleep(50);
    }
    await until("an audit after the forced answers", () => gate.audits().length > auditsBefore);
    await auditsSettled();
    const traces = gate.audits().map((a) => parseTraceParent(a.traceparent)!.traceId);
    expect(traces.filter((t) => forced.has(t))).toEqual([]);
  });

  it("drift: the answers' classes against the held-out mix, in /status", async () => {
    const drift = (await observed()).drift.digits!;
    const figures = drift["2"]!;
    expect(figures.predictions).toBeGreaterThan(300);
    expect(figures.psi).not.toBeNull();
    expect(figures.drifted).toBe(false);
    expect(Object.values(figures.confidence).reduce((a, b) => a + b, 0)).toBe(figures.predictions);
  });
});
