import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RegionError } from "../../edge/forward/errors.ts";
import { postToRegion } from "../../edge/forward/post-to-region.ts";
import type { RegionCall } from "../../edge/forward/types.ts";

/**
 * A region that ignores the "version" field (as a pool from before it was honoured would): it always
 * answers version 2, and 404s the path /missing. Real HTTP on loopback; the edge's fetch layer runs in Node.
 */
let server: Server;
let url: string;
beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    req.on("end", () => {
      if (req.url === "/missing") {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: 'model "digits" version 1 is not served; version 2 is', code: "not_found" }));
        return;
      }
      const scores = Array.from({ length: 10 }, (_, i) => (i === 3 ? 1 : 0));
      res.writeHead(200, { "content-type": "application/json", "x-model-version": "2" });
      res.end(JSON.stringify({ model: "digits", version: "2", predictions: [{ class: 3, scores }] }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => server.close(resolve)));

const call = (path: string, version?: string): RegionCall => ({
  region: { name: "old", url, latitude: 0, longitude: 0 },
  path,
  body: JSON.stringify({ model: "digits", inputs: [[0]], ...(version ? { version } : {}) }),
  batch: 1,
  classes: 10,
  headers: {},
  deadlineAt: Date.now() + 60_000,
  ...(version ? { version } : {}),
});

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => undefined,
    (err: unknown) => err as RegionError,
  );

describe("postToRegion and a pinned version", () => {
  it("takes the region's version when none is pinned", async () => {
    const answer = await postToRegion()(call("/v1/classify"));
    expect(answer.version).toBe("2");
  });

  it("refuses an answer of another version than the pinned one", async () => {
    const err = await failure(postToRegion()(call("/v1/classify", "1")));
    expect(err).toBeInstanceOf(RegionError);
    expect([err!.code, err!.message]).toEqual([
      "wrong_version",
      "region old: does not serve the pinned version 1: answered version 2",
    ]);
  });

  it("reads a 404 as 'does not serve the pinned version' only when a version is pinned", async () => {
    const pinned = await failure(postToRegion()(call("/missing", "1")));
    expect(pinned!.code).toBe("wrong_version");
    const unpinned = await failure(postToRegion()(call("/missing")));
    expect(unpinned!.code).toBe("status");
  });
});
