import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { Unauthorized } from "../../protocol/errors.ts";
import { grpcAuth, grpcToken } from "./auth.ts";

describe("grpcToken", () => {
  it("is the hex HMAC-SHA256 of edgecascade-grpc-v1 with the shared secret, as docs/regional.md computes it", () => {
    const expected = createHmac("sha256", "s3cret").update("edgecascade-grpc-v1").digest("hex");
    expect(grpcToken("s3cret")).toBe(expected);
    expect(grpcToken("s3cret")).not.toContain("s3cret");
    expect(grpcToken("other")).not.toBe(expected);
  });
});

describe("grpcAuth", () => {
  const check = grpcAuth("s3cret");
  it("passes Bearer <token>, in any case of the scheme", () => {
    expect(() => check(`Bearer ${grpcToken("s3cret")}`)).not.toThrow();
    expect(() => check(`bearer ${grpcToken("s3cret")}`)).not.toThrow();
  });
  it.each([
    ["no metadata", undefined, /requires authorization metadata/],
    ["the secret itself", "Bearer s3cret", /not Bearer <token>/],
    ["another secret's token", `Bearer ${grpcToken("other")}`, /not Bearer <token>/],
    ["no scheme", grpcToken("s3cret"), /not Bearer <token>/],
  ])("refuses %s with 401", (_, authorization, message) => {
    expect(() => check(authorization)).toThrow(Unauthorized);
    expect(() => check(authorization)).toThrow(message);
  });
  it("without a secret every call passes, as HTTP inference does", () => {
    expect(() => grpcAuth(undefined)(undefined)).not.toThrow();
  });
});
