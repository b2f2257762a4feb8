import { toHex } from "./digest.ts";
import { AUDIT_HEADER, SIGNATURE_HEADER, TENANT_HEADER, TIMESTAMP_HEADER } from "./headers.ts";

/** What an edge->regional signature covers. `path` includes the query string. */
export interface SignedCall {
  method: string;
  path: string;
  body: string | Uint8Array;
  /** Unix seconds. */
  timestamp: number;
  /** The edge tenant the call is for (`x-edgecascade-tenant`); none for the edge's own calls (warm probes). */
  tenant?: string;
  /**
   * An audit's edge labels (`x-edgecascade-audit`, protocol/audit.ts: digits and commas); none on any other call.
   * Signed like the tenant: it takes the call out of the pool's request, latency and tenant series and into the
   * audit's counts, which an alert reads.
   */
  audit?: string;
}

/**
 * A tenant name as the forward carries it: the edge's tenant names (`[\w.-]`), its key digests (`key:<hex>`) and
 * `anonymous`. No newline or `;` can appear, so the signed line that carries it reads one way only.
 */
export const TENANT_NAME = /^[\w.:-]{1,80}$/;

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
    key = crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    keys.set(secret, key);
  }
  return key;
}

/**
 * What is signed: `METHOD \n path \n timestamp \n` followed by the body bytes; with a tenant, its line is
 * `timestamp;tenant=<name>`, and with an audit's labels `;audit=<labels>` follows. A timestamp is digits only and a
 * tenant name holds no `;`, so no call without a tenant (or labels) signs the same bytes as one with, and a
 * signature made for one tenant (or labels) never verifies for another (or for none).
 */
export function signedMessage(call: SignedCall): Uint8Array {
  let stamp = call.tenant === undefined ? String(call.timestamp) : `${call.timestamp};tenant=${call.tenant}`;
  if (call.audit !== undefined) stamp += `;audit=${call.audit}`;
  const head = encoder.encode(`${call.method.toUpperCase()}\n${call.path}\n${stamp}\n`);
  const body = typeof call.body === "string" ? encoder.encode(call.body) : call.body;
  const out = new Uint8Array(head.length + body.length);
  out.set(head, 0);
  out.set(body, head.length);
  return out;
}

/** Hex HMAC-SHA256 of a call with the shared secret. */
export async function signCall(secret: string, call: SignedCall): Promise<string> {
  return toHex(await crypto.subtle.sign("HMAC", await hmacKey(secret), signedMessage(call)));
}

/** The headers that carry a call's signature, and its tenant and audit labels when it has them. */
export async function signatureHeaders(
  secret: string,
  call: Omit<SignedCall, "timestamp">,
  nowMs = Date.now(),
): Promise<Record<string, string>> {
  const timestamp = Math.floor(nowMs / 1000);
  return {
    [TIMESTAMP_HEADER]: String(timestamp),
    [SIGNATURE_HEADER]: await signCall(secret, { ...call, timestamp }),
    ...(call.tenant === undefined ? {} : { [TENANT_HEADER]: call.tenant }),
    ...(call.audit === undefined ? {} : { [AUDIT_HEADER]: call.audit }),
  };
}

function fromHex(hex: string): Uint8Array | undefined {
  if (hex.length !== 64 || !/^[0-9a-f]+$/i.test(hex)) return undefined;
  const out = new Uint8Array(32);
  for (let i = 0; i < 32; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

/** The signature headers of a call, read: its timestamp and HMAC, or why they cannot be checked. */
export type PresentedSignature = { ok: true; timestamp: number; signature: Uint8Array } | { ok: false; reason: string };

/** The timestamp must be a whole number of seconds within the window, the signature 64 hex digits. */
export function presentedSignature(
  timestampHeader: string | null | undefined,
  signatureHeader: string | null | undefined,
  options: VerifyOptions = {},
): PresentedSignature {
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
  return { ok: true, timestamp, signature };
}

/** Why a call whose headers were readable is refused: its HMAC is not the expected one. Verifiers compare
 * in constant time (regional/middleware/signature-auth.ts). */
export const MISMATCH: VerifyResult = { ok: false, reason: "signature does not match" };
