import { describe, expect, it } from "vitest";
import { bodyTooLarge } from "./body-limit.ts";
import { PayloadTooLarge } from "./errors.ts";

describe("bodyTooLarge", () => {
  it("is one 413 for a body refused unread: the message names the limit, the connection closes", () => {
    const err = bodyTooLarge(262_144);
    expect(err).toBeInstanceOf(PayloadTooLarge);
    expect(err).toMatchObject({ status: 413, code: "payload_too_large", headers: { connection: "close" } });
    expect(err.message).toBe("request body exceeds 262144 bytes");
  });

  it("for a body read whole and too large once decompressed, says so and keeps the connection", () => {
    const err = bodyTooLarge(1024, "gzip");
    expect(err.message).toBe("request body exceeds 1024 bytes once decompressed (content-encoding gzip)");
    expect(err.headers).toEqual({});
  });
});
