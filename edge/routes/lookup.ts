import type { Context } from "hono";
import type { AppEnv } from "../app-env.ts";
import type { ServedModel } from "../models/served-model.ts";
import { mayCall } from "../tenants/keys.ts";
import { checkModel } from "./model-check.ts";

/** The model a request names, checked against what the edge serves and the caller's key (404, 403). */
export function lookupModel(c: Context<AppEnv>, name: string, version: string | undefined): ServedModel {
  const { models } = c.get("tenant");
  c.set("model", name);
  return checkModel(c.get("runtime").models, name, version, (m) => mayCall(models, m));
}
