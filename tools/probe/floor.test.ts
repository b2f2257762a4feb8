import { describe, expect, it } from "vitest";
import { cacheHitAnswer, startNoopServer } from "./floor.ts";
import type { ProbeTarget } from "./target.ts";

describe("startNoopServer", () => {
  it("answers every request with the body, on its own thread, until closed", async () => {
    const body = JSON.stringify({ servedBy: "cache", predictions: [{ class: 3 }] });
    const server = await startNoopServer(body);
    for (const method of ["POST", "GET"]) {
      const res = await fetch(`${server.url}/v1/classify`, { method, body: method === "POST" ? "{}" : undefined });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(await res.text()).toBe(body);
    }
    await server.close();
    await expect(fetch(`${server.url}/v1/classify`)).rejects.toThrow();
  });
});

describe("cacheHitAnswer", () => {
  it("answers the first held-out row's label as a cache hit", () => {
    const target = {
      model: "digits",
      config: { version: "3", labels: ["zero", "one"] },
      heldout: { rows: [{ input: [0], label: 1, expected: { digits: [0.2, 0.8] } }] },
      edge: undefined,
    } as unknown as ProbeTarget;
    expect(JSON.parse(cacheHitAnswer(target))).toEqual({
      model: "digits",
      version: "3",
      predictions: [{ class: 1, label: "one", confidence: 0.8, scores: [0.2, 0.8] }],
      servedBy: "cache",
    });
  });
});
