import { describe, expect, it } from "vitest";
import { takesFastClassify } from "./route.ts";

const head = (url: string, over: Partial<Parameters<typeof takesFastClassify>[0]> = {}) =>
  takesFastClassify({ method: "POST", url, contentLength: "120", transferEncoding: null, ...over });

describe("takesFastClassify", () => {
  it.each([
    "http://127.0.0.1:8787/v1/classify",
    "https://us.edgecascade.example.com/v1/classify",
    "http://[::1]:8787/v1/classify",
  ])("takes POST %s with a Content-Length", (url) => {
    expect(head(url)).toBe(true);
  });

  it.each([
    "http://127.0.0.1:8787/v1/classify/",
    "http://127.0.0.1:8787/v1/classify?x=1",
    "http://127.0.0.1:8787/v1/classify?",
    "http://127.0.0.1:8787/v1/classif%79",
    "http://127.0.0.1:8787/v1/v1/classify",
    "http://127.0.0.1:8787/x/v1/classify",
    "http://127.0.0.1:8787/V1/classify",
    "http://127.0.0.1:8787/v2/models/digits/infer",
    "http://127.0.0.1:8787/",
    "/v1/classify",
  ])("declines %s", (url) => {
    expect(head(url)).toBe(false);
  });

  it("declines other methods, chunked bodies and bodies without a length", () => {
    const url = "http://127.0.0.1:8787/v1/classify";
    for (const method of ["GET", "PUT", "OPTIONS", "HEAD", "post"]) expect(head(url, { method })).toBe(false);
    expect(head(url, { transferEncoding: "chunked" })).toBe(false);
    expect(head(url, { contentLength: null })).toBe(false);
  });
});
