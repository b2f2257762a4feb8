import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { PayloadTooLarge } from "../../protocol/errors.ts";
import { DEFAULT_LIMITS } from "../../protocol/limits.ts";
import type { AppEnv } from "../app-env.ts";

/** The 413 of a body over `DEFAULT_LIMITS.maxBodyBytes`. */
export const bodyTooLarge = () => new PayloadTooLarge(`request body exceeds ${DEFAULT_LIMITS.maxBodyBytes} bytes`);

/** Body size limit of the POST routes (`DEFAULT_LIMITS.maxBodyBytes`): 413 through the one onError. */
export function limitBody(): MiddlewareHandler<AppEnv> {
  return bodyLimit({
    maxSize: DEFAULT_LIMITS.maxBodyBytes,
    onError: () => {
      throw bodyTooLarge();
    },
  });
}
