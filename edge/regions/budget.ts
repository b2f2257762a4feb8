import { msHeader } from "../../protocol/ms-header.ts";

/** The header a client sends its own budget in, in ms (docs/edge.md, "Deadline"). */
export const BUDGET_HEADER = "x-edgecascade-budget-ms";

/**
 * The budget of one request, in ms, end to end at the client (the regions get it less the client's round trip,
 * client-reserve.ts): the client's `x-edgecascade-budget-ms` when it sends one, capped at
 * `maxMs` (MAX_BUDGET_MS), else `defaultMs` (SLO_BUDGET_MS). A client that can wait longer than the default
 * (a batch job, a slow link) lets the regions answer; one that cannot wait sends less and is answered by the
 * edge sooner. 400 for a value that is not a whole number of ms from 1 (protocol/ms-header.ts). Pure.
 */
export function requestBudgetMs(header: string | null | undefined, options: { defaultMs: number; maxMs: number }) {
  const ms = msHeader(BUDGET_HEADER, header, { min: 1 });
  return ms === undefined ? options.defaultMs : Math.min(ms, options.maxMs);
}
