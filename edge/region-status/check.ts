import type { RolloutView } from "../../protocol/rollout/state.ts";
import { signatureHeaders } from "../../protocol/signing.ts";
import type { RegionTransport } from "../forward/region-transport.ts";
import type { Region } from "../regions/region.ts";

/** What one scheduled status check saw of one region. */
export interface RegionCheck {
  name: string;
  /** `GET /v2/health/ready` answered 200. */
  ready: boolean;
  /** Per model, the highest version the region lists (`GET /v2/models/<model>`); models it lacks are left out. */
  versions?: Record<string, string>;
  /** Per model, its rollout as the region holds it (`rollout` in the model metadata), if it has had one. */
  rollouts?: Record<string, RolloutView>;
  error?: string;
}

export interface RegionStatusReport {
  /** Unix ms when the check ran. */
  at: number;
  regions: RegionCheck[];
}

export interface StatusCheckOptions {
  /** Logical models whose versions to read. */
  models: readonly string[];
  timeoutMs: number;
  sharedSecret: string | undefined;
  /** How each region is reached, as the forward reaches it (its binding, or global fetch). */
  send: RegionTransport;
}

/** A GET to a region (the status check's, a warm probe's), signed when there is a secret, through the region's binding or global fetch. */
export async function regionGet(
  region: Region,
  path: string,
  options: Pick<StatusCheckOptions, "timeoutMs" | "sharedSecret" | "send">,
): Promise<Response> {
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

/**
 * Readiness, served versions and rollouts of one region. No round trip: the cron runs on whichever machine
 * Cloudflare picks, anywhere, so a time measured there says nothing about the colos that serve requests
 * (what an isolate expects of a region is its own evidence: edge/regions/reach.ts).
 */
async function checkRegion(region: Region, options: StatusCheckOptions): Promise<RegionCheck> {
  try {
    const ready = await regionGet(region, "/v2/health/ready", options);
    await ready.body?.cancel();
    if (!ready.ok) return { name: region.name, ready: false, error: `ready: HTTP ${ready.status}` };
    const versions: Record<string, string> = {};
    const rollouts: Record<string, RolloutView> = {};
    await Promise.all(
      options.models.map(async (model) => {
        const metadata = await regionGet(region, `/v2/models/${encodeURIComponent(model)}`, options);
        const body = metadata.ok ? await metadata.json().catch(() => undefined) : undefined;
        if (!metadata.ok) await metadata.body?.cancel();
        const version = highestVersion(body);
        if (version) versions[model] = version;
        const rollout = rolloutOf(body);
        if (rollout) rollouts[model] = rollout;
      }),
    );
    return { name: region.name, ready: true, versions, ...(Object.keys(rollouts).length > 0 ? { rollouts } : {}) };
  } catch (err) {
    return { name: region.name, ready: false, error: (err as Error).message };
  }
}

/** Check every region at once: readiness, the version of each model it serves and its rollout. */
export async function checkRegions(
  regions: readonly Region[],
  options: StatusCheckOptions,
): Promise<RegionStatusReport> {
  const at = Date.now();
  return { at, regions: await Promise.all(regions.map((r) => checkRegion(r, options))) };
}
