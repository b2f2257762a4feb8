import { Hono } from "hono";
import * as v from "valibot";
import { refuseOtherMethods } from "../../hono-shared/method-not-allowed.ts";
import { BadRequest } from "../../protocol/errors.ts";
import { parseJsonBody } from "../../protocol/json-body.ts";
import { parseRolloutState } from "../../protocol/rollout/state.ts";
import { parseOrDescribe, plainObject } from "../../protocol/schema-message.ts";
import type { AppDeps, RegionalEnv } from "../app-context.ts";
import { adminToken } from "../middleware/admin-auth.ts";
import { bodyLimit } from "../middleware/body-limit.ts";

const loadSchema = v.strictObject({
  parameters: v.optional(
    plainObject(
      v.strictObject({
        version: v.optional(v.pipe(v.string(), v.regex(/^\d+$/, 'must be a version number such as "2"'))),
      }),
    ),
  ),
});
/** A model's rollout: GET its state and evidence, PUT a new state (docs/rollouts.md). */
export const ROLLOUT_PATH = "/v2/repository/models/:model/rollout";

const indexSchema = v.strictObject({ ready: v.optional(v.boolean()) });

/** An optional JSON body: empty means `{}`; anything else must be JSON matching `schema` (400/415 otherwise). */
async function optionalBody<const S extends v.GenericSchema>(
  text: string,
  contentType: string | undefined,
  schema: S,
): Promise<v.InferOutput<S>> {
  const raw = text.trim() === "" ? {} : parseJsonBody(text, contentType);
  const parsed = parseOrDescribe(plainObject(schema), raw);
  if (!parsed.ok) throw new BadRequest(parsed.message);
  return parsed.value;
}

/**
 * Triton's model repository extension, behind the admin token: index, load (default: re-read config.json and
 * load the version it names; `{"parameters": {"version": "2"}}` for another) and unload; and each model's
 * rollout (GET state and evidence, PUT a new state).
 */
export function repositoryRoutes(deps: AppDeps): Hono<RegionalEnv> {
  const { repository } = deps;
  const app = new Hono<RegionalEnv>();
  const paths = [
    "/v2/repository/index",
    "/v2/repository/models/:model/load",
    "/v2/repository/models/:model/unload",
    ROLLOUT_PATH,
  ];
  for (const path of paths) {
    app.use(path, adminToken({ token: deps.adminToken }), bodyLimit({ maxBytes: 16 * 1024 }));
  }

  app.post("/v2/repository/index", async (c) => {
    const { ready } = await optionalBody(await c.req.text(), c.req.header("content-type"), indexSchema);
    // Through `control`: in a cluster, every worker's index combined (a model may serve in its owning worker only).
    const entries = (await deps.control.index()).filter((e) => !ready || e.state === "READY");
    // Serving versions are described too (inputs, outputs, labels), as /v2/models/{name} would.
    return c.json(
      entries.map((e) => {
        if (e.state !== "READY") return e;
        // A candidate shares the serving version's tensors and labels (one config.json for every version).
        const { inputs, outputs, labels, features, platform } = repository.metadata(
          e.name,
          e.candidate ? undefined : e.version,
        );
        return { ...e, platform, inputs, outputs, labels, ...(features ? { features } : {}) };
      }),
    );
  });

  // Loads, unloads and rollouts go through `control`: in a cluster, every worker of the pool takes them.
  app.post("/v2/repository/models/:model/load", async (c) => {
    const body = await optionalBody(await c.req.text(), c.req.header("content-type"), loadSchema);
    return c.json(await deps.control.load(c.req.param("model"), body.parameters?.version));
  });

  app.post("/v2/repository/models/:model/unload", async (c) => {
    await optionalBody(await c.req.text(), c.req.header("content-type"), v.strictObject({}));
    return c.json(await deps.control.unload(c.req.param("model")));
  });

  app.get(ROLLOUT_PATH, async (c) => {
    repository.versions(c.req.param("model")); // 404 for an unknown model
    return c.json(await deps.control.rolloutStatus(c.req.param("model")));
  });

  app.put(ROLLOUT_PATH, async (c) => {
    const name = c.req.param("model");
    repository.versions(name);
    const parsed = parseRolloutState(parseJsonBody(await c.req.text(), c.req.header("content-type")));
    if (!parsed.ok) throw new BadRequest(parsed.message);
    if (parsed.value.model !== name) {
      throw new BadRequest(`"model" is "${parsed.value.model}"; this is the rollout of "${name}"`);
    }
    return c.json(await deps.control.rollout(parsed.value));
  });

  return refuseOtherMethods(app, {
    ...Object.fromEntries(paths.map((p) => [p, ["POST"]])),
    [ROLLOUT_PATH]: ["GET", "PUT"],
  });
}
