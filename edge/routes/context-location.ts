import type { Context } from "hono";
import type { AppEnv } from "../app-env.ts";
import type { RequestFacts } from "../observe/request-facts.ts";
import type { RequestLocation } from "../regions/region.ts";
import { type CfLocation, requestLocation } from "../regions/request-location.ts";

/** Where the request comes from: `request.cf`, or the local override header where the environment allows it. */
export function contextLocation(c: Context<AppEnv>): RequestLocation {
  return requestLocation(
    c.req.raw.cf as CfLocation | undefined,
    c.req.header("x-edgecascade-location"),
    c.get("runtime").options.allowLocationOverride,
  );
}

/** What a request's data point and audit need of a Hono request (edge/observe/request-facts.ts). */
export function contextFacts(c: Context<AppEnv>): RequestFacts {
  return {
    trace: c.get("trace"),
    startedAt: c.get("startedAt"),
    colo: () => (c.req.raw.cf as CfLocation | undefined)?.colo,
    locate: () => contextLocation(c),
  };
}
