import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NoopServer, startNoopServer } from "./floor.ts";
import { closedLoop, LoadClient, openLoop, runClosedLoop } from "./load.ts";

let server: NoopServer;
beforeAll(async () => {
  server = await startNoopServer('{"servedBy":"cache"}');
});
afterAll(() => server.close());

const request = () => ({ path: "/v1/classify", headers: { "content-type": "application/json" }, body: "{}" });

describe("openLoop", () => {
  it("sends rate × duration requests, request i due at i/rate, and accounts every answer", async () => {
    const due: number[] = [];
    const run = await openLoop({
      origin: server.url,
      rate: 200,
      durationS: 0.25,
      next: request,
      onResponse: (r, _, i) => {
        expect(r.status).toBe(200);
        expect(r.body).toBe('{"servedBy":"cache"}');
        expect(r.latencyMs).toBeGreaterThanOrEqual(r.sendLagMs);
        due[i] = r.dueMs;
      },
    });
    expect(run.sent).toBe(50);
    expect(run.summary).toMatchObject({ requests: 50, ok: 50, statuses: { 200: 50 } });
    for (let i = 1; i < 50; i++) expect(due[i]! - due[i - 1]!).toBeCloseTo(5, 6);
  });

  it("ends early when stopWhen holds, and still awaits what it sent", async () => {
    let answered = 0;
    const run = await openLoop({
      origin: server.url,
      rate: 1000,
      durationS: 10,
      next: request,
      onResponse: () => answered++,
      stopWhen: () => answered >= 5,
    });
    expect(run.sent).toBeLessThan(10_000);
    expect(run.summary.requests).toBe(run.sent);
  });

  it("accounts a refused connection as status 0 with the error's code", async () => {
    const gone = await startNoopServer("{}");
    await gone.close();
    const run = await openLoop({
      origin: gone.url,
      rate: 100,
      durationS: 0.03,
      next: request,
      onResponse: (r) => expect(r.error).toMatch(/^ECONNREFUSED /),
    });
    expect(run.summary).toMatchObject({ requests: 3, ok: 0, statuses: { 0: 3 } });
  });

  it("names the option that is wrong", async () => {
    await expect(openLoop({ origin: server.url, rate: 0, durationS: 1, next: request })).rejects.toThrow(/rate/);
    expect(() => new LoadClient(server.url, { connections: 0 })).toThrow(/connections/);
    expect(() => new LoadClient(server.url, { timeoutMs: -1 })).toThrow(/timeoutMs/);
  });
});

describe("closedLoop", () => {
  it("keeps at most `connections` requests in flight and sends `requests` in all", async () => {
    let inFlight = 0;
    let most = 0;
    const run = await closedLoop({
      origin: server.url,
      connections: 4,
      requests: 40,
      next: () => {
        most = Math.max(most, ++inFlight);
        return request();
      },
      onResponse: () => inFlight--,
    });
    expect(run.sent).toBe(40);
    expect(run.summary.sendLagMs.max).toBe(0);
    expect(run.summary).toMatchObject({ requests: 40, ok: 40 });
    expect(most).toBe(4);
  });

  it("reuses a client it is given and leaves it open", async () => {
    const client = new LoadClient(server.url, { connections: 2 });
    try {
      await closedLoop({ origin: server.url, client, connections: 2, requests: 4, next: request });
      const again = await closedLoop({
        origin: server.url,
        client,
        connections: 2,
        stopWhen: () => false,
        requests: 2,
        next: request,
      });
      expect(again.summary.ok).toBe(2);
      // Alone, a request is timed from its send.
      expect(await client.send(request())).toMatchObject({ dueMs: 0, sendLagMs: 0, status: 200 });
    } finally {
      await client.close();
    }
  });

  it("refuses a client of another server than origin", async () => {
    const client = new LoadClient(server.url);
    await expect(
      closedLoop({ origin: "http://127.0.0.1:9", client, connections: 1, requests: 1, next: request }),
    ).rejects.toThrow(/not of origin/);
    await client.close();
  });

  it("needs something to end it", async () => {
    await expect(closedLoop({ origin: server.url, connections: 1, next: request })).rejects.toThrow(/durationS/);
  });
});

describe("runClosedLoop", () => {
  it("numbers the steps across loops and stops before the step stop refuses", async () => {
    const steps: number[] = [];
    const taken = await runClosedLoop(
      3,
      (i) => i >= 10,
      async (i) => {
        steps.push(i);
        await Promise.resolve();
      },
    );
    expect(taken).toBe(10);
    expect(steps.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });
});
