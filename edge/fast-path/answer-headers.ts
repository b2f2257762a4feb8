import type { ServedModel } from "../models/served-model.ts";
import { servedHeaders } from "../routes/served-headers.ts";
import { serverTimingValue } from "../routes/server-timing.ts";
import type { Served } from "../serve.ts";

/**
 * The most header sets kept; past it the least recently used goes. Cache hits and edge answers take a handful
 * of values per model version (the tier, Server-Timing's cache entry): a Worker with a thousand edge variants
 * goes past it all the time, and its popular models keep their sets while the long tail's come and go.
 */
const MAX_SETS = 64;

/**
 * The headers of the fast path's answers. A cache hit's or an edge answer's headers (content type, who served,
 * version, Server-Timing, `Vary`) are the same for every answer of a kind, and each header of a plain object is
 * converted and checked by workerd on every `new Response` (docs/performance.md): those are built into a
 * `Headers` once and handed to every such answer, which copies them. Anything that varies per request (a
 * regional answer's Server-Timing, a degraded answer, a browser's CORS headers) is built per answer as before.
 */
export class AnswerHeaders {
  readonly #sets = new Map<string, Headers>();

  /** The answer's headers; `cors` is `corsAnswerHeaders`' for the request, `withOrigin` whether it had an Origin. */
  for(model: ServedModel, served: Served, cors: Record<string, string>, withOrigin: boolean): HeadersInit {
    if (withOrigin || served.degraded !== undefined || served.trace.regional !== undefined) {
      return { "content-type": "application/json", ...servedHeaders(model, served), ...cors };
    }
    // These three values are all that differs between the sets (cors without an Origin is always `Vary: Origin`).
    const key = `${served.servedBy}\n${served.version}\n${serverTimingValue(served.trace, model.edge?.label)}`;
    let headers = this.#sets.get(key);
    // Deleted and set again, a set moves to the end of the map's order: the first key is the least recently used.
    if (headers !== undefined) this.#sets.delete(key);
    else {
      if (this.#sets.size >= MAX_SETS) this.#sets.delete(this.#sets.keys().next().value!);
      headers = new Headers({ "content-type": "application/json", ...servedHeaders(model, served), ...cors });
    }
    this.#sets.set(key, headers);
    return headers;
  }

  /** How many sets are kept (for tests). */
  get size(): number {
    return this.#sets.size;
  }
}
