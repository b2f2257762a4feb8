import { QUOTA_HEADER } from "../../protocol/headers.ts";
import { argmax, type HeldoutRow } from "../../protocol/heldout.ts";
import { headerValue, type LoadResponse } from "./load-response.ts";
import { type ProbeResult, pathOf } from "./summary.ts";

/**
 * Read one probe answer for `row`: which tier answered, the region of a regional answer, whether it was served
 * unmetered (the tenant's quota not checked), and whether the label is the one the answering model gives for the row: the full model's (`model`) for regional answers, the edge
 * variant's (`edgeModel`) otherwise. A cache hit may hold either's; the hot rows are ones both agree on or the
 * edge answered. Pure.
 */
export function readProbeAnswer(
  response: LoadResponse,
  row: HeldoutRow,
  model: string,
  edgeModel: string | undefined,
): ProbeResult {
  const { latencyMs, status } = response;
  if (status === 0) return { path: "error", latencyMs, status, error: response.error };
  if (status !== 200) {
    return { path: "error", latencyMs, status, error: `HTTP ${status}: ${response.body.slice(0, 200)}` };
  }
  let body: { servedBy?: string; predictions?: { class: number }[] };
  try {
    body = JSON.parse(response.body);
  } catch {
    return { path: "error", latencyMs, status, error: `not JSON: ${response.body.slice(0, 100)}` };
  }
  const path = pathOf(body.servedBy);
  if (path === "error") {
    return { path, latencyMs, status, error: `unexpected servedBy ${JSON.stringify(body.servedBy)}` };
  }
  const expected = row.expected[path === "regional" || !edgeModel ? model : edgeModel];
  return {
    path,
    latencyMs,
    status,
    region: path === "regional" ? body.servedBy!.slice("regional:".length) : undefined,
    correct: expected ? body.predictions?.[0]?.class === argmax(expected) : undefined,
    ...(headerValue(response.headers, QUOTA_HEADER) === "unmetered" ? { unmetered: true } : {}),
  };
}
