import type { RolloutView } from "../../protocol/rollout/state.ts";
import { signatureHeaders } from "../../protocol/signing.ts";
import type { RegionFetch } from "../forward/region-fetch.ts";
import type { Region } from "../regions/region.ts";

/** What one scheduled probe saw of one region. */
export interface RegionProbe {
  name: string;
  /** `GET /v2/health/ready` answered 200. */
  ready: boolean;
  /** Round trip from wherever the cron ran, in ms: the smallest of the probe's calls to the region. */
  latencyMs?: number;
  /** Per model, the highest version the region lists (`GET /v2/models/<model>`); models it lacks are left out. */
  versions?: Record<string, string>;
  /** Per model, its rollout as the region holds it (`rollout` in the model metadata), if it has had one. */
  rollouts?: Record<string, RolloutView>;
  error?: string;
}

export interface ProbeReport {
  /** Unix ms when the probe ran. */
  at: number;
  regions: RegionProbe[];
}

export interface ProbeOptions {
  /** Logical models whose versions to read. */
  models: readonly string[];
  timeoutMs: number;
  sharedSecret: string | undefined;
  /** How each region is reached, as the forward reaches it (its binding, or global fetch). */
  send: RegionFetch;
}

async function get(region: Region, path: string, options: ProbeOptions): Promise<Response> {
  const headers = options.sharedSecret
    ? await signatureHeaders(options.sharedSecret, { method: "GET", path, body: "" })
    : {};
  return options.send(region, `${region.url}${path}`, { headers, signal: AbortSignal.timeout(options.timeoutMs) });
}

/** The `rollout` of model metadata, if it has the shape of one. */
function rolloutOf(metadata: unknown): RolloutView | undefined {
  const r = (metadata as { rollout?: Partial<RolloutView> })?.rollout;
  const ok =
    r &&
    typeof r.revision === "number" &&
    typeof r.id === "number" &&
    typeof r.stable === "string" &&
    typeof r.candidate === "string" &&
    typeof r.percent === "number" &&
    (r.phase === "running" || r.phase === "promoted" || r.phase === "rolled-back");
  return ok ? (r as RolloutView) : undefined;
}

function highestVersion(metadata: unknown): string | undefined {
  const versions = (metadata as { versions?: unknown })?.versions;
  if (!Array.isArray(versions)) return undefined;
  const numeric = versions.filter((v): v is string => typeof v === "string" && /^\d+$/.test(v));
  return numeric.sort((a, b) => Number(BigInt(a) - BigInt(b))).at(-1);
}

async function probeRegion(region: Region, options: ProbeOptions): Promise<RegionProbe> {
  // The round trip is the smallest of the probe's calls (readiness, each model's metadata), as ping reports
  // a path's latency: one call's time carries whatever queueing it met, and budget-aware routing should not
  // judge a region far because one probe call was slow.
  let latencyMs = Number.POSITIVE_INFINITY;
  const timed = async (path: string) => {
    const started = Date.now();
    const response = await get(region, path, options);
    latencyMs = Math.min(latencyMs, Date.now() - started);
    return response;
  };
  try {
    const ready = await timed("/v2/health/ready");
    await ready.body?.cancel();
    if (!ready.ok) return { name: region.name, ready: false, latencyMs, error: `ready: HTTP ${ready.status}` };
    const versions: Record<string, string> = {};
    const rollouts: Record<string, RolloutView> = {};
    await Promise.all(
      options.models.map(async (model) => {
        const metadata = await timed(`/v2/models/${encodeURIComponent(model)}`);
        const body = metadata.ok ? await metadata.json().catch(() => undefined) : undefined;
        if (!metadata.ok) await metadata.body?.cancel();
        const version = highestVersion(body);
        if (version) versions[model] = version;
        const rollout = rolloutOf(body);
        if (rollout) rollouts[model] = rollout;
      }),
    );
    return {
      name: region.name,
      ready: true,
      latencyMs,
      versions,
      ...(Object.keys(rollouts).length > 0 ? { rollouts } : {}),
    };
  } catch (err) {
    return { name: region.name, ready: false, error: (err as Error).message };
  }
}

/** Probe every region at once: readiness, round-trip time, the version of each model it serves and its rollout. */
export async function probeRegions(regions: readonly Region[], options: ProbeOptions): Promise<ProbeReport> {
  const at = Date.now();
  return { at, regions: await Promise.all(regions.map((r) => probeRegion(r, options))) };
}
