import { join } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { ROOT } from "../../tools/edge-bundle/build-edge.ts";

/** A running hello-world Worker (scripts/benchmarks/hello-worker.js) in Miniflare on its own socket. */
export interface HelloWorker {
  url: string;
  dispose(): Promise<void>;
}

/**
 * The baseline Worker of the benchmarks: as little as a Worker can do, run the way the edge Worker is
 * (scripts/stack/edge-worker.ts). `cacheApi`: Miniflare's Cache API simulation (default on).
 */
export async function startHelloWorker(options: { cacheApi?: boolean } = {}): Promise<HelloWorker> {
  const hello = new Miniflare(
    convertV4MiniflareOptions({
      modules: true,
      scriptPath: join(ROOT, "scripts/benchmarks/hello-worker.js"),
      compatibilityDate: "2026-04-01",
      // As the edge Worker's: Miniflare's placeholder request.cf, attached to every request when none is given,
      // cost the hello-world Worker more than the edge paid for its own.
      cf: {},
      cacheAPI: options.cacheApi ?? true,
      host: "127.0.0.1",
      port: 0,
    }),
  );
  const url = (await hello.ready).toString().replace(/\/$/, "");
  return { url, dispose: () => hello.dispose() };
}
