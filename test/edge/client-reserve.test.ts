import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type EdgeWorker, startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { type RegionalPool, startRegionalPool } from "../../scripts/stack/regional-pool.ts";
import { type DelayProxy, startDelayProxy } from "../../scripts/validate/delay-proxy.ts";
import {
  classify,
  EU_CENTRAL,
  expectScores,
  FRANKFURT,
  NO_HEDGES,
  regionsVar,
  serverTiming,
  unsureRows,
  warmEdge,
} from "./support.ts";

/**
 * The reserve for the client's round trip (edge/regions/client-reserve.ts) in real workerd, with `request.cf`'s
 * clientTcpRtt / clientQuicRtt set per request as Cloudflare sets them: one region, a real pool behind a delay
 * proxy that is ONE_WAY_MS away each way, so it cannot answer in under 2 × ONE_WAY_MS. The budget leaves it room
 * when the client's round trip is short and none when the reserve takes its cap (RTT_RESERVE_MAX_SHARE's
 * default, half the budget, is less than 2 × ONE_WAY_MS). The numbers are large so that scheduling noise on a loaded
 * machine cannot move the region across a deadline; what is asserted is who answered, the degraded reason and
 * the deadline the region was sent, never a duration.
 */
const BUDGET_MS = 600;
const ONE_WAY_MS = 160;
const CAP_MS = BUDGET_MS / 2;
/** Slack for the edge's own time before it calls the region (workerd's clock moves on I/O only). */
const SLACK_MS = 100;

describe("the reserve for the client's round trip", () => {
  let eu: RegionalPool | undefined;
  let proxy: DelayProxy | undefined;
  let worker: EdgeWorker;

  beforeAll(async () => {
    eu = await startRegionalPool({ region: "eu" });
    proxy = await startDelayProxy({ target: { host: "127.0.0.1", port: eu.port }, delayMs: ONE_WAY_MS });
    worker = await warmEdge(
      await startEdgeWorker({
        vars: {
          REGIONS: regionsVar([{ name: "eu", url: proxy.url, at: EU_CENTRAL }]),
          SLO_BUDGET_MS: String(BUDGET_MS),
          ...NO_HEDGES,
        },
      }),
    );
  });
  afterAll(async () => {
    await worker?.dispose();
    await proxy?.close();
    await eu?.stop();
  });

  /** An unsure row for the full model, from Frankfurt, over a connection with this round trip (cf fields). */
  const ask = (row: number, rtt: Record<string, number>, cascade = "regional") =>
    classify(worker, [unsureRows[row]!], { cascade }, { cf: { ...FRANKFURT, ...rtt } });
  const lastDeadlineMs = () => proxy!.stats().deadlinesMs.at(-1);

  it("an unknown round trip reserves nothing: the region gets the whole budget and answers", async () => {
    const answer = await ask(0, {});
    expect(answer.body.servedBy).toBe("regional:eu");
    expectScores(answer.body, [unsureRows[0]!], "digits");
    expect(lastDeadlineMs()).toBeGreaterThan(BUDGET_MS - SLACK_MS);
    expect(lastDeadlineMs()).toBeLessThanOrEqual(BUDGET_MS);
    expect(serverTiming(answer.headers).reserve).toBeUndefined();
  });

  it("a client's round trip is taken off the region's deadline; within what is left, the region still answers", async () => {
    const answer = await ask(1, { clientTcpRtt: 100 });
    expect(answer.body.servedBy).toBe("regional:eu");
    expect(lastDeadlineMs()).toBeGreaterThan(BUDGET_MS - 100 - SLACK_MS);
    expect(lastDeadlineMs()).toBeLessThanOrEqual(BUDGET_MS - 100);
    expect(serverTiming(answer.headers).reserve).toEqual({ dur: 100, desc: "client-rtt" });
  });

  it("a longer round trip (HTTP/3's field) cuts the region off sooner: the edge answers, degraded for the deadline", async () => {
    const answer = await ask(2, { clientTcpRtt: 0, clientQuicRtt: 400 });
    expect(answer.status).toBe(200);
    expect(answer.body.servedBy).toBe("degraded");
    expect(answer.headers.get("x-edgecascade-degraded")).toBe("deadline");
    // Capped at half the budget: the region was asked, with the floor of the budget as its deadline.
    expect(lastDeadlineMs()).toBeGreaterThan(CAP_MS - SLACK_MS);
    expect(lastDeadlineMs()).toBeLessThanOrEqual(CAP_MS);
    expect(serverTiming(answer.headers).reserve).toEqual({ dur: CAP_MS, desc: "client-rtt-capped" });
  });

  it("an auto request from that client does not wait for a region its deadline cannot reach", async () => {
    // The isolate has seen the region take over 2 x ONE_WAY_MS, more than the cap leaves, or be cut off.
    const answer = await ask(3, { clientQuicRtt: 400 }, "auto");
    expect(answer.body.servedBy).toBe("degraded");
    expect(answer.headers.get("x-edgecascade-degraded")).toBe("too-far");
    expect(serverTiming(answer.headers).reserve).toEqual({ dur: CAP_MS, desc: "client-rtt-capped" });
  });
});
