import type { Region } from "../regions/region.ts";
import { budgetLeftMs } from "./deadline.ts";
import { budgetSpent, NoRegionAnswered, RegionError, regionCancelled } from "./errors.ts";
import type { RegionAnswer, RegionCall, RegionDispatch } from "./types.ts";

export interface HedgeOptions {
  /** How long to wait for a region before hedging to the next one, in ms. */
  delayMs: (region: Region) => number;
  /** Take a hedge from the budget; false means no hedge this time. */
  spendHedge: () => boolean;
  /** Called when a hedge goes out (for counters). */
  onHedge?: (region: Region) => void;
}

export interface Forwarded {
  answer: RegionAnswer;
  /** Whether a hedge was sent. */
  hedged: boolean;
  /** Why the regions tried before the winner did not answer (failover history). */
  errors: RegionError[];
}

/**
 * The outermost layer, across regions (in order, nearest healthy first): send to the first region; if it
 * has not answered after its hedge delay and the budget allows, send one hedge to the next region; if a
 * call fails, fail over to the next region at once. The first answer wins and every other call is aborted
 * (their reason: cancelled). Once the SLO budget is spent nothing more is sent: the regions not yet asked
 * are skipped (`budget_spent`), not charged a timeout. When no region answered, reject with NoRegionAnswered.
 */
export function hedged(dispatch: RegionDispatch, options: HedgeOptions) {
  return (regions: readonly Region[], call: Omit<RegionCall, "region">): Promise<Forwarded> =>
    new Promise((resolve, reject) => {
      const errors: RegionError[] = [];
      const inFlight = new Map<Region, AbortController>();
      let next = 0;
      let hedgeSent = false;
      let settled = false;
      let timer: ReturnType<typeof setTimeout> | null = null;

      const finish = () => {
        settled = true;
        clearTimeout(timer);
      };
      const armHedge = (region: Region) => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          const worthIt = inFlight.size === 1 && next < regions.length && budgetLeftMs(call.deadlineAt, Date.now()) > 0;
          if (settled || hedgeSent || !worthIt || !options.spendHedge()) return;
          hedgeSent = true;
          options.onHedge?.(regions[next]!);
          launch();
        }, options.delayMs(region));
      };
      const launch = (): void => {
        if (budgetLeftMs(call.deadlineAt, Date.now()) <= 0) {
          while (next < regions.length) errors.push(budgetSpent(regions[next++]!.name));
          if (inFlight.size === 0) {
            finish();
            reject(new NoRegionAnswered(errors));
          }
          return;
        }
        const region = regions[next++]!;
        const controller = new AbortController();
        inFlight.set(region, controller);
        if (!hedgeSent) armHedge(region);
        dispatch({ ...call, region, signal: controller.signal }).then(
          (answer) => {
            inFlight.delete(region);
            if (settled) return;
            finish();
            for (const [loser, c] of inFlight) c.abort(regionCancelled(loser.name));
            resolve({ answer, hedged: hedgeSent, errors });
          },
          (err: unknown) => {
            inFlight.delete(region);
            if (settled) return;
            errors.push(err instanceof RegionError ? err : new RegionError("unavailable", region.name, String(err)));
            if (next < regions.length) launch();
            else if (inFlight.size === 0) {
              finish();
              reject(new NoRegionAnswered(errors));
            }
          },
        );
      };

      if (regions.length === 0) reject(new NoRegionAnswered([]));
      else launch();
    });
}
