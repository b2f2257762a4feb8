import { regionGet, type StatusCheckOptions } from "../region-status/check.ts";
import type { Region, RequestLocation } from "../regions/region.ts";
import type { RegionDispatch } from "./types.ts";

export interface WarmProbeOptions extends Pick<StatusCheckOptions, "timeoutMs" | "sharedSecret" | "send"> {
  /** One region's call through the forwarding layers (forward/compose.ts `createRegionCall`). */
  call: RegionDispatch;
  /** The model whose request triggered the probe, and its row width and class count. */
  model: { name: string; width: number; classes: number };
  /** Where that request came from: the probe's time is that place's evidence (regions/place.ts). */
  location?: RequestLocation;
}

/**
 * One warm probe of a region from this isolate, sent off the request path (`waitUntil`): a
 * `GET /v2/health/ready` to open (or find) a connection, then a classify of one all-zero row of `model`
 * through the same layers as a request's call, with REGION_CHECK_TIMEOUT_MS as its deadline. The classify is timed
 * on the connection the GET warmed: a time taken on a new connection would carry the TCP and TLS handshakes
 * that a request in a warm isolate does not pay, and a health check alone would miss the answer path's own
 * time (queue, batcher, model). Its answer time reaches the reach estimate as a warm probe's sample (observe.ts);
 * a failure is the breaker's business like a request's. Should the model have been loading on demand at the
 * region (the answer says so), the classify is sent once more, to time the answer path rather than the load.
 * Never rejects.
 */
export async function warmProbe(region: Region, options: WarmProbeOptions): Promise<void> {
  try {
    const ready = await regionGet(region, "/v2/health/ready", options);
    await ready.body?.cancel();
    if (!ready.ok) return;
    const { name, width, classes } = options.model;
    const classify = () =>
      options.call({
        region,
        path: "/v1/classify",
        body: JSON.stringify({ model: name, inputs: [new Array(width).fill(0)] }),
        batch: 1,
        classes,
        headers: {},
        deadlineAt: Date.now() + options.timeoutMs,
        warmProbe: true,
        ...(options.location ? { location: options.location } : {}),
      });
    // An answer that waited for the model to load on demand is no evidence (observe.ts): once more, loaded.
    if ((await classify()).loadMs !== undefined) await classify();
  } catch {
    // What went wrong is already counted (observe.ts) and, for a failure, told to the breaker.
  }
}
