import { request } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RolloutState } from "../../protocol/rollout/state.ts";
import { copiedFrom, repositoryOfCopies } from "../../scripts/stack/model-copies.ts";
import { type RegionalPool, startRegionalPool } from "../../scripts/stack/regional-pool.ts";
import { heldoutOf } from "../support/heldout.ts";
import { childPids } from "../support/processes.ts";
import { until } from "../support/regional-process.ts";
import { addVersion, classifyRows, copyModels, metric } from "../support/regional-server.ts";
import { rollBack, rolloutOf } from "../support/rollout.ts";

// A pool of two worker processes: model control and rollouts must reach both, whichever takes the call.
const TOKEN = "cluster-admin-token";
const auth = { authorization: `Bearer ${TOKEN}` };
let models: ReturnType<typeof copyModels>;
let pool: RegionalPool;
const logs: string[] = [];
beforeAll(async () => {
  models = copyModels();
  await addVersion(models.dir, "digits", "2", { gates: "passed" });
  await addVersion(models.dir, "digits", "3", { gates: "passed" });
  pool = await startRegionalPool({
    region: "us",
    workers: 2,
    modelsDir: models.dir,
    env: { ADMIN_TOKEN: TOKEN },
    onLog: (line) => logs.push(line),
  });
});
afterAll(async () => {
  await pool?.stop();
  models?.remove();
});

/** One call on a connection of its own, so that calls spread over the workers as new clients' would. */
async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await request(`${pool.url}${path}`, {
    method: method as "GET",
    reset: true,
    // A connection the primary hands to a worker as it is killed is lost with it: time out rather than hang.
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
    headers: { "content-type": "application/json", ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.body.text();
  return { status: res.statusCode, body: text.startsWith("{") || text.startsWith("[") ? JSON.parse(text) : text };
}
const versionsAnswering = async (n: number) => {
  const seen = new Set<string>();
  for (let i = 0; i < n; i++) seen.add((await call("POST", "/v1/classify", classifyRows(i))).body.version);
  return seen;
};
const putRollout = (state: RolloutState) => call("PUT", "/v2/repository/models/digits/rollout", state, auth);
const rolloutStatus = async () => (await call("GET", "/v2/repository/models/digits/rollout", undefined, auth)).body;

describe("model control with --workers 2", () => {
  it("a load reaches every worker", async () => {
    const res = await call("POST", "/v2/repository/models/digits/load", { parameters: { version: "2" } }, auth);
    expect(res).toMatchObject({ status: 200, body: { version: "2", workers: { answered: 2, consistent: true } } });
    expect(await versionsAnswering(40)).toEqual(new Set(["2"]));
    await call("POST", "/v2/repository/models/digits/load", { parameters: { version: "1" } }, auth);
    expect(await versionsAnswering(40)).toEqual(new Set(["1"]));
  });

  it("a refused load says so for every worker", async () => {
    const res = await call("POST", "/v2/repository/models/digits/load", { parameters: { version: "9" } }, auth);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatch(
      /version 9 is not listed in config.json; version 1 keeps serving \(in 2 of 2 workers of this pool\)/,
    );
  });

  let state: RolloutState;
  it("a rollout reaches every worker; its status sums their evidence and counts a rollback once", async () => {
    state = rolloutOf({ candidate: "3", revision: 1, config: { steps: [0, 100] } });
    expect((await putRollout(state)).body).toMatchObject({
      candidate: "3",
      workers: { answered: 2, consistent: true },
    });
    const sent = 60;
    await versionsAnswering(sent);
    const status = await rolloutStatus();
    expect(status).toMatchObject({ serving: "1", candidate: "3", workers: { answered: 2, consistent: true } });
    expect(status.evidence.live.stable).toBe(sent);
    state = rollBack(state);
    expect((await putRollout(state)).status).toBe(200);
    const text = (await call("GET", "/metrics")).body as string;
    expect(metric(text, "edgecascade_rollout_rollbacks_total", { model: "digits" })).toBe(1);
  });

  it("a worker that replaces a dead one takes the pool's latest rollout state", async () => {
    state = rolloutOf({ candidate: "3", revision: state.revision + 1, config: { steps: [0, 100] } });
    await putRollout(state);
    const [victim] = childPids(pool.pid);
    process.kill(victim!, "SIGKILL");
    // Poll only once the primary has seen the worker die: a connection it hands to the victim before that is
    // lost with it, and the call would wait out its 10 s timeout.
    await until("the primary to see the worker die", () =>
      logs.some((l) => l.includes("a worker died; starting a replacement")),
    );
    await until(
      "a replacement worker caught up",
      async () => {
        const s = await rolloutStatus().catch(() => undefined);
        return s?.workers?.answered === 2 && s.workers.consistent && s.state?.revision === state.revision;
      },
      30_000,
    );
    expect(logs.some((l) => l.includes("replaying model control to a replacement worker"))).toBe(true);
  });
});

// Models loaded on demand in a pod of two workers, placed by hashing (regional/peers/): each model is loaded by
// its owning worker only; a request the other worker takes runs there.
describe("models on demand with --workers 2, placed by hashing", () => {
  let copies: ReturnType<typeof repositoryOfCopies>;
  let hashed: RegionalPool;
  beforeAll(async () => {
    copies = repositoryOfCopies(6);
    hashed = await startRegionalPool({
      region: "eu",
      workers: 2,
      modelsDir: copies.dir,
      env: { ADMIN_TOKEN: TOKEN },
      extraArgs: ["--load-policy", "on-demand", "--model-memory-mb", "64"],
    });
  });
  afterAll(async () => {
    await hashed?.stop();
    copies?.remove();
  });

  const ask = async (path: string, body?: unknown) => {
    const res = await request(`${hashed.url}${path}`, {
      method: body === undefined ? "GET" : "POST",
      reset: true, // a connection of its own: the primary hands connections to the workers in turn
      headers: { "content-type": "application/json", ...auth },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.body.text();
    return { status: res.statusCode, body: text.startsWith("{") || text.startsWith("[") ? JSON.parse(text) : text };
  };

  it("loads each model in one worker, whichever worker its requests reach", async () => {
    for (const name of copies.names) {
      const inputs = heldoutOf(copiedFrom(name)).rows[0]!.input;
      // Four requests on new connections: both workers take some.
      for (let i = 0; i < 4; i++) {
        expect(await ask("/v1/classify", { model: name, inputs })).toMatchObject({
          status: 200,
          body: { model: name },
        });
      }
    }
    const text = (await ask("/metrics")).body as string;
    for (const name of copies.names) {
      expect(metric(text, "edgecascade_model_loads_total", { model: name, outcome: "success" }), name).toBe(1);
      expect(metric(text, "edgecascade_inference_requests_total", { model: name, outcome: "success" }), name).toBe(4);
    }
    // Summed over the workers: six models loaded once each, not twice.
    expect(metric(text, "edgecascade_models_loaded")).toBe(6);
    // The pod's index: every worker's, combined: each model READY once, whichever worker owns it.
    const index = (await ask("/v2/repository/index", {})).body as { name: string; state: string }[];
    expect(index.filter((e) => e.state === "READY").map((e) => e.name)).toEqual([...copies.names].sort());
    // Its readiness is its owner's, whichever worker is asked.
    for (let i = 0; i < 4; i++) expect((await ask(`/v2/models/${copies.names[0]}/ready`)).status).toBe(200);
  });
});
