import { describe, expect, it } from "vitest";
import edgeDocs from "../docs/edge.md?raw";
import readme from "../README.md?raw";
import {
  type EdgeOptions,
  type Env,
  LOCAL_RATE_LIMIT,
  parseEnv,
  SETTINGS,
  SIMULATION_SETTINGS,
  simulationWarning,
} from "./env.ts";

const us = { name: "us", url: "http://127.0.0.1:9001/", latitude: 39.04, longitude: -77.49, continent: "NA" };

const MODELS = ["digits"];

describe("parseEnv", () => {
  it("has documented defaults", () => {
    const options = parseEnv({}, MODELS);
    expect(options).toMatchObject({
      regions: [],
      sharedSecret: undefined,
      allowLocationOverride: false,
      sloBudgetMs: 10,
      maxBudgetMs: 1000,
      rttReserveMaxShare: 0.5,
      warmProbeIntervalMs: 3000,
      reachQuantile: 0.9,
      hedgeDelayMs: 5,
      hedgeBudgetRatio: 0.1,
      hedgeBudgetBurst: 5,
      breakerFailures: 5,
      breakerCooldownMs: 30_000,
      breakerMaxCooldownMs: 300_000,
      cacheTtlS: 300,
      cacheEntries: 10_000,
      cacheBytes: 8 * 1024 * 1024,
      localCacheOnly: false,
      localPlatform: undefined,
      rateLimitPeriodS: 60,
      corsOrigins: "*",
      regionCheckTimeoutMs: 2000,
      regionStatusMemoMs: 5000,
      modelPublicKey: undefined,
      cascadeThresholds: {},
    });
    expect(options.apiKeys).toEqual([]);
  });

  it("keeps MAX_BUDGET_MS at or above SLO_BUDGET_MS", () => {
    expect(parseEnv({ SLO_BUDGET_MS: "2000" }, MODELS).maxBudgetMs).toBe(2000);
    expect(parseEnv({ MAX_BUDGET_MS: "50" }, MODELS).maxBudgetMs).toBe(50);
    expect(() => parseEnv({ MAX_BUDGET_MS: "5" }, MODELS)).toThrow("MAX_BUDGET_MS: must be a number >= 10");
  });

  it("takes LOCAL_PLATFORM memory with its rate limit, and nothing else", () => {
    expect(parseEnv({ LOCAL_PLATFORM: "memory", LOCAL_RATE_LIMIT: "6000" }, MODELS).localPlatform).toEqual({
      rateLimit: 6000,
    });
    expect(() => parseEnv({ LOCAL_PLATFORM: "sqlite" }, MODELS)).toThrow('LOCAL_PLATFORM: must be "memory"');
  });

  it("refuses a renamed variable by its old name, naming the new one", () => {
    expect(() => parseEnv({ PROBE_MEMO_MS: "0" } as Env, MODELS)).toThrow(
      "PROBE_MEMO_MS: renamed REGION_STATUS_MEMO_MS",
    );
    expect(() => parseEnv({ PROBE_TIMEOUT_MS: 50 } as Env, MODELS)).toThrow(
      "PROBE_TIMEOUT_MS: renamed REGION_CHECK_TIMEOUT_MS",
    );
    expect(parseEnv({ REGION_STATUS_MEMO_MS: "0" }, MODELS).regionStatusMemoMs).toBe(0);
  });

  it("reads regions from a JSON string or a wrangler.toml array, trimming the URL's slash", () => {
    const expected = [{ ...us, url: "http://127.0.0.1:9001" }];
    expect(parseEnv({ REGIONS: JSON.stringify([us]) }, MODELS).regions).toEqual(expected);
    expect(parseEnv({ REGIONS: [us] }, MODELS).regions).toEqual(expected);
  });

  it("takes a region's binding only when the Worker has a Fetcher by that name", () => {
    const bound = [{ ...us, binding: "REGION_US" }];
    const withIt = { REGIONS: bound, REGION_US: { fetch: () => undefined } } as unknown as Env;
    expect(parseEnv(withIt, MODELS).regions[0]!.binding).toBe("REGION_US");
    expect(() => parseEnv({ REGIONS: bound }, MODELS)).toThrow(
      'REGIONS: the Worker has no Fetcher binding "REGION_US"',
    );
    expect(() => parseEnv({ REGIONS: [{ ...us, binding: "no spaces" }] }, MODELS)).toThrow(/binding name/);
  });

  it("reads strings and numbers alike, keys and origins as lists", () => {
    const options = parseEnv(
      {
        SLO_BUDGET_MS: "25",
        HEDGE_BUDGET_RATIO: 0.05,
        API_KEYS: " a, b ,,",
        CORS_ORIGINS: "https://a.example, https://b.example",
        ALLOW_LOCATION_OVERRIDE: "true",
        REGIONAL_SHARED_SECRET: "s3cret",
      },
      MODELS,
    );
    expect(options.sloBudgetMs).toBe(25);
    expect(options.hedgeBudgetRatio).toBe(0.05);
    expect(options.apiKeys.map((k) => k.key)).toEqual(["a", "b"]);
    expect(options.corsOrigins).toEqual(["https://a.example", "https://b.example"]);
    expect(options.allowLocationOverride).toBe(true);
    expect(options.sharedSecret).toBe("s3cret");
    const key = `${"A".repeat(43)}=`;
    expect(parseEnv({ MODEL_PUBLIC_KEY: ` ${key}\n` }, MODELS).modelPublicKey).toBe(key);
  });

  it("reads cascade thresholds as JSON or a wrangler.toml table", () => {
    expect(parseEnv({ CASCADE_THRESHOLDS: '{"digits": 0.9}' }, MODELS).cascadeThresholds).toEqual({ digits: 0.9 });
    expect(parseEnv({ CASCADE_THRESHOLDS: { digits: 0 } }, MODELS).cascadeThresholds).toEqual({ digits: 0 });
  });

  it.each<[Env, RegExp]>([
    [{ REGIONS: "[{" }, /^REGIONS: invalid JSON/],
    [{ REGIONS: "{}" }, /^REGIONS: body must be an array/],
    [{ REGIONS: [{ ...us, name: "US East" }] }, /^REGIONS: "0.name" must be 1-32 lowercase/],
    [{ REGIONS: [{ ...us, url: "ftp://x" }] }, /^REGIONS: "0.url" must be http\(s\)/],
    [{ REGIONS: [{ ...us, latitude: 91 }] }, /^REGIONS: "0.latitude" must be in \[-90, 90\]/],
    [{ REGIONS: [{ ...us, zone: "x" }] }, /^REGIONS: unknown field "0.zone"/],
    [{ REGIONS: [us, us] }, /^REGIONS: region "us" is listed twice/],
    [{ SLO_BUDGET_MS: "ten" }, /^SLO_BUDGET_MS: must be a number >= 1, got "ten"/],
    [{ SLO_BUDGET_MS: "0" }, /^SLO_BUDGET_MS: must be a number >= 1/],
    [{ HEDGE_BUDGET_RATIO: "1.5" }, /^HEDGE_BUDGET_RATIO: must be a number in \[0, 1\]/],
    [{ RTT_RESERVE_MAX_SHARE: "1" }, /^RTT_RESERVE_MAX_SHARE: must be a number in \[0, 0.9\], got "1"/],
    [{ BREAKER_FAILURES: "2.5" }, /^BREAKER_FAILURES: must be an integer >= 1/],
    [
      { BREAKER_COOLDOWN_MS: "1000", BREAKER_MAX_COOLDOWN_MS: "10" },
      /^BREAKER_MAX_COOLDOWN_MS: must be a number >= 1000/,
    ],
    [{ MODEL_PUBLIC_KEY: "not-a-key" }, /^MODEL_PUBLIC_KEY: must be an Ed25519 public key, base64 of 32 bytes/],
    [{ ALLOW_LOCATION_OVERRIDE: "yes" }, /^ALLOW_LOCATION_OVERRIDE: must be "true" or "false"/],
    [{ CASCADE_THRESHOLDS: "{" }, /^CASCADE_THRESHOLDS: invalid JSON/],
    [{ CASCADE_THRESHOLDS: "0.9" }, /^CASCADE_THRESHOLDS: must be an object of model name -> threshold, got "0.9"/],
    [{ CASCADE_THRESHOLDS: '{"digits": 1.5}' }, /^CASCADE_THRESHOLDS: "digits" must be in \[0, 1\]/],
    [{ CASCADE_THRESHOLDS: { digits: "high" } }, /^CASCADE_THRESHOLDS: "digits" /],
    [{ CASCADE_THRESHOLDS: { cats: 0.5 } }, /^CASCADE_THRESHOLDS: the edge serves no model "cats" \(it serves /],
  ])("refuses %j naming the variable", (env, message) => {
    expect(() => parseEnv(env, MODELS)).toThrow(message);
  });
});

/** The `| `NAME` | kind | default | ... |` rows of a markdown table, from `start` to the next heading. */
function tableRows(doc: string, start: string): { name: string; kind: string; shown: string }[] {
  const from = doc.indexOf(`\n${start}\n`);
  expect(from, start).toBeGreaterThan(-1);
  const section = doc.slice(from + start.length + 2).split(/\n#{2,3} /)[0]!;
  return section
    .split("\n")
    .filter((line) => line.startsWith("| `"))
    .map((line) => {
      const [name, kind, shown] = line.split(" | ").map((cell) => cell.replace(/^\| /, ""));
      return { name: name!.replaceAll("`", ""), kind: kind!, shown: shown! };
    });
}

describe("the configuration table", () => {
  const rows = (settings: object) =>
    Object.values(settings).map((s: { variable: string; shownDefault: string }) => ({
      name: s.variable,
      shown: s.shownDefault,
    }));

  it("is docs/edge.md's configuration table, row by row in its order (bindings are the platform's)", () => {
    const documented = tableRows(edgeDocs, "## Configuration")
      .filter((row) => !row.kind.startsWith("binding"))
      .map(({ name, shown }) => ({ name, shown }));
    expect(documented).toEqual(rows(SETTINGS));
  });

  it("is docs/edge.md's simulation table, with LOCAL_RATE_LIMIT last", () => {
    const documented = tableRows(edgeDocs, "### Simulation").map(({ name, shown }) => ({ name, shown }));
    expect(documented).toEqual([
      ...rows(SIMULATION_SETTINGS),
      { name: LOCAL_RATE_LIMIT.variable, shown: LOCAL_RATE_LIMIT.shownDefault },
    ]);
  });

  it("gives README's edge table the same names and defaults, simulation settings marked", () => {
    const from = readme.indexOf("**Edge Worker** (");
    const section = readme.slice(from, readme.indexOf("**Regional pool** (", from));
    const all = Object.fromEntries(
      [...Object.values(SETTINGS), ...Object.values(SIMULATION_SETTINGS)].map((s) => [s.variable, s]),
    );
    const simulation = new Set<string>(Object.values(SIMULATION_SETTINGS).map((s) => s.variable));
    let checked = 0;
    for (const line of section.split("\n").filter((l) => l.startsWith("| `"))) {
      const [names, shown] = line.split(" | ").map((cell) => cell.replace(/^\| /, ""));
      if (names!.includes("binding")) continue;
      const variables = [...names!.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!);
      const defaults = variables.length === 1 ? [shown!] : shown!.split(/(?<=`), /);
      expect(defaults, line).toHaveLength(variables.length);
      variables.forEach((name, i) => {
        expect(all[name], `README names ${name}`).toBeDefined();
        const cell = defaults[i]!;
        expect(cell.startsWith("`") ? cell.match(/^`[^`]*`/)![0] : cell.split(" ")[0], name).toBe(
          all[name]!.shownDefault,
        );
        expect(names!.includes("(simulation)"), `${name} marked as simulation`).toBe(simulation.has(name));
        checked++;
      });
    }
    expect(checked).toBeGreaterThanOrEqual(15);
  });

  it("states a unit for every duration", () => {
    for (const setting of Object.values(SETTINGS)) {
      if (/_MS$/.test(setting.variable)) expect(setting.unit, setting.variable).toBe("ms");
      if (/_S$/.test(setting.variable)) expect(setting.unit, setting.variable).toBe("s");
    }
  });
});

describe("simulationWarning", () => {
  const base = parseEnv({}, MODELS);
  it("is silent when no simulation setting is on", () => {
    expect(simulationWarning(base)).toBeUndefined();
  });

  it("names every simulation setting that is on", () => {
    const on: EdgeOptions = { ...base, allowLocationOverride: true, localPlatform: { rateLimit: 6000 } };
    expect(simulationWarning(on)).toBe(
      "SIMULATION SETTINGS ON (ALLOW_LOCATION_OVERRIDE=true, LOCAL_PLATFORM=memory (LOCAL_RATE_LIMIT=6000)): " +
        "for local stacks and tests only, never a deployed Worker",
    );
    expect(simulationWarning({ ...base, localCacheOnly: true })).toContain("LOCAL_CACHE_ONLY=true");
  });
});
