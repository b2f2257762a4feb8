import { Lru } from "../cache/lru.ts";

interface Stored {
  body: string;
  headers: [string, string][];
}

const MAX_AGE = /(?:^|,)\s*max-age=(\d+)/;

/**
 * The Workers Cache API's `match` and `put` kept in the isolate (LOCAL_PLATFORM "memory"), so that the local
 * stack's response cache keeps its shared tier on the path (the SHA-256 key, the lookup after an LRU miss, the
 * write in `waitUntil`) without Miniflare's SQLite-backed simulation, which costs milliseconds per call that
 * a colo's cache does not. Entries live for the response's `cache-control: max-age`, as in the Cache API;
 * a response without one is not stored.
 */
export class MemoryCache implements Pick<Cache, "match" | "put"> {
  readonly #entries: Lru<Stored>;

  /** @param maxEntries answers kept. Default 100000. @param maxBytes bytes of bodies kept. Default 64 MiB. */
  constructor(maxEntries = 100_000, maxBytes = 64 * 1024 * 1024) {
    this.#entries = new Lru({ maxEntries, maxBytes });
  }

  async match(request: RequestInfo | URL): Promise<Response | undefined> {
    const stored = this.#entries.get(urlOf(request), Date.now());
    return stored ? new Response(stored.body, { headers: stored.headers }) : undefined;
  }

  async put(request: RequestInfo | URL, response: Response): Promise<void> {
    const maxAge = MAX_AGE.exec(response.headers.get("cache-control") ?? "");
    const body = await response.text();
    if (!maxAge) return;
    const headers = [...response.headers.entries()];
    this.#entries.set(urlOf(request), { body, headers }, body.length, Date.now() + Number(maxAge[1]) * 1000);
  }
}

function urlOf(request: RequestInfo | URL): string {
  return typeof request === "string" ? request : request instanceof URL ? request.href : request.url;
}
