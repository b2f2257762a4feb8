import { expect } from "vitest";
import { argmax, edgeAnswers, type HeldoutRow } from "../../protocol/heldout.ts";
import { calibrationOf } from "../../protocol/model-config.ts";
import type { ClassifyResponse } from "../../protocol/types.ts";
import type { EdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { heldout, modelConfig } from "../support/heldout.ts";

export const THRESHOLD = calibrationOf(modelConfig("digits-edge")).threshold;
/** Held-out rows the edge model answers on its own, and the ones it must forward. */
export const confidentRows = heldout.rows.filter((r) => edgeAnswers(r, THRESHOLD, "digits-edge"));
export const unsureRows = heldout.rows.filter((r) => !edgeAnswers(r, THRESHOLD, "digits-edge"));
/** Largest difference from the fixture's expected outputs (onnxruntime-node's) allowed for either runtime. */
export const TOLERANCE = 1e-5;

export interface Answer<T = ClassifyResponse> {
  status: number;
  headers: Headers;
  body: T;
}

/** POST JSON to the Worker (through Miniflare's dispatchFetch, so `cf` can be set per request). */
export async function post<T = ClassifyResponse>(
  worker: EdgeWorker,
  path: string,
  body: unknown,
  init: { headers?: Record<string, string>; cf?: Record<string, unknown> } = {},
): Promise<Answer<T>> {
  const response = await worker.dispatchFetch(`${worker.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...init.headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...(init.cf ? { cf: init.cf } : {}),
  });
  return {
    status: response.status,
    headers: response.headers as unknown as Headers,
    body: (await response.json()) as T,
  };
}

export const classify = (
  worker: EdgeWorker,
  rows: HeldoutRow[],
  parameters?: Record<string, unknown>,
  init?: Parameters<typeof post>[3],
) => post(worker, "/v1/classify", { model: "digits", inputs: rows.map((r) => r.input), parameters }, init);

export async function getJson<T = unknown>(
  worker: EdgeWorker,
  path: string,
  headers: Record<string, string> = {},
  cf?: Record<string, unknown>,
) {
  const response = await worker.dispatchFetch(`${worker.url}${path}`, { headers, ...(cf ? { cf } : {}) });
  return {
    status: response.status,
    headers: response.headers as unknown as Headers,
    body: (await response.json()) as T,
  };
}

/** Server-Timing entries by name: `cache;dur=0.0;desc="hit-l1"` -> {cache: {dur: 0, desc: "hit-l1"}}. */
export function serverTiming(headers: Headers): Record<string, { dur?: number; desc?: string }> {
  const out: Record<string, { dur?: number; desc?: string }> = {};
  for (const entry of (headers.get("server-timing") ?? "").split(",")) {
    const [name, ...params] = entry.trim().split(";");
    if (!name) continue;
    const metric: { dur?: number; desc?: string } = {};
    for (const p of params) {
      const [k, v] = p.split("=");
      if (k === "dur") metric.dur = Number(v);
      if (k === "desc") metric.desc = v?.replace(/^"|"$/g, "");
    }
    out[name] = metric;
  }
  return out;
}

/** Each prediction's scores match `model`'s expected probabilities for its row, and the class is the argmax. */
export function expectScores(body: ClassifyResponse, rows: HeldoutRow[], model: "digits" | "digits-edge") {
  expect(body.predictions).toHaveLength(rows.length);
  for (const [i, row] of rows.entries()) {
    const expected = row.expected[model]!;
    const prediction = body.predictions[i]!;
    expect(prediction.class).toBe(argmax(expected));
    for (const [c, p] of expected.entries()) expect(Math.abs(prediction.scores[c]! - p)).toBeLessThanOrEqual(TOLERANCE);
  }
}

/** Where requests come from, as `request.cf` says (Cloudflare sends coordinates as strings). */
export const NEW_YORK = { latitude: "40.71", longitude: "-74.01", continent: "NA", colo: "EWR" };
export const FRANKFURT = { latitude: "50.11", longitude: "8.68", continent: "EU", colo: "FRA" };
/** Region locations for REGIONS: Ashburn, Frankfurt and Tokyo. */
export const US_EAST = { latitude: 39.04, longitude: -77.49, continent: "NA" };
export const EU_CENTRAL = { latitude: 50.11, longitude: 8.68, continent: "EU" };
export const TOKYO = { latitude: 35.68, longitude: 139.69, continent: "AS" };

/** The REGIONS var for pools (or closed ports) at these locations. */
export function regionsVar(regions: { name: string; url: string; at: { latitude: number; longitude: number } }[]) {
  return JSON.stringify(regions.map((r) => ({ name: r.name, url: r.url, ...r.at })));
}

/** The REGIONS var of a us pool in Virginia and an eu pool in Frankfurt, the pair most suites run. */
export function usEuRegions(us: { url: string }, eu: { url: string }): string {
  return regionsVar([
    { name: "us", url: us.url, at: US_EAST },
    { name: "eu", url: eu.url, at: EU_CENTRAL },
  ]);
}

export interface RegionStatus {
  name: string;
  breaker: { state: string; until?: number; failures?: number };
  hedgeDelayMs: number;
  /** For a request from where the status request came (its `cf`). */
  expectedAnswerMs: number | "cut-off" | null;
  lastWarmProbe: { ms: number; at: number; cutOff?: boolean } | null;
  /** The evidence the isolate keeps per place. */
  places: { place: string | null; expectedAnswerMs: number | "cut-off" | null; samples: number }[];
  counters: Record<
    | "admitted"
    | "answered"
    | "failed"
    | "timedOut"
    | "cancelled"
    | "wrongVersion"
    | "modelUnavailable"
    | "shed"
    | "shedBackoff"
    | "refused"
    | "tooFar"
    | "hedges"
    | "warmProbes",
    number
  >;
}

export interface StatusBody {
  servedVersions: Record<string, string>;
  regionStatus: {
    at: number;
    regions: {
      name: string;
      ready: boolean;
      versions?: Record<string, string>;
      error?: string;
    }[];
  } | null;
  isolate: { hedgeTokens: number; regions: RegionStatus[] };
}

/** This isolate's view of one region (GET /status/regions), for requests from where `cf` says. */
export async function regionStatus(
  worker: EdgeWorker,
  name: string,
  cf?: Record<string, unknown>,
): Promise<RegionStatus> {
  const { body } = await getJson<StatusBody>(worker, "/status/regions", {}, cf);
  const region = body.isolate.regions.find((r) => r.name === name);
  if (!region) throw new Error(`no region ${name} in /status/regions`);
  return region;
}

/** A port nothing listens on: bound once by the OS, then closed. */
export async function closedPort(): Promise<number> {
  const { createServer } = await import("node:net");
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Vars that turn hedging off, for suites that assert which region answered: on a loaded machine the nearest
 * region can take longer than the default hedge delay (5 ms), and a hedge to the next region may then win.
 */
export const NO_HEDGES = { HEDGE_BUDGET_RATIO: "0", HEDGE_BUDGET_BURST: "0" };

/**
 * A warm isolate, as a colo's is after its first requests: every edge variant's session created
 * (`GET /v2/health/ready` loads them). A cold one forwards its first requests while the sessions are created
 * (docs/edge.md, *Cold isolates*; test/edge/cold-isolate.test.ts).
 */
export async function warmEdge(worker: EdgeWorker): Promise<EdgeWorker> {
  const response = await worker.dispatchFetch(`${worker.url}/v2/health/ready`);
  if (response.status !== 200)
    throw new Error(`edge variants did not load: ${response.status} ${await response.text()}`);
  return worker;
}
