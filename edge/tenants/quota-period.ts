/** How a global quota is sold: requests per calendar day or per calendar month, in UTC. */
export type QuotaPer = "day" | "month";

/** One quota period: its id (`2026-12-03`, `2026-12`) and when it ends (Unix ms). */
export interface QuotaPeriod {
  id: string;
  endsAt: number;
}

const pad = (n: number) => String(n).padStart(2, "0");

/** The period `nowMs` falls in. Pure. */
export function quotaPeriod(per: QuotaPer, nowMs: number): QuotaPeriod {
  const d = new Date(nowMs);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth();
  if (per === "month") {
    return { id: `${year}-${pad(month + 1)}`, endsAt: Date.UTC(year, month + 1, 1) };
  }
  const day = d.getUTCDate();
  return { id: `${year}-${pad(month + 1)}-${pad(day)}`, endsAt: Date.UTC(year, month, day + 1) };
}
