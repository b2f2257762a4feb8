import { reachFirst, withinReach } from "../regions/reach.ts";
import type { Region } from "../regions/region.ts";
import { budgetLeftMs } from "./deadline.ts";
import { budgetSpent, NoRegionAnswered, RegionError, regionCancelled, tooFar } from "./errors.ts";
import type { RegionAnswer, RegionCall, RegionDispatch } from "./types.ts";

export interface HedgeOptions {
  /** How long to wait for a region before hedging to the next one, in ms. */
  delayMs: (region: Region) => number;
  /** Take a hedge from the budget; false means no hedge this time. */
  spendHedge: () => boolean;
  /** Called when a hedge goes out (for counters). */
  onHedge?: (region: Region) => void;
  /**
   * The answer time to expect from a region for this call, in ms (edge/regions/reach.ts); undefined: unknown.
   * A call with `anyDistance` skips no region for it, but tries those in reach first. Default: unknown.
   */
  expectedMs?: (region: Region, call: Omit<RegionCall, "region">) => number | undefined;
  /** Called when a region is skipped as too far for what is left of the budget (for counters). */
  onTooFar?: (region: Region) => void;
}

export interface Forwarded {
  answer: RegionAnswer;
  /** Whether a hedge was sent. */
  hedged: boolean;
  /** Why the regions tried before the winner did not answer (failover history). */
  errors: RegionError[];
  /**
   * Of a call for `anyDistance`, the regions put behind the others as out of reach (regions/reach.ts): skipped as
   * too far unless every region before them failed. Their estimate is what a warm probe should check.
   */
  passedOver: string[];
}

/**
 * The outermost layer, across regions (in order, nearest healthy first): send to the first region; if it
 * has not answered after its hedge delay and the budget allows, send one hedge to the next region; if a
 * call fails, fail over to the next region at once. The first answer wins and every other call is aborted
 * (their reason: cancelled). Once the SLO budget is spent nothing more is sent: the regions not yet asked
 * are skipped (`budget_spent`), not charged a timeout; a region expected to answer later than what is left
 * of the budget is skipped as well (`too_far`), unless the call is for `anyDistance`: then the regions in reach
 * go first and the others after them, none skipped (regions/reach.ts `reachFirst`), and the answer names those
 * passed over (`passedOver`, for their warm probes). A region that sheds the request's tenant (`tenant_shed`) ends
 * the forward at once: no failover, the other call aborted. When no region answered, reject with NoRegionAnswered.
 */
export function hedged(dispatch: RegionDispatch, options: HedgeOptions) {
  return (given: readonly Region[], call: Omit<RegionCall, "region">): Promise<Forwarded> =>
    new Promise((resolve, reject) => {
      const expected = (r: Region) => options.expectedMs?.(r, call);
      const leftAtStart = budgetLeftMs(call.deadlineAt, Date.now());
      const regions = call.anyDistance ? reachFirst(given, expected, leftAtStart) : given;
      const passedOver = call.anyDistance
        ? regions.filter((r) => !withinReach(expected(r), leftAtStart)).map((r) => r.name)
        : [];
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
      /**
       * The next region worth a call, skipping (and recording) those that cannot answer in time: once the budget
       * is spent nothing more is sent (`budget_spent`), and a region expected to answer later than what is left
       * is not tried (`too_far`). Neither is charged to the region.
       */
      const nextCandidate = (): Region | undefined => {
        while (next < regions.length) {
          const leftMs = budgetLeftMs(call.deadlineAt, Date.now());
          if (leftMs <= 0) {
            while (next < regions.length) errors.push(budgetSpent(regions[next++]!.name));
            return undefined;
          }
          const region = regions[next]!;
          if (call.anyDistance) return region;
          const expectedMs = options.expectedMs?.(region, call);
          if (withinReach(expectedMs, leftMs)) return region;
          errors.push(tooFar(region.name, expectedMs!, leftMs));
          options.onTooFar?.(region);
          next++;
        }
        return undefined;
      };
      const armHedge = (region: Region) => {
        clearTimeout(timer);
        timer = setTimeout(() => {
          if (settled || hedgeSent || inFlight.size !== 1) return;
          // With the budget spent nothing is recorded here: the call in flight ends first, then failover does.
          if (budgetLeftMs(call.deadlineAt, Date.now()) <= 0 || !nextCandidate() || !options.spendHedge()) return;
          hedgeSent = true;
          options.onHedge?.(regions[next]!);
          launch();
        }, options.delayMs(region));
      };
      const launch = (): void => {
        if (!nextCandidate()) {
          if (inFlight.size === 0) {
            finish();
            reject(new NoRegionAnswered(errors, passedOver));
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
            resolve({ answer, hedged: hedgeSent, errors, passedOver });
          },
          (err: unknown) => {
            inFlight.delete(region);
            if (settled) return;
            errors.push(err instanceof RegionError ? err : new RegionError("unavailable", region.name, String(err)));
            if (err instanceof RegionError && err.code === "tenant_shed") {
              // The tenant is shed: no failover or hedge would carry its request elsewhere (errors.ts, tenantShed).
              finish();
              for (const [other, c] of inFlight) c.abort(regionCancelled(other.name));
              reject(new NoRegionAnswered(errors, passedOver));
              return;
            }
            launch();
          },
        );
      };

      if (regions.length === 0) reject(new NoRegionAnswered([]));
      else launch();
    });
}
