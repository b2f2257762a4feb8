import { DEADLINE_HEADER } from "../../protocol/headers.ts";
import { budgetSpent, regionTimeout } from "./errors.ts";
import type { Interceptor } from "./types.ts";

/** Whole ms left of the SLO budget at `now`; a call is sent only with at least 1 ms left. */
export const budgetLeftMs = (deadlineAt: number, now: number): number => Math.floor(deadlineAt - now);

/**
 * Tell the region how long the edge still waits (`x-edgecascade-deadline-ms`, what is left of the SLO
 * budget) and give up on it when that runs out. A call that starts with nothing left is not sent
 * (`hedged` already stops there; this keeps a 0 ms deadline from ever going out).
 */
export const deadline: Interceptor = (next) => async (call) => {
  const remainingMs = budgetLeftMs(call.deadlineAt, Date.now());
  if (remainingMs <= 0) throw budgetSpent(call.region.name);
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(regionTimeout(call.region.name, remainingMs)), remainingMs);
  const parent = call.signal;
  const follow = () => controller.abort(parent?.reason);
  if (parent?.aborted) follow();
  else parent?.addEventListener("abort", follow, { once: true });
  try {
    return await next({
      ...call,
      headers: { ...call.headers, [DEADLINE_HEADER]: String(remainingMs) },
      signal: controller.signal,
    });
  } finally {
    clearTimeout(timer);
    parent?.removeEventListener("abort", follow);
  }
};
