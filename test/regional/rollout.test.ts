import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ROLLOUT_HEADER } from "../../protocol/headers.ts";
import { parseRolloutHeader } from "../../protocol/rollout/header.ts";
import type { RolloutState } from "../../protocol/rollout/state.ts";
import { biasedDigits } from "../support/candidates.ts";
import { heldout } from "../support/heldout.ts";
import { until } from "../support/regional-process.ts";
import {
  addVersion,
  classifyRows,
  copyModels,
  counted,
  get,
  type JsonBody,
  metric,
  post,
  startTestServer,
  type TestServer,
  TOLERANCE,
  testOptions,
  worstDifference,
} from "../support/regional-server.ts";
import { advance, promote, rollBack, rolloutOf } from "../support/rollout.ts";

const TOKEN = "admin-token-for-tests";
const auth = { authorization: `Bearer ${TOKEN}` };

let models: ReturnType<typeof copyModels>;
let server: TestServer;
beforeAll(async () => {
  models = copyModels();
  await addVersion(models.dir, "digits", "2", { gates: "passed" }); // identical to 1
  const biased = biasedDigits(0.05);
  await addVersion(models.dir, "digits", "3", { bytes: biased.bytes, accuracy: biased.accuracy, gates: "passed" });
  await addVersion(models.dir, "digits", "4"); // never checked
  await addVersion(models.dir, "digits", "5", { gates: "failed" });
  await addVersion(models.dir, "digits", "6", { gates: "passed" }); // slower, on the shadow's clock
  await addVersion(models.dir, "digits", "7", { gates: "passed" }); // loads, then every run fails
  // The shadow times its runs on a clock this test owns: each run moves it by 1 ms, 4 ms for version 6. What the
  // latency evidence says of a slower candidate is then exact, whatever else the machine runs.
  server = await startTestServer(testOptions(["--models", models.dir], { ADMIN_TOKEN: TOKEN }), {
    shadowClock: () => shadowMs,
    wrapSession: (session, { version }) => ({
      run: (data, batch) => {
        if (version === "7") return Promise.reject(new Error("candidate session broke"));
        shadowMs += version === "6" ? 4 : 1;
        return session.run(data, batch);
      },
      release: () => session.release(),
    }),
  });
});
let shadowMs = 0;
afterAll(async () => {
  await server.shutdown();
  models.remove();
});

const rolloutUrl = () => `${server.url}/v2/repository/models/digits/rollout`;
async function put(state: RolloutState, headers: Record<string, string> = auth) {
  const { request } = await import("undici");
  const res = await request(rolloutUrl(), {
    method: "PUT",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(state),
  });
  return { status: res.statusCode, body: (await res.body.json()) as JsonBody };
}
const status = async () => (await get(rolloutUrl(), auth)).body;
const classify = (from: number, extra: Record<string, unknown> = {}) =>
  post(`${server.url}/v1/classify`, { ...classifyRows(from), ...extra });
/** Every held-out row once; the versions that answered them. */
async function sweep(): Promise<string[]> {
  const versions: string[] = [];
  for (let i = 0; i < heldout.rows.length; i++) versions.push((await classify(i)).body.version);
  return versions;
}
let revision = 1;

describe("a rollout's start is refused", () => {
  it.each([
    ["4", /digits version 4 has no release gates record; run `npm run model -- check --name digits --version 4` first/],
    ["5", /digits version 5 failed its release gates/],
  ])("for version %s, without a passing gates record", async (candidate, reason) => {
    const res = await put(rolloutOf({ candidate, revision: revision++ }));
    expect(res).toMatchObject({ status: 409, body: { code: "gates_not_passed" } });
    expect(res.body.error).toMatch(reason);
    expect((await status()).state).toBeNull();
  });

  it("for a version whose file changed since its gates passed", async () => {
    const { readFileSync, writeFileSync } = await import("node:fs");
    const path = `${models.dir}/digits/config.json`;
    const config = JSON.parse(readFileSync(path, "utf8"));
    config.versions["5"].gates = { ...config.versions["2"].gates, sha256: "0".repeat(64) };
    writeFileSync(path, JSON.stringify(config));
    const res = await put(rolloutOf({ candidate: "5", revision: revision++ }));
    expect(res.body.error).toMatch(
      /gates were checked for another file \(sha256 000000000000…, the file is [0-9a-f]{12}…\)/,
    );
  });

  it("without the admin token, or with a malformed state", async () => {
    expect((await put(rolloutOf({ candidate: "2", revision: revision++ }), {})).status).toBe(401);
    expect((await get(rolloutUrl())).status).toBe(401);
    const bad = { ...rolloutOf({ candidate: "2", revision: revision++ }), step: 9 };
    expect(await put(bad)).toMatchObject({ status: 400, body: { error: '"step" 9 is past the last of 4 steps' } });
    const other = rolloutOf({ model: "breast-cancer", candidate: "2", revision: revision++ });
    expect((await put(other)).body.error).toBe('"model" is "breast-cancer"; this is the rollout of "digits"');
  });
});

