import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { errorResponse } from "../../protocol/error-answer.ts";
import { NotFound } from "../../protocol/errors.ts";
import type { AppEnv } from "../app-env.ts";
import type { EdgeRuntime } from "../runtime.ts";
import { allowedOrigin, cors } from "./cors.ts";

/** An app with the middleware; the runtime carries only what CORS reads (the allowed origins). */
function app(corsOrigins: string[] | "*") {
  const a = new Hono<AppEnv>();
  a.use(async (c, next) => {
    c.set("runtime", { options: { corsOrigins } } as unknown as EdgeRuntime);
    await next();
  });
  a.use(
    cors({
      allowMethods: ["GET", "POST"],
      allowHeaders: ["content-type", "x-a"],
      exposeHeaders: ["x-b", "x-c"],
      maxAgeS: 60,
    }),
  );
  a.post("/ok", (c) => c.json({ ok: true }));
  a.post("/fails", () => {
    throw new NotFound("nothing here");
  });
  a.onError((err) => errorResponse(err));
  return a;
}

describe("allowedOrigin", () => {
  it.each([
    ["https://x.example", "*", "*"],
    ["", "*", "*"],
    ["https://app.example", ["https://app.example"], "https://app.example"],
    ["https://evil.example", ["https://app.example"], undefined],
    ["", ["https://app.example"], undefined],
  ] as const)("%j with %j -> %j", (origin, allowed, expected) => {
    expect(allowedOrigin(origin, allowed)).toBe(expected);
  });
});

describe("cors", () => {
  it("answers any OPTIONS as a preflight, with methods, headers and max age", async () => {
    const res = await app("*").request("/ok", { method: "OPTIONS", headers: { origin: "https://x.example" } });
    expect(res.status).toBe(204);
    expect(Object.fromEntries(res.headers)).toEqual({
      "access-control-allow-origin": "*",
      "access-control-allow-methods": "GET,POST",
      "access-control-allow-headers": "content-type,x-a",
      "access-control-expose-headers": "x-b,x-c",
      "access-control-max-age": "60",
      vary: "Origin, Access-Control-Request-Headers",
    });
  });

  it("marks answers and errors alike, keeping their own headers", async () => {
    for (const path of ["/ok", "/fails"]) {
      const res = await app("*").request(path, { method: "POST", headers: { origin: "https://x.example" } });
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-expose-headers")).toBe("x-b,x-c");
      expect(res.headers.get("timing-allow-origin")).toBe("*");
      expect(res.headers.get("vary")).toBe("Origin");
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    }
  });

  it("gives an answer to a request without an Origin (no browser's cross-origin call) only Vary", async () => {
    for (const allowed of ["*", ["https://app.example"]] as const) {
      const res = await app(allowed as string[] | "*").request("/ok", { method: "POST" });
      expect(Object.fromEntries(res.headers)).toEqual({ "content-type": "application/json", vary: "Origin" });
    }
  });

  it("lists the allowed origins in Timing-Allow-Origin", async () => {
    const res = await app(["https://a.example", "https://b.example"]).request("/ok", {
      method: "POST",
      headers: { origin: "https://b.example" },
    });
    expect(res.headers.get("access-control-allow-origin")).toBe("https://b.example");
    expect(res.headers.get("timing-allow-origin")).toBe("https://a.example, https://b.example");
  });

  it("names only allowed origins", async () => {
    const restricted = app(["https://app.example"]);
    const allowed = await restricted.request("/ok", { method: "POST", headers: { origin: "https://app.example" } });
    expect(allowed.headers.get("access-control-allow-origin")).toBe("https://app.example");
    const other = await restricted.request("/ok", { method: "POST", headers: { origin: "https://evil.example" } });
    expect(other.status).toBe(200);
    expect(other.headers.get("access-control-allow-origin")).toBeNull();
    const preflight = await restricted.request("/ok", {
      method: "OPTIONS",
      headers: { origin: "https://evil.example" },
    });
    expect(preflight.headers.get("access-control-allow-origin")).toBeNull();
  });
});
