import { describe, expect, it } from "vitest";
import edgeDocs from "../docs/edge.md?raw";
import readme from "../README.md?raw";
import { markdownDefault, simulationWarning } from "../tools/cli/table.ts";
import { type Env, parseEnv } from "./env.ts";
import { EDGE_SETTINGS } from "./settings/table.ts";

/** The options of an environment, as the Worker reads them at start-up. */
const options = (env: Env, models: readonly string[] = MODELS) => parseEnv(env, models).options;

const us = { name: "us", url: "http://127.0.0.1:9001/", latitude: 39.04, longitude: -77.49, continent: "NA" };

const MODELS = ["digits"];

describe("parseEnv", () => {
  it("has documented defaults", () => {
    const defaults = options({});
    expect(defaults).toMatchObject({
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
      localRateLimit: 0,
      rateLimitPeriodS: 60,
      corsOrigins: "*",
      regionCheckTimeoutMs: 2000,
      regionStatusMemoMs: 5000,
      modelPublicKey: undefined,
      cascadeThresholds: {},
    });
    expect(defaults.apiKeys).toEqual([]);
  });

  it("keeps MAX_BUDGET_MS at or above SLO_BUDGET_MS", () => {
    expect(options({ SLO_BUDGET_MS: "2000" }).maxBudgetMs).toBe(2000);
    expect(options({ MAX_BUDGET_MS: "50" }).maxBudgetMs).toBe(50);
    expect(() => options({ MAX_BUDGET_MS: "5" })).toThrow(
      'MAX_BUDGET_MS: must be at least SLO_BUDGET_MS (10), got "5"',
    );
  });

  it("takes LOCAL_PLATFORM memory with its rate limit, and nothing else", () => {
    expect(options({ LOCAL_PLATFORM: "memory", LOCAL_RATE_LIMIT: "6000" })).toMatchObject({
      localPlatform: "memory",
      localRateLimit: 6000,
    });
    expect(() => options({ LOCAL_PLATFORM: "sqlite" })).toThrow('LOCAL_PLATFORM: must be memory, got "sqlite"');
  });

  it("refuses a renamed variable by its old name, naming the new one", () => {
    expect(() => options({ PROBE_MEMO_MS: "0" } as Env)).toThrow("PROBE_MEMO_MS: renamed REGION_STATUS_MEMO_MS");
    expect(() => options({ PROBE_TIMEOUT_MS: 50 } as Env)).toThrow("PROBE_TIMEOUT_MS: renamed REGION_CHECK_TIMEOUT_MS");
    expect(options({ REGION_STATUS_MEMO_MS: "0" }).regionStatusMemoMs).toBe(0);
  });

  it("reads regions from a JSON string or a wrangler.toml array, trimming the URL's slash", () => {
    const expected = [{ ...us, url: "http://127.0.0.1:9001" }];
    expect(options({ REGIONS: JSON.stringify([us]) }).regions).toEqual(expected);
    expect(options({ REGIONS: [us] }).regions).toEqual(expected);
  });

  it("takes a region's binding only when the Worker has a Fetcher by that name", () => {
    const bound = [{ ...us, binding: "REGION_US" }];
    const withIt = { REGIONS: bound, REGION_US: { fetch: () => undefined } } as unknown as Env;
    expect(options(withIt).regions[0]!.binding).toBe("REGION_US");
    expect(() => options({ REGIONS: bound })).toThrow('REGIONS: the Worker has no Fetcher binding "REGION_US"');
    expect(() => options({ REGIONS: [{ ...us, binding: "no spaces" }] })).toThrow(/binding name/);
  });

  it("reads strings and numbers alike, keys and origins as lists", () => {
    const read = options({
      SLO_BUDGET_MS: "25",
      HEDGE_BUDGET_RATIO: 0.05,
      API_KEYS: " a, b ,,",
      CORS_ORIGINS: "https://a.example, https://b.example",
      ALLOW_LOCATION_OVERRIDE: "true",
      LOCAL_CACHE_ONLY: true,
      REGIONAL_SHARED_SECRET: "s3cret",
    });
    expect(read.sloBudgetMs).toBe(25);
    expect(read.hedgeBudgetRatio).toBe(0.05);
    expect(read.apiKeys.map((k) => k.key)).toEqual(["a", "b"]);
    expect(read.corsOrigins).toEqual(["https://a.example", "https://b.example"]);
    expect(read.allowLocationOverride).toBe(true);
    expect(read.localCacheOnly).toBe(true);
    expect(read.sharedSecret).toBe("s3cret");
    const key = `${"A".repeat(43)}=`;
    expect(options({ MODEL_PUBLIC_KEY: ` ${key}\n` }).modelPublicKey).toBe(key);
  });

  it("reads cascade thresholds as JSON or a wrangler.toml table", () => {
    expect(options({ CASCADE_THRESHOLDS: '{"digits": 0.9}' }).cascadeThresholds).toEqual({ digits: 0.9 });
    expect(options({ CASCADE_THRESHOLDS: { digits: 0 } }).cascadeThresholds).toEqual({ digits: 0 });
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
    [{ SLO_BUDGET_MS: "1e3" }, /^SLO_BUDGET_MS: must be a number >= 1, got "1e3"/],
    [{ HEDGE_BUDGET_RATIO: "1.5" }, /^HEDGE_BUDGET_RATIO: must be a number from 0 to 1/],
    [{ RTT_RESERVE_MAX_SHARE: "1" }, /^RTT_RESERVE_MAX_SHARE: must be a number from 0 to 0.9, got "1"/],
    [{ BREAKER_FAILURES: "2.5" }, /^BREAKER_FAILURES: must be an integer >= 1/],
    [
      { BREAKER_COOLDOWN_MS: "1000", BREAKER_MAX_COOLDOWN_MS: "10" },
      /^BREAKER_MAX_COOLDOWN_MS: must be at least BREAKER_COOLDOWN_MS \(1000\), got "10"/,
    ],
    [{ MODEL_PUBLIC_KEY: "not-a-key" }, /^MODEL_PUBLIC_KEY: must be an Ed25519 public key, base64 of 32 bytes/],
    [{ ALLOW_LOCATION_OVERRIDE: "yes" }, /^ALLOW_LOCATION_OVERRIDE: must be true or false/],
    [{ CASCADE_THRESHOLDS: "{" }, /^CASCADE_THRESHOLDS: invalid JSON/],
    [{ CASCADE_THRESHOLDS: "0.9" }, /^CASCADE_THRESHOLDS: must be an object of model name -> threshold, got "0.9"/],
    [{ CASCADE_THRESHOLDS: '{"digits": 1.5}' }, /^CASCADE_THRESHOLDS: "digits" must be in \[0, 1\]/],
    [{ CASCADE_THRESHOLDS: { digits: "high" } }, /^CASCADE_THRESHOLDS: "digits" /],
    [{ CASCADE_THRESHOLDS: { cats: 0.5 } }, /^CASCADE_THRESHOLDS: the edge serves no model "cats" \(it serves /],
  ])("refuses %j naming the variable", (env, message) => {
    expect(() => options(env)).toThrow(message);
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
  const ROWS = Object.values(EDGE_SETTINGS) as { env: string; simulation?: true; unit?: string }[];
  const rows = (simulation: boolean) =>
    Object.values(EDGE_SETTINGS)
      .filter((spec) => "simulation" in spec === simulation)
      .map((spec) => ({ name: spec.env, shown: markdownDefault(spec) }));

  it("is docs/edge.md's configuration table, row by row in its order (bindings are the platform's)", () => {
    const documented = tableRows(edgeDocs, "## Configuration")
      .filter((row) => !row.kind.startsWith("binding"))
      .map(({ name, shown }) => ({ name, shown }));
    expect(documented).toEqual(rows(false));
  });

  it("is docs/edge.md's simulation table, row by row in its order", () => {
    const documented = tableRows(edgeDocs, "### Simulation").map(({ name, shown }) => ({ name, shown }));
    expect(documented).toEqual(rows(true));
  });

  it("gives README's edge table the same names and defaults, simulation settings marked", () => {
    const from = readme.indexOf("**Edge Worker** (");
    const section = readme.slice(from, readme.indexOf("**Regional pool** (", from));
    const all = new Map(Object.values(EDGE_SETTINGS).map((spec) => [spec.env as string, spec]));
    let checked = 0;
    for (const line of section.split("\n").filter((l) => l.startsWith("| `"))) {
      const [names, shown] = line.split(" | ").map((cell) => cell.replace(/^\| /, ""));
      if (names!.includes("binding")) continue;
      const variables = [...names!.matchAll(/`([A-Z_]+)`/g)].map((m) => m[1]!);
      const defaults = variables.length === 1 ? [shown!] : shown!.split(/(?<=`), /);
      expect(defaults, line).toHaveLength(variables.length);
      variables.forEach((name, i) => {
        const spec = all.get(name);
        expect(spec, `README names ${name}`).toBeDefined();
        const cell = defaults[i]!;
        expect(cell.startsWith("`") ? cell.match(/^`[^`]*`/)![0] : cell.split(" ")[0], name).toBe(
          markdownDefault(spec!),
        );
        expect(names!.includes("(simulation)"), `${name} marked as simulation`).toBe("simulation" in spec!);
        checked++;
      });
    }
    expect(checked).toBeGreaterThanOrEqual(15);
  });

  it("states a unit for every duration", () => {
    for (const setting of ROWS) {
      if (/_MS$/.test(setting.env)) expect(setting.unit, setting.env).toBe("ms");
      if (/_S$/.test(setting.env)) expect(setting.unit, setting.env).toBe("s");
    }
  });
});

describe("the simulation warning", () => {
  const warning = (env: Env) => simulationWarning(parseEnv(env, MODELS).simulating);

  it("is silent when no simulation setting is on, or each is at its default", () => {
    expect(warning({})).toBeUndefined();
    expect(warning({ ALLOW_LOCATION_OVERRIDE: "false", LOCAL_RATE_LIMIT: 0 })).toBeUndefined();
  });

  it("names every simulation setting that is on, as it was given", () => {
    expect(warning({ ALLOW_LOCATION_OVERRIDE: "true", LOCAL_PLATFORM: "memory", LOCAL_RATE_LIMIT: "6000" })).toBe(
      "SIMULATION SETTINGS ON (ALLOW_LOCATION_OVERRIDE=true, LOCAL_PLATFORM=memory, LOCAL_RATE_LIMIT=6000): " +
        "for tests and local stacks only, never in production",
    );
    expect(warning({ LOCAL_CACHE_ONLY: true })).toContain("LOCAL_CACHE_ONLY=true");
  });
});
