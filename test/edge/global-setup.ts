import { EDGE_BUILD_DIR, PREBUILT_ENV, wranglerBuild } from "../../tools/edge-bundle/build-edge.ts";

/** Bundle the Worker once per test run; startEdgeWorker in each file then reuses .build/edge. */
export default async function setup(): Promise<void> {
  await wranglerBuild(EDGE_BUILD_DIR);
  process.env[PREBUILT_ENV] = "1";
}
