import { request } from "undici";
import type { StepEvidence } from "../../protocol/rollout/evidence.ts";
import { evidenceFromCounts } from "../../protocol/rollout/evidence-counts.ts";
import type { RolloutState } from "../../protocol/rollout/state.ts";

/** The pools' gauge of the current step's counts (regional/metrics.ts). */
export const EVIDENCE_METRIC = "edgecascade_rollout_step_evidence";

/** The PromQL that sums a step's counts over every pod a Prometheus scrapes: one series per pod and count. */
export function evidenceQuery(state: Pick<RolloutState, "model" | "id" | "step">): string {
  const model = JSON.stringify(state.model);
  return `sum by (count) (${EVIDENCE_METRIC}{model=${model},rollout="${state.id}",step="${state.step}"})`;
}

/** A Prometheus instant-query answer's vector as the step's evidence; undefined when it holds no series. */
export function evidenceFromAnswer(
  state: Pick<RolloutState, "id" | "step">,
  answer: unknown,
): StepEvidence | undefined {
  const body = answer as { status?: string; error?: string; data?: { resultType?: string; result?: unknown[] } };
  if (body?.status !== "success")
    throw new Error(`query failed: ${body?.error ?? JSON.stringify(answer).slice(0, 200)}`);
  if (body.data?.resultType !== "vector") throw new Error(`expected a vector, got ${body.data?.resultType}`);
  const counts: Record<string, number> = {};
  for (const sample of body.data.result ?? []) {
    const { metric, value } = sample as { metric?: { count?: string }; value?: [number, string] };
    if (metric?.count && value) counts[metric.count] = Number(value[1]);
  }
  return Object.keys(counts).length === 0 ? undefined : evidenceFromCounts(state.id, state.step, counts);
}

/** `GET <url>/api/v1/query` for the step's evidence. */
export async function prometheusEvidence(url: string, state: RolloutState): Promise<StepEvidence | undefined> {
  const res = await request(`${url.replace(/\/+$/, "")}/api/v1/query`, {
    query: { query: evidenceQuery(state) },
    headersTimeout: 10_000,
    bodyTimeout: 10_000,
  });
  const text = await res.body.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`HTTP ${res.statusCode}: ${text.slice(0, 200)}`);
  }
  return evidenceFromAnswer(state, json);
}
