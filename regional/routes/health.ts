import { Hono } from "hono";
import { refuseOtherMethods } from "../../hono-shared/method-not-allowed.ts";
import type { ServerMetadata } from "../../protocol/types.ts";
import type { AppDeps, RegionalEnv } from "../app-context.ts";
import { PeerUnreachable } from "../peers/peer-client.ts";
import { modelReadiness, poolReadiness } from "../readiness.ts";
import { SERVER_NAME, SERVER_VERSION } from "../server-info.ts";

/**
 * The load policy in force, the budget per worker and what it holds (`on-demand`: the memory counted, evictions so
 * far) and this process's model counts. Cheap to poll, unlike /metrics, whose series grow with the models.
 */
function modelLoading(repository: AppDeps["repository"]) {
  const { budgetBytes, residentBytes, available, loaded } = repository.memory();
  return {
    policy: repository.policy,
    ...(repository.policy === "on-demand"
      ? { memoryBudgetBytes: budgetBytes, residentBytes, evictions: repository.evictions }
      : {}),
    available,
    loaded,
  };
}

/**
 * Server and model metadata, liveness and readiness (open to everyone, like /metrics: Kubernetes' probes and scrapers
 * carry no credentials). Readiness checks also start the load of any wanted model that is neither serving nor
 * loading; concurrent checks share that one load.
 */
export function healthRoutes(deps: AppDeps): Hono<RegionalEnv> {
  const { repository } = deps;
  const app = new Hono<RegionalEnv>();

  app.get("/v2", (c) =>
    c.json({
      name: SERVER_NAME,
      version: SERVER_VERSION,
      extensions: ["model_repository", "binary_tensor_data", "model_configuration", "statistics"],
      region: deps.region,
      executionProvider: deps.provider,
      // Said where operators look: a deployment without a public key serves unsigned models.
      modelSignatures: deps.modelSigningKey ? { required: true, key: deps.modelSigningKey } : { required: false },
      // Which models load without a request asking, and within what (this process's figures).
      modelLoading: modelLoading(deps.repository),
    } satisfies ServerMetadata & Record<string, unknown>),
  );

  app.get("/v2/health/live", (c) => c.json({ live: true }));

  app.get("/v2/health/ready", (c) => {
    // Ready for the models that serve; those whose load failed are named, with why (repository.ts `ready`).
    const readiness = poolReadiness(deps);
    return readiness.ready ? c.json(readiness) : c.json(readiness, 503);
  });

  const modelReady = (name: string, version: string | undefined) => modelReadiness(repository, name, version);
  app.get("/v2/models/:model/ready", async (c) => {
    const name = c.req.param("model");
    // A model another worker of the pod owns (regional/peers/) is ready where it runs: that worker answers.
    const peer = deps.peers?.ownerOf(name);
    if (peer) {
      try {
        const owner = await peer.modelReady(name);
        return c.json(owner.body as object, owner.status === 200 ? 200 : 503);
      } catch (err) {
        if (!(err instanceof PeerUnreachable)) throw err;
        deps.peers!.unreachable(peer, err);
      }
    }
    if (modelReady(name, undefined)) return c.json({ name, ready: true });
    return c.json({ name, ready: false, reason: repository.notReadyReason(name) }, 503);
  });
  app.get("/v2/models/:model/versions/:version/ready", (c) => {
    const { model: name, version } = c.req.param();
    return modelReady(name, version) ? c.json({ name, ready: true }) : c.json({ name, ready: false }, 503);
  });

  // With the model's rollout, if it has had one: the edge's region status check reads it (which version an input maps to).
  const described = (name: string, version?: string) => {
    const metadata = repository.metadata(name, version);
    const rollout = deps.rollouts.view(name);
    return rollout ? { ...metadata, rollout } : metadata;
  };
  app.get("/v2/models/:model", (c) => c.json(described(c.req.param("model"))));
  app.get("/v2/models/:model/versions/:version", (c) =>
    c.json(described(c.req.param("model"), c.req.param("version"))),
  );

  app.get("/metrics", async (c) => c.body(await deps.metricsText(), 200, { "content-type": deps.metricsContentType }));

  return refuseOtherMethods(app, {
    "/v2": ["GET"],
    "/v2/health/live": ["GET"],
    "/v2/health/ready": ["GET"],
    "/v2/models/:model/ready": ["GET"],
    "/v2/models/:model/versions/:version/ready": ["GET"],
    "/v2/models/:model": ["GET"],
    "/v2/models/:model/versions/:version": ["GET"],
    "/metrics": ["GET"],
  });
}
