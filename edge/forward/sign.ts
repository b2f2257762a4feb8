import { signatureHeaders } from "../../protocol/signing.ts";
import type { Interceptor } from "./types.ts";

/**
 * Sign the call with the shared secret (protocol/signing.ts: HMAC over method, path, timestamp, the call's tenant,
 * an audit's labels, and body). Innermost but one, so it signs exactly the body that is sent. Without a secret calls pass unsigned.
 */
export const signing =
  (secret: string | undefined): Interceptor =>
  (next) =>
    secret === undefined
      ? next
      : async (call) =>
          next({
            ...call,
            headers: {
              ...call.headers,
              ...(await signatureHeaders(secret, {
                method: "POST",
                path: call.path,
                body: call.body,
                ...(call.tenant === undefined ? {} : { tenant: call.tenant }),
                ...(call.audit === undefined ? {} : { audit: call.audit }),
              })),
            },
          });
