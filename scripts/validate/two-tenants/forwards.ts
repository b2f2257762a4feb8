/**
 * The two-tenant scenario's traffic: the edge's signed forwards for a tenant, each tenant's answers counted and
 * checked against their requests, A's stream from a process of its own (tenant-stream.ts) and B's flood through
 * many edge isolates.
 */
import { execFile } from "node:child_process";
import { createHmac } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { shedBackoffMs } from "../../../edge/regions/shed-backoff-policy.ts";
import { DEADLINE_HEADER, SIGNATURE_HEADER, TENANT_HEADER, TIMESTAMP_HEADER } from "../../../protocol/headers.ts";
import { argmax, type HeldoutRow } from "../../../protocol/heldout.ts";
import { signedMessage } from "../../../protocol/signing.ts";
import { LoadClient } from "../../../tools/probe/load.ts";
import { headerValue, type LoadRequest, type LoadResponse } from "../../../tools/probe/load-response.ts";
import { LoadTally } from "../../../tools/probe/load-tally.ts";
import { dueAt } from "../../../tools/probe/schedule.ts";
import type { ValidationModel } from "../model.ts";
import type { TenantTally } from "../tenant-verdict.ts";

export const SECRET = "validate-overload-tenants";
export const run = promisify(execFile);

/** What tenant-stream.ts is told: where and how fast to send tenant A's single unsure rows. */
export interface StreamArgs {
  origin: string;
  rate: number;
  durationS: number;
  model: string;
  sloMs: number;
}
export const round = (x: number) => Math.round(x);

/** A forward as the edge sends it: `rows` for `tenant`, signed (protocol/signing.ts), with the deadline. */
function forward(tenant: string, id: string, model: string, rows: readonly HeldoutRow[], deadlineMs: number) {
  const body = JSON.stringify({ model, inputs: rows.map((r) => r.input), id });
  const timestamp = Math.floor(Date.now() / 1000);
  const signature = createHmac("sha256", SECRET)
    .update(signedMessage({ method: "POST", path: "/v1/classify", body, timestamp, tenant }))
    .digest("hex");
  return {
    path: "/v1/classify",
    headers: {
      "content-type": "application/json",
      [DEADLINE_HEADER]: String(deadlineMs),
      [TENANT_HEADER]: tenant,
      [TIMESTAMP_HEADER]: String(timestamp),
      [SIGNATURE_HEADER]: signature,
    },
    body,
  } satisfies LoadRequest;
}

/** Counts one tenant's answers as they end: statuses, refusal codes, answers that are not their request's. */
class TenantCounter {
  readonly statuses: Record<string, number> = {};
  readonly refusals: Record<string, number> = {};
  mixedUp = 0;
  readonly #expected = new Map<string, number[]>();

  expect(id: string, classes: number[]): void {
    this.#expected.set(id, classes);
  }

  /** A request its isolate answered itself, without a call (within a region's Retry-After). */
  answeredAtTheEdge(id: string): void {
    this.#expected.delete(id);
    this.statuses.edge = (this.statuses.edge ?? 0) + 1;
  }

  record(response: LoadResponse, id: string): void {
    this.statuses[response.status] = (this.statuses[response.status] ?? 0) + 1;
    const expected = this.#expected.get(id);
    this.#expected.delete(id);
    if (response.status === 429) {
      let code = "unknown";
      try {
        code = (JSON.parse(response.body) as { code?: string }).code ?? code;
      } catch {}
      this.refusals[code] = (this.refusals[code] ?? 0) + 1;
    }
    if (response.status !== 200) return;
    try {
      const answer = JSON.parse(response.body) as { id?: string; predictions?: { class: number }[] };
      const classes = answer.predictions?.map((p) => p.class);
      if (answer.id !== id || JSON.stringify(classes) !== JSON.stringify(expected)) this.mixedUp++;
    } catch {
      this.mixedUp++;
    }
  }