describe("shadow, canary, rollback and promotion in one pool", () => {
  let state: RolloutState;

  it("in shadow, runs the candidate on copies, answers nothing with it, and says so in metadata and headers", async () => {
    // A queue for every copy: how many run is not what this test is about (shadow.ts drops what cannot wait).
    const config = { steps: [0, 50, 100], minSamples: 20, shadow: { sample: 1, maxQueue: 64 } };
    state = rolloutOf({ candidate: "2", revision: revision++, config });
    const started = await put(state);
    expect(started).toMatchObject({ status: 200, body: { serving: "1", candidate: "2", state: { phase: "running" } } });
    for (let i = 0; i < 60; i++) {
      const res = await classify(i);
      expect(res.body.version).toBe("1");
      expect(worstDifference(res.body.predictions, i)).toBeLessThanOrEqual(TOLERANCE);
      expect(parseRolloutHeader(res.headers[ROLLOUT_HEADER])).toMatchObject({
        candidate: "2",
        percent: 0,
        phase: "running",
      });
    }
    await until("shadow runs", async () => (await status()).evidence.shadow.ran >= 50);
    const { evidence } = await status();
    expect(evidence).toMatchObject({
      id: state.id,
      step: 0,
      live: { stable: 60, candidate: 0 },
      comparisons: { disagreements: 0 },
    });
    expect(evidence.comparisons.rows).toBe(evidence.shadow.ran);
    expect(evidence.candidate).toEqual({ runs: evidence.shadow.ran, errors: 0 });
    const meta = (await get(`${server.url}/v2/models/digits`)).body;
    expect(meta).toMatchObject({ versions: ["1"], rollout: { candidate: "2", percent: 0, phase: "running" } });
    // Pinning the candidate is a 404 while it answers no one.
    expect((await classify(0, { version: "2" })).status).toBe(404);
    const text = (await get(`${server.url}/metrics`)).body as string;
    expect(metric(text, "edgecascade_rollout_percent", { model: "digits", candidate: "2" })).toBe(0);
    expect(metric(text, "edgecascade_rollout_shadow_rows_total", { model: "digits", labels: "agree" })).toBeGreaterThan(
      0,
    );
  });

  it("refuses a load, and a second rollout, while this one runs", async () => {
    const load = await post(`${server.url}/v2/repository/models/digits/load`, "", auth);
    expect(load).toMatchObject({ status: 409, body: { code: "conflict" } });
    expect(load.body.error).toMatch(/model "digits" is in a rollout \(candidate version 2\)/);
    const second = await put(rolloutOf({ candidate: "3", revision: revision++ }));
    expect(second.body.error).toMatch(/rollout \d+ \(version 2\) is running/);
  });

  it("at a canary step, sends about its share of inputs to the candidate, each input always to the same version", async () => {
    state = advance(state, 1);
    revision = state.revision + 1;
    expect((await put(state)).status).toBe(200);
    const first = await sweep();
    const again = await sweep();
    expect(again).toEqual(first);
    const share = first.filter((v) => v === "2").length / first.length;
    expect(share).toBeGreaterThan(0.4);
    expect(share).toBeLessThan(0.6);
    expect((await classify(0, { version: "2" })).body.version).toBe("2");
    expect((await classify(0, { version: "1" })).body.version).toBe("1");
    const { evidence } = await status();
    expect(evidence.step).toBe(1);
    expect(evidence.live.candidate + evidence.live.stable).toBe(2 * heldout.rows.length + 2);
  });

  it("rolls back: the candidate is retired, every answer is the stable version's, the rollback counted", async () => {
    state = rollBack(state, "agreement breached");
    revision = state.revision + 1;
    const res = await put(state);
    expect(res.body).toMatchObject({
      serving: "1",
      candidate: null,
      state: { phase: "rolled-back", reason: "agreement breached" },
    });
    expect(new Set(await sweep())).toEqual(new Set(["1"]));
    const text = (await get(`${server.url}/metrics`)).body as string;
    expect(metric(text, "edgecascade_rollout_rollbacks_total", { model: "digits" })).toBe(1);
    expect(metric(text, "edgecascade_rollout_percent", { model: "digits", candidate: "2" })).toBe(0);
    // The same revision again is a no-op; an older one is refused.
    expect((await put(state)).status).toBe(200);
    expect((await put({ ...state, revision: state.revision - 1 })).status).toBe(409);
  });

  it("records disagreements of a candidate that changes labels, and slow shadow runs of a slower one", async () => {
    // Every copy is kept (how many the shadow keeps up with is not what this test is about).
    const config = { steps: [0, 100], shadow: { sample: 1, maxQueue: 300 } };
    const biased = rolloutOf({ candidate: "3", revision: revision++, config });
    expect((await put(biased)).body).toMatchObject({ candidate: "3" });
    for (let i = 0; i < 300; i++) await classify(i);
    await until("shadow runs", async () => (await status()).evidence.shadow.ran >= 250);
    const e = (await status()).evidence;
    expect(e.comparisons.disagreements / e.comparisons.rows).toBeGreaterThan(0.02);
    await put(rollBack(biased));

    const slow = rolloutOf({ candidate: "6", revision: biased.revision + 2, config });
    revision = slow.revision + 1;
    await put(slow);
    for (let i = 0; i < 300; i++) await classify(i);
    await until("the shadow queue drained", async () => {
      const { shadow } = (await status()).evidence;
      return shadow.ran + shadow.dropped === shadow.offered;
    });
    const s = (await status()).evidence;
    // Every candidate run takes 4 ms to the stable version's 1 (plus 1 for the one live request that may start
    // during a shadow run): the slowest runs of every block of 20 pairs are all the candidate's (a coin toss
    // would give half of them).
    expect(s.latency.tail).toBeGreaterThanOrEqual(2);
    expect(s.latency.slow).toBe(s.latency.tail);
    expect([1, 2]).toContain(s.shadowMs.stable);
    expect([4, 5]).toContain(s.shadowMs.candidate);
    state = rollBack(slow);
    revision = state.revision + 1;
    await put(state);
  });

  it("keeps a failing shadow run's reason: logged with model, version and cause, and counted", async () => {
    const config = { steps: [0, 100], minSamples: 20, shadow: { sample: 1, maxQueue: 64 } };
    const broken = rolloutOf({ candidate: "7", revision: revision++, config });
    try {
      expect((await put(broken)).body).toMatchObject({ candidate: "7" });
      for (let i = 0; i < 20; i++) expect((await classify(i)).body.version).toBe("1");
      // Each shadow run of version 7 fails; the copies of 20 requests give 20 failures, none answered with it.
      const failures = async () =>
        counted((await get(`${server.url}/metrics`)).body as string, "edgecascade_background_failures_total", {
          task: "shadow-run",
          model: "digits",
          version: "7",
        });
      await until("the shadow runs' failures counted", async () => (await failures()) === 20);
      await until("a shadow run's failure logged", () => server.logs.some((l) => l.msg === "shadow run failed"));
      expect(server.logs.find((l) => l.msg === "shadow run failed")).toMatchObject({
        model: "digits",
        version: "7",
        reason: "candidate session broke",
      });
    } finally {
      state = rollBack(broken);
      revision = state.revision + 1;
      await put(state);
    }
  });

  it("promotes: the candidate serves everyone and is the version the metadata lists", async () => {
    state = rolloutOf({ candidate: "2", revision: revision++, config: { steps: [10, 100] } });
    await put(state);
    state = promote(state, "every test passed");
    revision = state.revision + 1;
    const res = await put(state);
    expect(res.body).toMatchObject({ serving: "2", candidate: null, state: { phase: "promoted" } });
    expect(new Set(await sweep())).toEqual(new Set(["2"]));
    expect((await get(`${server.url}/v2/models/digits`)).body).toMatchObject({
      versions: ["2"],
      rollout: { stable: "1", candidate: "2", phase: "promoted", percent: 100 },
    });
    const text = (await get(`${server.url}/metrics`)).body as string;
    expect(metric(text, "edgecascade_rollout_promotions_total", { model: "digits" })).toBe(1);
    // The pool's log comes through a pipe: it may arrive after the answer.
    await until("the promotion logged", () =>
      server.logs.some((l) => l.msg === "rollout promoted: the candidate serves"),
    );
  });
});
