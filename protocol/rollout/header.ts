import type { RolloutPhase, RolloutView } from "./state.ts";

/**
 * `x-edgecascade-rollout` on regional answers: the model's rollout as the edge needs it to cache answers under
 * the version an input maps to, e.g. `id=4; revision=6; stable=1; candidate=2; phase=running; percent=5`.
 * Regional answers reach the edge all the time, so it learns of a step or a rollback within requests rather
 * than at its next scheduled region status check.
 */
export function formatRolloutHeader(view: RolloutView): string {
  return `id=${view.id}; revision=${view.revision}; stable=${view.stable}; candidate=${view.candidate}; phase=${view.phase}; percent=${view.percent}`;
}

const PHASES: readonly RolloutPhase[] = ["running", "promoted", "rolled-back"];

/** The view in a header, or undefined when the header is absent or malformed (it is then ignored). */
export function parseRolloutHeader(value: string | null | undefined): RolloutView | undefined {
  if (!value) return undefined;
  const fields = new Map<string, string>();
  for (const part of value.split(";")) {
    const [key, raw] = part.split("=").map((s) => s.trim());
    if (key && raw !== undefined) fields.set(key, raw);
  }
  const int = (key: string) => {
    const raw = fields.get(key);
    return raw !== undefined && /^\d+$/.test(raw) ? Number(raw) : undefined;
  };
  const id = int("id");
  const revision = int("revision");
  const stable = fields.get("stable");
  const candidate = fields.get("candidate");
  const phase = fields.get("phase") as RolloutPhase | undefined;
  const percent = Number(fields.get("percent"));
  if (id === undefined || revision === undefined || !phase || !PHASES.includes(phase)) return undefined;
  if (!stable || !/^\d+$/.test(stable) || !candidate || !/^\d+$/.test(candidate)) return undefined;
  if (!(percent >= 0 && percent <= 100)) return undefined;
  return { id, revision, stable, candidate, phase, percent };
}
