import { describe, expect, it } from "vitest";
import { BadRequest, UnsupportedMediaType } from "./errors.ts";
import { isJsonContentType, parseJsonBody } from "./json-body.ts";

describe("parseJsonBody", () => {
  it("accepts application/json with parameters and +json types", () => {
    expect(isJsonContentType("application/json")).toBe(true);
    expect(isJsonContentType("Application/JSON; charset=utf-8")).toBe(true);
    expect(isJsonContentType("application/vnd.api+json")).toBe(true);
    expect(parseJsonBody('{"a":1}', "application/json")).toEqual({ a: 1 });
  });

  it.each([
    [undefined, "content-type must be application/json"],
    [null, "content-type must be application/json"],
    ["text/plain", "content-type must be application/json, got text/plain"],
    [
      "application/x-www-form-urlencoded",
      "content-type must be application/json, got application/x-www-form-urlencoded",
    ],
  ])("415 for content-type %s", (contentType, message) => {
    const call = () => parseJsonBody("{}", contentType);
    expect(call).toThrow(UnsupportedMediaType);
    expect(call).toThrow(message);
    try {
      call();
    } catch (err) {
      expect((err as UnsupportedMediaType).status).toBe(415);
    }
  });

  it.each([
    ["", "request body is empty"],
    ["   ", "request body is empty"],
    ["{", "invalid JSON:"],
    ['{"inputs": [NaN]}', "invalid JSON:"],
    ["{'a': 1}", "invalid JSON:"],
  ])("400 for body %j", (text, message) => {
    expect(() => parseJsonBody(text, "application/json")).toThrow(BadRequest);
    expect(() => parseJsonBody(text, "application/json")).toThrow(message);
  });
});
