import { describe, expect, it } from "vitest";
import { AUDIT_HEADER, SIGNATURE_HEADER, TENANT_HEADER, TIMESTAMP_HEADER } from "../../protocol/headers.ts";
import { signatureHeaders } from "../../protocol/signing.ts";
import { verifyCallNow } from "./signature-auth.ts";

// Calls are signed with WebCrypto (protocol/signing.ts, as the edge signs them) and checked with node:crypto.

const secret = "s3cret";
const call = { method: "POST", path: "/v1/classify", body: '{"model":"digits","inputs":[1]}' };
const now = Date.UTC(2026, 10, 29, 12, 0, 0);

async function signed() {
  const headers = await signatureHeaders(secret, call, now);
  return { ts: headers[TIMESTAMP_HEADER]!, sig: headers[SIGNATURE_HEADER]! };
}

describe("edge->regional signatures", () => {
  it("verifies an untouched call", async () => {
    const { ts, sig } = await signed();
    expect(sig).toMatch(/^[0-9a-f]{64}$/);
    expect(verifyCallNow(secret, call, ts, sig, { nowMs: now + 5_000 })).toEqual({ ok: true });
    expect(verifyCallNow(secret, { ...call, method: "post" }, ts, sig, { nowMs: now })).toEqual({ ok: true });
  });

  it.each([
    ["a tampered body", { ...call, body: '{"model":"digits","inputs":[2]}' }],
    ["a tampered path", { ...call, path: "/v2/models/digits/infer" }],
    ["a different method", { ...call, method: "PUT" }],
  ])("rejects %s", async (_, tampered) => {
    const { ts, sig } = await signed();
    expect(verifyCallNow(secret, tampered, ts, sig, { nowMs: now })).toEqual({
      ok: false,
      reason: "signature does not match",
    });
  });

  it("rejects a tampered timestamp and another secret", async () => {
    const { ts, sig } = await signed();
    expect(verifyCallNow(secret, call, String(Number(ts) + 1), sig, { nowMs: now })).toEqual({
      ok: false,
      reason: "signature does not match",
    });
    expect(verifyCallNow("other", call, ts, sig, { nowMs: now }).ok).toBe(false);
  });

  it("rejects stale and future timestamps outside the window", async () => {
    const { ts, sig } = await signed();
    const stale = verifyCallNow(secret, call, ts, sig, { nowMs: now + 31_000 });
    expect(stale).toEqual({ ok: false, reason: "stale signature: timestamp is more than 30 s from now" });
    expect(verifyCallNow(secret, call, ts, sig, { nowMs: now - 31_000 }).ok).toBe(false);
    expect(verifyCallNow(secret, call, ts, sig, { nowMs: now + 59_000, windowS: 60 }).ok).toBe(true);
  });

  it.each([
    [undefined, "ab", "missing x-edgecascade-timestamp or x-edgecascade-signature header"],
    ["1764417600", null, "missing x-edgecascade-timestamp or x-edgecascade-signature header"],
    ["12e3", "ab", "malformed x-edgecascade-timestamp"],
    [String(now / 1000), "zz", "malformed x-edgecascade-signature"],
    [String(now / 1000), "ab".repeat(31), "malformed x-edgecascade-signature"],
  ])("rejects malformed headers (%s, %s)", async (ts, sig, reason) => {
    expect(verifyCallNow(secret, call, ts, sig, { nowMs: now })).toEqual({ ok: false, reason });
  });

  it("signs byte bodies the same as their text", async () => {
    const { ts, sig } = await signed();
    const bytes = new TextEncoder().encode(call.body);
    expect(verifyCallNow(secret, { ...call, body: bytes }, ts, sig, { nowMs: now })).toEqual({ ok: true });
  });

  it("covers the tenant: a signature holds for its own tenant only, and a tenant's never verifies without it", async () => {
    const acme = await signatureHeaders(secret, { ...call, tenant: "acme" }, now);
    expect(acme[TENANT_HEADER]).toBe("acme");
    const ts = acme[TIMESTAMP_HEADER]!;
    const sig = acme[SIGNATURE_HEADER]!;
    const at = { nowMs: now };
    expect(verifyCallNow(secret, { ...call, tenant: "acme" }, ts, sig, at)).toEqual({ ok: true });
    expect(verifyCallNow(secret, { ...call, tenant: "globex" }, ts, sig, at).ok).toBe(false);
    expect(verifyCallNow(secret, call, ts, sig, at).ok).toBe(false);
    const none = await signed();
    expect(verifyCallNow(secret, { ...call, tenant: "acme" }, none.ts, none.sig, at).ok).toBe(false);
    expect(Object.keys(await signatureHeaders(secret, call, now))).not.toContain(TENANT_HEADER);
  });

  it("covers an audit's labels: added, removed or changed, the signature no longer holds", async () => {
    const audit = await signatureHeaders(secret, { ...call, tenant: "acme", audit: "3,7" }, now);
    expect(audit[AUDIT_HEADER]).toBe("3,7");
    const ts = audit[TIMESTAMP_HEADER]!;
    const sig = audit[SIGNATURE_HEADER]!;
    const at = { nowMs: now };
    expect(verifyCallNow(secret, { ...call, tenant: "acme", audit: "3,7" }, ts, sig, at)).toEqual({ ok: true });
    expect(verifyCallNow(secret, { ...call, tenant: "acme", audit: "3,8" }, ts, sig, at).ok).toBe(false);
    expect(verifyCallNow(secret, { ...call, tenant: "acme" }, ts, sig, at).ok).toBe(false);
    const none = await signed();
    expect(verifyCallNow(secret, { ...call, audit: "3" }, none.ts, none.sig, at).ok).toBe(false);
  });
});
