import type { RepositoryModel } from "../../tools/edge-bundle/edge-models.ts";

/** Models `npm start` names one by one; a larger repository is summarised (counts and the first few). */
export const NAMED_MODELS = 6;

/**
 * `npm start`'s models line: every model with its edge variant while there are few; for a large repository the
 * counts and the first `NAMED_MODELS`, so that a thousand models do not make one line of forty thousand
 * characters.
 */
export function modelsLine(models: readonly Pick<RepositoryModel, "config" | "edge">[], dir: string): string {
  const named = (m: (typeof models)[number]) =>
    `${m.config.name}${m.edge ? ` (edge: ${m.edge.config.name})` : " (no edge variant)"}`;
  if (models.length <= NAMED_MODELS) return `${models.map(named).join(" · ")}  from ${dir}`;
  const edges = models.filter((m) => m.edge).length;
  const first = models.slice(0, NAMED_MODELS - 1).map((m) => m.config.name);
  return (
    `${models.length} models, ${edges} with an edge variant: ${first.join(" · ")} · … and ` +
    `${models.length - first.length} more  from ${dir}`
  );
}
