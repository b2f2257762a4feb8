import { argmax, type HeldoutSet } from "../../../protocol/heldout.ts";
import { round, type ScenarioBodies } from "./scenarios.ts";

/** One classify request to the Worker at `url`: what answered it, and its predictions. */
export async function classifyAt(url: string, body: string) {
  const response = await fetch(`${url}/v1/classify`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  return (await response.json()) as { servedBy: string; predictions: { class: number }[] };
}

/**
 * The cascade over the whole held-out set, once in auto mode (this also fills the cache for the cache-hit
 * scenario), then forced to a region and to the edge: the shares each tier answered and the accuracies, beside
 * the full model's accuracy the fixture records.
 */
export async function measureCascade(
  edgeUrl: string,
  bodies: ScenarioBodies,
  heldout: HeldoutSet,
  model: string,
): Promise<Record<string, number>> {
  const cascade = { edge: 0, regional: 0, other: 0, correct: 0 };
  for (const [i, body] of bodies.auto.entries()) {
    const answer = await classifyAt(edgeUrl, body);
    if (answer.servedBy === "edge") cascade.edge++;
    else if (answer.servedBy.startsWith("regional:")) cascade.regional++;
    else cascade.other++;
    if (answer.predictions[0]!.class === heldout.rows[i]!.label) cascade.correct++;
  }
  let fullCorrect = 0;
  let edgeCorrect = 0;
  for (const [i, body] of bodies.regional.entries()) {
    if ((await classifyAt(edgeUrl, body)).predictions[0]!.class === heldout.rows[i]!.label) fullCorrect++;
  }
  for (const [i, body] of bodies.edge.entries()) {
    if ((await classifyAt(edgeUrl, body)).predictions[0]!.class === heldout.rows[i]!.label) edgeCorrect++;
  }
  const n = heldout.rows.length;
  const referenceFull = heldout.rows.filter((r) => argmax(r.expected[model]!) === r.label).length;
  return {
    rows: n,
    edgeShare: round(cascade.edge / n, 4),
    regionalShare: round(cascade.regional / n, 4),
    otherShare: round(cascade.other / n, 4),
    cascadeAccuracy: round(cascade.correct / n, 4),
    fullModelAccuracy: round(fullCorrect / n, 4),
    edgeModelAccuracy: round(edgeCorrect / n, 4),
    fullModelAccuracyReference: round(referenceFull / n, 4),
  };
}
