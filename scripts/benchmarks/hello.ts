import { join } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { ROOT } from "../../tools/edge-bundle/build-edge.ts";

/** A running plain Worker of the benchmarks in Miniflare on its own socket. */
export interface HelloWorker {
  url: string;
  dispose(): Promise<void>;
}

/** The plain Workers the benchmarks compare the edge Worker with. */
const SCRIPTS = {
  /** The baseline: as little as a Worker can do (hello-world). */
  hello: "scripts/benchmarks/hello-worker.js",
  /** A reference, not a baseline: parses the JSON body and answers a constant classify answer (no model). */
  parse: "scripts/benchmarks/parse-worker.js",
} as const;

export interface PlainWorkerOptions {
  /** Which Worker (default hello). */
  script?: keyof typeof SCRIPTS;
  /** Miniflare's Cache API simulation (default on). */
  cacheApi?: boolean;
  /** `url` straight into the Worker, not through Miniflare's entry Worker (as startEdgeWorker's `directSocket`). */
  directSocket?: boolean;
}

/** A plain Worker of the benchmarks, run the way the edge Worker is (scripts/stack/edge-worker.ts). */
export async function startHelloWorker(options: PlainWorkerOptions = {}): Promise<HelloWorker> {
  const hello = new Miniflare(
    convertV4MiniflareOptions({
      modules: true,
      scriptPath: join(ROOT, SCRIPTS[options.script ?? "hello"]),
      compatibilityDate: "2026-04-01",
      // As the edge Worker's: Miniflare's placeholder request.cf, attached to every request when none is given,
      // cost the hello-world Worker more than the edge paid for its own.
      cf: {},
      cacheAPI: options.cacheApi ?? true,
      host: "127.0.0.1",
      port: 0,
      ...(options.directSocket ? { unsafeDirectSockets: [{ host: "127.0.0.1", port: 0 }] } : {}),
    }),
  );
  const ready = await hello.ready;
  const url = (options.directSocket ? await hello.unsafeGetDirectURL() : ready).toString().replace(/\/$/, "");
  return { url, dispose: () => hello.dispose() };
}
