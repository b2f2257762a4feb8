import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSubcommands } from "../../tools/cli/command.ts";
import { PoolClient } from "../../tools/rollout/client.ts";
import { ROLLOUT_COMMANDS } from "../../tools/rollout/commands.ts";
import { runController } from "../../tools/rollout/controller.ts";
import { biasedDigits } from "../support/candidates.ts";
import { freePort } from "../support/processes.ts";
import {
  addVersion,
  classifyRows,
  copyModels,
  get,
  metric,
  post,
  startTestServer,
  type TestServer,
  testOptions,
} from "../support/regional-server.ts";

// The controller against two real pools ("regions") in this process, with traffic flowing: it holds no
// state, reads both pools' evidence, and moves both.
const TOKEN = "controller-token";
let models: ReturnType<typeof copyModels>;
let pools: TestServer[];
beforeAll(async () => {
  models = copyModels();
  await addVersion(models.dir, "digits", "2", { gates: "passed" });
  const biased = biasedDigits(0.05);
  await addVersion(models.dir, "digits", "3", { bytes: biased.bytes, accuracy: biased.accuracy, gates: "passed" });
  pools = await Promise.all(
    ["us", "eu"].map((region) =>
      startTestServer(testOptions(["--models", models.dir, "--region", region], { ADMIN_TOKEN: TOKEN })),
    ),
  );
  process.env.ADMIN_TOKEN = TOKEN;
});
afterAll(async () => {
  delete process.env.ADMIN_TOKEN;
  await Promise.all(pools.map((p) => p.shutdown()));
  models.remove();
});

const poolsFlag = () => pools.map((p) => p.url).join(",");
async function rollout(...argv: string[]) {
  const lines: string[] = [];
  const code = await runSubcommands(
    [...argv, "--pools", poolsFlag()],
    ROLLOUT_COMMANDS,
    {
      log: (l) => lines.push(l),
      note: (l) => lines.push(l),
    },
    "rollout",
  );
  return { code, text: lines.join("\n") };
}

/** Requests to both pools until `done` resolves; each answer's status is kept, with the body of any but 200. */
function traffic(done: Promise<unknown>): Promise<{ statuses: number[]; failures: string[] }> {
  const statuses: number[] = [];
  const failures: string[] = [];
  let stop = false;
  void done.finally(() => {
    stop = true;
  });
  const loop = async (pool: TestServer, offset: number) => {
    for (let i = offset; !stop; i++) {
      // Slightly different inputs each time: the canary's share is of distinct inputs.
      const body = classifyRows(i % 362);
      (body.inputs as number[])[0] = (i / 362) % 1;
      const res = await post(`${pool.url}/v1/classify`, body);
      statuses.push(res.status);
      if (res.status !== 200) failures.push(`${res.status} ${JSON.stringify(res.body)}`);
    }
  };
  return Promise.all(pools.map((p, i) => loop(p, i * 100))).then(() => ({ statuses, failures }));
}

// A lower minimum sample keeps the suite short. Both rollouts use a smaller alpha: a test of a version no worse
// than the stable one rejects by chance at most alpha / (1 - beta) of the time per step (0.1% at the default
// 0.001), which a suite run twice a day would meet: the identical candidate's five steps, and the latency and
// error tests racing the agreement test to the 5% candidate's rollback. The bound on acceptance barely moves.
const strict = ["--min-samples", "100", "--alpha", "0.00001"];