  tally(
    run: {
      sent: number;
      summary: { latency: { p50Ms: number; p99Ms: number }; durationS: number; sendLagMs: { p99: number } };
    },
    rows: number,
  ): TenantTally {
    return {
      sendLagP99Ms: run.summary.sendLagMs.p99,
      sent: run.sent,
      statuses: this.statuses,
      refusals: this.refusals,
      mixedUp: this.mixedUp,
      p50Ms: run.summary.latency.p50Ms,
      p99Ms: run.summary.latency.p99Ms,
      rowsPerS: round(((this.statuses["200"] ?? 0) * rows) / Math.max(run.summary.durationS, 1e-3)),
    };
  }
}

/** A tenant's stream of forwards: request i carries rows from `rows` in turn, `per` at a time. */
export function stream(
  tenant: string,
  model: ValidationModel,
  rows: readonly HeldoutRow[],
  per: number,
  sloMs: number,
) {
  const counter = new TenantCounter();
  const next = (i: number): LoadRequest => {
    const picked = Array.from({ length: per }, (_, k) => rows[(i * per + k) % rows.length]!);
    const id = `${tenant}-${i}`;
    counter.expect(
      id,
      picked.map((r) => argmax(r.expected[model.name]!)),
    );
    return forward(tenant, id, model.name, picked, sloMs);
  };
  const onResponse = (response: LoadResponse, _request: LoadRequest, i: number) =>
    counter.record(response, `${tenant}-${i}`);
  return { counter, next, onResponse };
}

/**
 * B's flood as `isolates` edge isolates forward it: request i is isolate i mod `isolates`'s, and an isolate the pool
 * shed sends none of B's rows for the Retry-After (edge/forward/tenant-backoff.ts, with the edge's own policy):
 * those it answers itself, degraded, counted `edge`. The requests due are taken every millisecond rather than
 * polled for one by one (tools/probe/schedule.ts): most are answered at the edge, and polling for each of tens of
 * thousands a second would take the generator's core from A's requests; each sent one is still timed from when it
 * was due.
 */
export async function floodThroughIsolates(
  origin: string,
  rate: number,
  durationS: number,
  connections: number,
  isolates: number,
  b: ReturnType<typeof stream>,
) {
  const client = new LoadClient(origin, { connections, timeoutMs: 30_000 });
  const tally = new LoadTally();
  const until = new Array<number>(isolates).fill(0);
  const inflight = new Set<Promise<void>>();
  const startedAt = performance.now();
  const total = Math.max(1, Math.round(rate * durationS));
  let i = 0;
  try {
    while (i < total) {
      const now = performance.now();
      for (; i < total && dueAt(startedAt, i, rate) <= now; i++) {
        const isolate = i % isolates;
        if (now < until[isolate]!) {
          b.counter.answeredAtTheEdge(`b-${i}`);
          continue;
        }
        const request = b.next(i);
        const n = i;
        const p = client.send(request, dueAt(startedAt, i, rate), startedAt).then((response) => {
          tally.record(response);
          b.onResponse(response, request, n);
          if (response.status === 429 && response.body.includes('"tenant_shed"')) {
            until[isolate] = performance.now() + shedBackoffMs(headerValue(response.headers, "retry-after"));
          }
        });
        inflight.add(p);
        void p.finally(() => inflight.delete(p));
      }
      await sleep(1);
    }
    await Promise.all(inflight);
    return { sent: i, summary: tally.summary((performance.now() - startedAt) / 1000) };
  } finally {
    await client.close();
  }
}

const STREAM = fileURLToPath(new URL("../tenant-stream.ts", import.meta.url));

/**
 * Tenant A's single unsure rows from a child process (tenant-stream.ts), open loop: its tally. A process of its own,
 * so that A's answers are not read by the event loop that is busy sending B's flood and reading its answers (the
 * flood stands for other machines).
 */
export async function tenantStream(args: StreamArgs): Promise<TenantTally> {
  const { stdout } = await run(process.execPath, [STREAM, JSON.stringify(args)], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout) as TenantTally;
}
