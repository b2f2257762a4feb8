import { describe, expect, it } from "vitest";
import { RateLimited } from "../../protocol/errors.ts";
import { KeyWindow } from "../tenants/key-window.ts";
import { ANONYMOUS, type Caller } from "./api-key.ts";
import { checkRateLimits, hasRateLimits } from "./rate-limit.ts";

const anonymous: Caller = { client: "ip:203.0.113.9", tenant: ANONYMOUS };
const refusing = { limit: async () => ({ success: false }) } as unknown as RateLimit;

describe("hasRateLimits", () => {
  it("is false only when checkRateLimits would check nothing: no binding and no limit of the key's own", async () => {
    expect(hasRateLimits(undefined, anonymous)).toBe(false);
    await expect(checkRateLimits(undefined, anonymous, 60)).resolves.toBeUndefined();

    expect(hasRateLimits(refusing, anonymous)).toBe(true);
    await expect(checkRateLimits(refusing, anonymous, 60)).rejects.toBeInstanceOf(RateLimited);

    const window = new KeyWindow({ requests: 1, periodS: 60 });
    const keyed: Caller = { client: "key:0123456789abcdef", tenant: { name: "acme", models: "*", window } };
    expect(hasRateLimits(undefined, keyed)).toBe(true);
    await expect(checkRateLimits(undefined, keyed, 60)).resolves.toBeUndefined();
    await expect(checkRateLimits(undefined, keyed, 60)).rejects.toBeInstanceOf(RateLimited);
  });
});
