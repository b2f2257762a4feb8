import type { MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { bodyTooLarge } from "../../protocol/body-limit.ts";
import { DEFAULT_LIMITS } from "../../protocol/limits.ts";
import type { AppEnv } from "../app-env.ts";

/** Body size limit of the POST routes (`DEFAULT_LIMITS.maxBodyBytes`): the one 413 (protocol/body-limit.ts) through the one onError. */
export function limitBody(): MiddlewareHandler<AppEnv> {
  return bodyLimit({
    maxSize: DEFAULT_LIMITS.maxBodyBytes,
    onError: () => {
      throw bodyTooLarge(DEFAULT_LIMITS.maxBodyBytes);
    },
  });
}
