import { describe, expect, it } from "vitest";
import { startNoopServer } from "./floor.ts";

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
