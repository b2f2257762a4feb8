import type { Context } from "hono";
import type { AppEnv } from "../app-env.ts";
import type { Tenant } from "../middleware/api-key.ts";
import type { ServedModel } from "../models/served-model.ts";
import type { EdgeRuntime } from "../runtime.ts";
import { mayCall } from "../tenants/keys.ts";
import { checkModelAccess } from "./model-access.ts";

/** The model a request names, checked against what the edge serves and the tenant's key (404, 403). */
export function findModel(
  runtime: EdgeRuntime,
  tenant: Tenant,
  name: string,
  version: string | undefined,
): ServedModel {
  return checkModelAccess(runtime.models, name, version, (m) => mayCall(tenant.models, m));
}

/** `findModel` for a route, which first notes the name (refusals count against the model they named). */
export function lookupModel(c: Context<AppEnv>, name: string, version: string | undefined): ServedModel {
  c.set("model", name);
  return findModel(c.get("runtime"), c.get("tenant"), name, version);
}