describe("npm run rollout against two pools", () => {
  it("refuses to start without an admin token or a candidate", async () => {
    expect((await rollout("start", "--model", "digits")).code).toBe(2);
    const res = await rollout("start", "--model", "digits", "--candidate", "9");
    expect(res.code).toBe(1);
    expect(res.text).toMatch(/the rollout did not start: .*model "digits" has no version 9 in config.json/);
  });

  it("says for each pool whether it refused the call (a wrong token) or was never reached", async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    process.env.ADMIN_TOKEN = "not-the-pools-token";
    try {
      const lines: string[] = [];
      const code = await runSubcommands(
        ["status", "--pools", `${pools[0]!.url},${closed}`],
        ROLLOUT_COMMANDS,
        { log: (l) => lines.push(l), note: (l) => lines.push(l) },
        "rollout",
      );
      expect(code).toBe(1);
      expect(lines.join("\n")).toMatch(
        /no pool answered its repository index: \S+ \(HTTP 401: .*\(is ADMIN_TOKEN the pools' admin token\?\)\), \S+ \(unreachable \(ECONNREFUSED\): connect ECONNREFUSED 127\.0\.0\.1:\d+\)/,
      );
    } finally {
      process.env.ADMIN_TOKEN = TOKEN;
    }
  });

  it("promotes a candidate identical to the stable version through every step", async () => {
    const started = await rollout("start", "--model", "digits", "--candidate", "2", "--shadow", ...strict);
    expect(started.code).toBe(0);
    expect(started.text).toMatch(
      /digits 2 over 1 \(rollout \d+, revision \d+\): step 1 of 5 \(\[0\] -> 1 -> 5 -> 25 -> 100%\)/,
    );
    const lines: string[] = [];
    const controller = runController({
      client: new PoolClient(TOKEN),
      pools: pools.map((p) => ({ name: p.url, url: p.url })),
      model: "digits",
      intervalMs: 50,
      log: (l) => lines.push(l),
    });
    const { statuses, failures } = await traffic(controller);
    expect(await controller, lines.join("\n")).toBe("promoted");
    expect(statuses.length).toBeGreaterThan(0);
    expect(failures).toEqual([]);
    const decisions = lines.filter((l) => /^\d\d:\d\d:\d\d digits 2: /.test(l));
    expect(decisions.map((l) => l.replace(/^\S+ /, ""))).toEqual([
      "digits 2: 0% -> 1%: every test passed at 0%",
      "digits 2: 1% -> 5%: every test passed at 1%",
      "digits 2: 5% -> 25%: every test passed at 5%",
      "digits 2: 25% -> 100%: every test passed at 25%",
      "digits 2: PROMOTED version 2: every test passed at every step (0 -> 1 -> 5 -> 25 -> 100%)",
    ]);
    expect(lines.join("\n")).toMatch(/set "version": "2" in models\/digits\/config.json/);
    for (const pool of pools) {
      expect((await post(`${pool.url}/v1/classify`, classifyRows(0))).body.version).toBe("2");
    }
    const status = await rollout("status", "--model", "digits");
    expect(status.text).toMatch(/promoted: every test passed/);
    // Without --model: every model with a rollout.
    const all = await rollout("status");
    expect(all.text).toMatch(/^digits 2 over 1 \(rollout \d+, revision \d+\): promoted/);
    expect(all.text).not.toMatch(/breast-cancer/);
    const json = JSON.parse((await rollout("status", "--json")).text);
    expect(json.map((r: { model: string }) => r.model)).toEqual(["digits"]);
  });

  it("rolls back a candidate that disagrees on 5% of rows, in both pools, with no failed request", async () => {
    // Version 2 serves now; version 3 (derived from 1) disagrees with it on about 5% of rows.
    const started = await rollout("start", "--model", "digits", "--candidate", "3", ...strict);
    expect(started.code).toBe(0);
    const lines: string[] = [];
    const controller = runController({
      client: new PoolClient(TOKEN),
      pools: pools.map((p) => ({ name: p.url, url: p.url })),
      model: "digits",
      intervalMs: 50,
      log: (l) => lines.push(l),
    });
    const { statuses, failures } = await traffic(controller);
    expect(await controller, lines.join("\n")).toBe("rolled-back");
    expect(statuses.length).toBeGreaterThan(0);
    expect(failures).toEqual([]);
    expect(lines.join("\n")).toMatch(/ROLLED BACK version 3: at 1%: agreement: \d+ disagreeing of \d+ rows compared/);
    for (const pool of pools) {
      expect((await post(`${pool.url}/v1/classify`, classifyRows(0))).body.version).toBe("2");
      const text = (await get(`${pool.url}/metrics`)).body as string;
      expect(metric(text, "edgecascade_rollout_rollbacks_total", { model: "digits" })).toBe(1);
    }
  });

  it("promote and rollback by hand act on the running rollout only", async () => {
    expect((await rollout("rollback", "--model", "digits")).text).toMatch(/digits has no running rollout/);
  });
});
