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

describe("parseJsonBody from bytes", () => {
  const bytes = (...parts: (string | number[])[]) =>
    Uint8Array.from(parts.flatMap((p) => (typeof p === "string" ? [...new TextEncoder().encode(p)] : p)));

  it("decodes UTF-8, multi-byte characters included", () => {
    expect(parseJsonBody(bytes('{"id":"é€😀"}'), "application/json")).toEqual({ id: "é€😀" });
    expect(parseJsonBody(bytes('{"a":1}').buffer, "application/json")).toEqual({ a: 1 });
  });

  it.each([
    ["a lone continuation byte", [0x80]],
    ["an invalid byte", [0xff]],
    ["an overlong encoding", [0xc0, 0x80]],
    ["an encoded surrogate", [0xed, 0xa0, 0x80]],
    ["a truncated sequence", [0xe2, 0x82]],
  ])("400 for invalid UTF-8: %s", (_, invalid) => {
    const body = bytes('{"id":"', invalid, '"}');
    expect(() => parseJsonBody(body, "application/json")).toThrow(BadRequest);
    expect(() => parseJsonBody(body, "application/json")).toThrow("request body is not valid UTF-8");
  });

  it("checks the content type first", () => {
    expect(() => parseJsonBody(bytes([0xff]), "text/plain")).toThrow(UnsupportedMediaType);
  });
});
