import type { Context } from "hono";
import type { AppEnv } from "../app-env.ts";
import { type CfLocation, requestLocation } from "./location.ts";
import type { RequestLocation } from "./region.ts";

/** Where the request comes from: `request.cf`, or the local override header where the environment allows it. */
export function locate(c: Context<AppEnv>): RequestLocation {
  return requestLocation(
    c.req.raw.cf as CfLocation | undefined,
    c.req.header("x-edgecascade-location"),
    c.get("runtime").options.allowLocationOverride,
  );
}
