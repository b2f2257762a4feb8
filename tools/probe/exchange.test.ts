import { Pool } from "undici";
import { describe, expect, it } from "vitest";
import { exchange } from "./exchange.ts";
import { startNoopServer } from "./floor.ts";

describe("exchange", () => {
  it("resolves with the status, the whole body and when it was read", async () => {
    const body = JSON.stringify({ servedBy: "cache", padding: "x".repeat(100_000) });
    const server = await startNoopServer(body);
    const pool = new Pool(server.url);
    try {
      const before = performance.now();
      const answer = await exchange(pool, { path: "/v1/classify", method: "POST", body: "{}" });
      expect(answer.status).toBe(200);
      expect(answer.headers["content-type"]).toBe("application/json");
      expect(answer.text).toBe(body);
      expect(answer.doneAt).toBeGreaterThan(before);
      expect(answer.doneAt).toBeLessThanOrEqual(performance.now());
    } finally {
      await pool.close();
      await server.close();
    }
  });

  it("rejects when no answer comes", async () => {
    const server = await startNoopServer("{}");
    await server.close();
    const pool = new Pool(server.url);
    await expect(exchange(pool, { path: "/", method: "POST", body: "{}" })).rejects.toThrow();
    await pool.close();
  });
});
