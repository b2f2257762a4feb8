import { toHex } from "./digest.ts";
import { SIGNATURE_HEADER, TIMESTAMP_HEADER } from "./headers.ts";

/** What an edge->regional signature covers. `path` includes the query string. */
export interface SignedCall {
  method: string;
  path: string;
  body: string | Uint8Array;
  /** Unix seconds. */
  timestamp: number;
}

export interface VerifyOptions {
  /** Now, in Unix milliseconds. Default `Date.now()`. */
  nowMs?: number;
  /** How far a timestamp may be from now, either way, in seconds. Default 30. */
  windowS?: number;
}

export type VerifyResult = { ok: true } | { ok: false; reason: string };

const encoder = new TextEncoder();
type HmacKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;
const keys = new Map<string, Promise<HmacKey>>();

function hmacKey(secret: string): Promise<HmacKey> {
  let key = keys.get(secret);
  if (!key) {
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
      "sign",
      "verify",
    ]);
    keys.set(secret, key);
  }
  return key;
}

/** `METHOD \n path \n timestamp \n` followed by the body bytes. */
function message(call: SignedCall): Uint8Array {
  const head = encoder.encode(`${call.method.toUpperCase()}\n${call.path}\n${call.timestamp}\n`);
  const body = typeof call.body === "string" ? encoder.encode(call.body) : call.body;
  const out = new Uint8Array(head.length + body.length);
  out.set(head, 0);
  out.set(body, head.length);
  return out;
}

/** Hex HMAC-SHA256 of a call with the shared secret. */
export async function signCall(secret: string, call: SignedCall): Promise<string> {
  return toHex(await crypto.subtle.sign("HMAC", await hmacKey(secret), message(call)));
}

/** The headers that carry a call's signature. */
export async function signatureHeaders(
  secret: string,
  call: Omit<SignedCall, "timestamp">,
  nowMs = Date.now(),
): Promise<Record<string, string>> {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    [TIMESTAMP_HEADER]: String(timestamp),
    [SIGNATURE_HEADER]: await signCall(secret, { ...call, timestamp }),
  };
}

function fromHex(hex: string): Uint8Array | undefined {
  if (hex.length !== 64 || !/^[0-9a-f]+$/i.test(hex)) return undefined;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/**
 * Check a call's signature: the timestamp must be within the window and the HMAC must match.
 * Web Crypto's `verify` compares in constant time.
 */
export async function verifyCall(
  secret: string,
  call: Omit<SignedCall, "timestamp">,
  timestampHeader: string | null | undefined,
  signatureHeader: string | null | undefined,
  options: VerifyOptions = {},
): Promise<VerifyResult> {
  const { nowMs = Date.now(), windowS = 30 } = options;
  if (!timestampHeader || !signatureHeader) {
    return { ok: false, reason: `missing ${TIMESTAMP_HEADER} or ${SIGNATURE_HEADER} header` };
  }
  if (!/^\d{1,12}$/.test(timestampHeader)) return { ok: false, reason: `malformed ${TIMESTAMP_HEADER}` };
  const timestamp = Number(timestampHeader);
  if (Math.abs(nowMs / 1000 - timestamp) > windowS) {
    return { ok: false, reason: `stale signature: timestamp is more than ${windowS} s from now` };
  }
  const signature = fromHex(signatureHeader);
  if (!signature) return { ok: false, reason: `malformed ${SIGNATURE_HEADER}` };
  const valid = await crypto.subtle.verify("HMAC", await hmacKey(secret), signature, message({ ...call, timestamp }));
  return valid ? { ok: true } : { ok: false, reason: "signature does not match" };
}
