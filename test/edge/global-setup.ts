import { edgeBundle } from "../../tools/edge-bundle/build-edge.ts";

/** Bundle the Worker once per test run (when its sources or models changed); startEdgeWorker in each file reuses it. */
export default async function setup(): Promise<void> {
  await edgeBundle();
}
