import { DEGRADED_HEADER } from "../../protocol/headers.ts";
import { argmax, edgeAnswers, type HeldoutRow } from "../../protocol/heldout.ts";
import { headerValue, type LoadRequest, type LoadResponse } from "../../tools/probe/load-response.ts";
import { type ProbePath, type ProbeResult, pathOf } from "../../tools/probe/summary.ts";
import type { ValidationModel } from "./model.ts";

/** One answer of the edge, read: who answered, why it degraded, and whether its label is right. */
export interface EdgeResult extends ProbeResult {
  /** ms into the run at which the request was due. */
  dueMs: number;
  /** `x-edgecascade-degraded` of degraded answers. */
  degraded?: string;
  /** The label matched the row's true label. */
  accurate?: boolean;
}

/** `POST /v1/classify` of one row, from `location` (`lat,lon`; honoured by the local stack). */
export function classifyRequest(
  model: ValidationModel,
  input: readonly number[],
  location?: string,
): LoadRequest & { body: string } {
  return {
    path: "/v1/classify",
    headers: {
      "content-type": "application/json",
      ...(location ? { "x-edgecascade-location": location } : {}),
    },
    body: JSON.stringify({ model: model.name, inputs: input }),
  };
}

/** The model whose answer a path must carry for `row` at `threshold` (a cache hit holds the tier that filled it). */
function answeringModel(path: ProbePath, row: HeldoutRow, model: ValidationModel, threshold: number): string {
  if (path === "regional") return model.name;
  if (path === "cache") return edgeAnswers(row, threshold, model.edgeModel) ? model.edgeModel : model.name;
  return model.edgeModel;
}

/**
 * Read an edge answer: its path (cache, edge, regional, degraded, error), region, degradation reason, whether the
 * label is the one the answering model gives for the row (`correct`: a wrong version or broken tier otherwise)
 * and whether it is the row's true label (`accurate`).
 */
export function readEdgeAnswer(
  response: LoadResponse,
  row: HeldoutRow,
  model: ValidationModel,
  threshold: number,
): EdgeResult {
  const base = { dueMs: response.dueMs, latencyMs: response.latencyMs, status: response.status };
  if (response.status !== 200) {
    const error = response.error ?? `HTTP ${response.status}: ${response.body.slice(0, 200)}`;
    return { ...base, path: "error", error };
  }
  let body: { servedBy?: unknown; predictions?: { class?: unknown }[] };
  try {
    body = JSON.parse(response.body);
  } catch {
    return { ...base, path: "error", error: `not JSON: ${response.body.slice(0, 100)}` };
  }
  const path = pathOf(body.servedBy);
  if (path === "error") return { ...base, path, error: `unexpected servedBy ${JSON.stringify(body.servedBy)}` };
  const label = body.predictions?.[0]?.class;
  const expected = argmax(row.expected[answeringModel(path, row, model, threshold)]!);
  return {
    ...base,
    path,
    ...(path === "regional" ? { region: String(body.servedBy).slice("regional:".length) } : {}),
    ...(path === "degraded" ? { degraded: headerValue(response.headers, DEGRADED_HEADER) } : {}),
    correct: label === expected,
    accurate: label === row.label,
  };
}
