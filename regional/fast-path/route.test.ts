import { describe, expect, it } from "vitest";
import { fastRoute } from "./route.ts";

const post = (url: string, extra: { host?: string; transferEncoding?: string } = {}) =>
  fastRoute({ method: "POST", url, host: "127.0.0.1:9001", ...extra });

describe("fastRoute", () => {
  it("takes POST /v1/classify", () => {
    expect(post("/v1/classify")).toEqual({ kind: "classify", pattern: "/v1/classify" });
  });

  it.each([
    ["/v2/models/digits/infer", { kind: "infer", pattern: "/v2/models/:model/infer", model: "digits" }],
    ["/v2/models/digits-edge/infer", { kind: "infer", pattern: "/v2/models/:model/infer", model: "digits-edge" }],
    [
      "/v2/models/digits/versions/12/infer",
      { kind: "infer", pattern: "/v2/models/:model/versions/:version/infer", model: "digits", version: "12" },
    ],
    [
      "/v2/models/m_1.b/versions/abc/infer",
      { kind: "infer", pattern: "/v2/models/:model/versions/:version/infer", model: "m_1.b", version: "abc" },
    ],
  ])("takes POST %s with its parameters", (url, route) => {
    expect(post(url)).toEqual(route);
  });

  it.each([
    "/v1/classify/",
    "/v1/classify?x=1",
    "/v1/classif%79",
    "//v1/classify",
    "/V1/classify",
    "/v2/models/a%2Fb/infer",
    "/v2/models/../infer",
    "/v2/models/./infer",
    "/v2/models//infer",
    "/v2/models/digits/infer/",
    "/v2/models/digits/versions//infer",
    "/v2/models/digits/ready",
    "/v2/models/digits\\x/infer",
    "/metrics",
  ])("leaves %s to Hono", (url) => {
    expect(post(url)).toBeUndefined();
  });

  it("leaves other methods, chunked bodies and unusual Host headers to Hono", () => {
    for (const method of ["GET", "HEAD", "PUT", "OPTIONS", undefined]) {
      expect(fastRoute({ method, url: "/v1/classify" })).toBeUndefined();
    }
    expect(post("/v1/classify", { transferEncoding: "chunked" })).toBeUndefined();
    for (const host of ["[::1", "a b", "x/y", "h:99999999", "h:80:80"]) {
      expect(post("/v1/classify", { host })).toBeUndefined();
    }
  });

  it("takes plain hosts, IPv6 literals and a missing Host (HTTP/1.0)", () => {
    for (const host of ["localhost", "eu.example.com:443", "[::1]:8000", "10.0.0.7", "my_host", ""]) {
      expect(post("/v1/classify", { host })).toBeDefined();
    }
    expect(fastRoute({ method: "POST", url: "/v1/classify" })).toBeDefined();
  });
});
