import { WARM_UP_HEADER } from "../../protocol/headers.ts";
import type { LocalRegion } from "./local-regions.ts";

/** A model as warming needs it: its name and rows to send. */
export interface WarmModel {
  name: string;
  rows: readonly (readonly number[])[];
  /** Whether the Worker has an edge variant of it (then `cascade: "edge"` requests warm the edge model's path). */
  edge: boolean;
}

export interface WarmOptions {
  edgeUrl: string;
  regions: readonly LocalRegion[];
  models: readonly WarmModel[];
  /** Requests per region and model (`cascade: "regional"`) and per model with an edge variant (`"edge"`). Default 40. */
  perPath?: number;
  /** Requests in flight at once. Default 4. */
  concurrency?: number;
  /** Stop sending after this long, warm or not: a slow machine must not hold `npm start` up. Default 5000. */
  maxMs?: number;
}

export interface WarmReport {
  sent: number;
  /** Answers with a status other than 200, or no answer: warming goes on without them. */
  refused: number;
  ms: number;
  /** Whether `maxMs` ran out before every request was sent. */
  cutShort: boolean;
}

interface WarmRequest {
  model: string;
  inputs: readonly number[];
  cascade: "regional" | "edge";
  /** `x-edgecascade-location`: the region's own place, so the Worker forwards there. */
  location?: string;
}

/**
 * What warming sends, in the order sent: every region gets each model's rows as `cascade: "regional"` from
 * its own location, and each model with an edge variant the same rows as `cascade: "edge"` (neither reads
 * nor fills the response cache). Interleaved so that every process warms from the first second.
 */
export function warmRequests(regions: readonly LocalRegion[], models: readonly WarmModel[], perPath: number) {
  const paths: Omit<WarmRequest, "inputs">[] = [];
  for (const model of models) {
    for (const r of regions)
      paths.push({ model: model.name, cascade: "regional", location: `${r.latitude},${r.longitude}` });
    if (model.edge) paths.push({ model: model.name, cascade: "edge" });
  }
  const requests: WarmRequest[] = [];
  for (let i = 0; i < perPath; i++) {
    for (const path of paths) {
      const rows = models.find((m) => m.name === path.model)!.rows;
      if (rows.length > 0) requests.push({ ...path, inputs: rows[i % rows.length]! });
    }
  }
  return requests;
}

/**
 * Send each tier of a fresh local stack a few hundred requests before it says ready, so that V8 has begun to
 * compile their request paths before a person's first requests: measured (docs/performance.md, *Summary*), the first
 * unsure row then took 10–12 ms where without it took 17–22 ms or was degraded at the 10 ms budget.
 */
export async function warmStack(options: WarmOptions): Promise<WarmReport> {
  const started = performance.now();
  const maxMs = options.maxMs ?? 5000;
  const queue = warmRequests(options.regions, options.models, options.perPath ?? 40);
  let next = 0;
  let refused = 0;
  const send = async (request: WarmRequest) => {
    // Marked as warm-up: its forwards run while every process still compiles (and, on a busy machine, slowly), so
    // the Worker keeps their times out of what it expects of the regions; the first real request from a place
    // starts from the distance prior, not from a warm-up's cut-offs.
    const headers: Record<string, string> = { "content-type": "application/json", [WARM_UP_HEADER]: "1" };
    if (request.location) headers["x-edgecascade-location"] = request.location;
    try {
      const res = await fetch(`${options.edgeUrl}/v1/classify`, {
        method: "POST",
        headers,
        body: JSON.stringify({
          model: request.model,
          inputs: request.inputs,
          parameters: { cascade: request.cascade },
        }),
      });
      await res.arrayBuffer();
      if (res.status !== 200) refused++;
    } catch {
      refused++;
    }
  };
  const worker = async () => {
    while (next < queue.length && performance.now() - started < maxMs) await send(queue[next++]!);
  };
  await Promise.all(Array.from({ length: options.concurrency ?? 4 }, worker));
  return { sent: next, refused, ms: performance.now() - started, cutShort: next < queue.length };
}
