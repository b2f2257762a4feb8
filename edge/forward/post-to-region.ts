import {
  AUDIT_HEADER,
  MODEL_LOAD_HEADER,
  MODEL_VERSION_HEADER,
  ROLLOUT_HEADER,
  TENANT_HEADER,
} from "../../protocol/headers.ts";
import { parseRolloutHeader } from "../../protocol/rollout/header.ts";
import type { Prediction } from "../../protocol/types.ts";
import { shedBackoffMs } from "../regions/shed-backoff-policy.ts";
import { modelUnavailable, RegionError, regionCancelled, tenantShed, wrongVersion } from "./errors.ts";
import type { RegionTransport } from "./region-transport.ts";
import type { RegionDispatch } from "./types.ts";

function badAnswer(region: string, what: string): RegionError {
  return new RegionError("bad_answer", region, `answer ${what}`);
}

/** The stable `code` of a pool's `{"error", "code"}` answer, if the body is one. */
function errorCode(text: string): string | undefined {
  try {
    const code = (JSON.parse(text) as { code?: unknown })?.code;
    return typeof code === "string" ? code : undefined;
  } catch {
    return undefined;
  }
}

/** Probabilities from a region's `/v1/classify` answer, checked against the batch and class count. */
function readProbs(region: string, body: unknown, batch: number, classes: number): Float32Array {
  const predictions = (body as { predictions?: unknown })?.predictions;
  if (!Array.isArray(predictions) || predictions.length !== batch) {
    throw badAnswer(region, `has no "predictions" for ${batch} rows`);
  }
  const probs = new Float32Array(batch * classes);
  for (const [r, p] of (predictions as Prediction[]).entries()) {
    const scores = p?.scores;
    if (!Array.isArray(scores) || scores.length !== classes || !scores.every((s) => Number.isFinite(s))) {
      throw badAnswer(region, `row ${r} has no ${classes} finite scores`);
    }
    probs.set(scores, r * classes);
  }
  return probs;
}

/**
 * The innermost layer: POST the call to the region and read its `/v1/classify` answer. A non-2xx status,
 * a network error or an answer that does not fit the request is a failure of that region; an abort is
 * reported with the reason the aborting layer gave (timeout, or cancelled by a hedge). With a pinned
 * version, a 404 (the pool's answer for a version it does not serve) or an answer of another version is
 * `wrong_version`: not a failure, another region may have it; so is a 503 `model_not_ready`
 * (`model_unavailable`: the pool serves its other models). A 429 `tenant_shed` is `tenant_shed`: the pool
 * refused the request's tenant as best-effort. The call carries its tenant (`x-edgecascade-tenant`) and an audit's
 * labels (`x-edgecascade-audit`), which the signing layer covers. `send` is how the region is reached (its binding, or global fetch).
 */
export function postToRegion(send: RegionTransport = (_region, url, init) => fetch(url, init)): RegionDispatch {
  return async (call) => {
    const { region, signal } = call;
    const started = Date.now();
    const aborted = () => (signal?.reason instanceof RegionError ? signal.reason : regionCancelled(region.name));
    let response: Response;
    try {
      response = await send(region, `${region.url}${call.path}`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(call.tenant === undefined ? {} : { [TENANT_HEADER]: call.tenant }),
          ...(call.audit === undefined ? {} : { [AUDIT_HEADER]: call.audit }),
          ...call.headers,
        },
        body: call.body,
        signal,
      });
    } catch (err) {
      if (signal?.aborted) throw aborted();
      throw new RegionError("unavailable", region.name, `request failed: ${(err as Error).message}`, { cause: err });
    }
    let body: unknown;
    try {
      const text = await response.text();
      if (!response.ok) {
        const detail = `HTTP ${response.status}: ${text.slice(0, 200)}`;
        if (response.status === 404 && call.version !== undefined)
          throw wrongVersion(region.name, call.version, detail);
        if (response.status === 503 && errorCode(text) === "model_not_ready")
          throw modelUnavailable(region.name, detail);
        if (response.status === 429 && errorCode(text) === "tenant_shed") {
          throw tenantShed(region.name, detail, shedBackoffMs(response.headers.get("retry-after")));
        }
        throw new RegionError("status", region.name, detail);
      }
      body = JSON.parse(text);
    } catch (err) {
      if (signal?.aborted) throw aborted();
      if (err instanceof RegionError) throw err;
      throw badAnswer(region.name, `is not JSON: ${(err as Error).message}`);
    }
    const version = response.headers.get(MODEL_VERSION_HEADER) ?? (body as { version?: unknown })?.version;
    if (typeof version !== "string" || !/^\d+$/.test(version)) throw badAnswer(region.name, "has no model version");
    if (call.version !== undefined && version !== call.version) {
      throw wrongVersion(region.name, call.version, `answered version ${version}`);
    }
    const probs = readProbs(region.name, body, call.batch, call.classes);
    const rollout = parseRolloutHeader(response.headers.get(ROLLOUT_HEADER));
    const loadMs = Number(response.headers.get(MODEL_LOAD_HEADER) ?? Number.NaN);
    return {
      region: region.name,
      version,
      probs,
      ms: Date.now() - started,
      ...(rollout ? { rollout } : {}),
      ...(loadMs >= 0 ? { loadMs } : {}),
    };
  };
}
