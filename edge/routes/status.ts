import { Hono } from "hono";
import { refuseOtherMethods } from "../../hono-shared/method-not-allowed.ts";
import { type Baselines, edgeFigures } from "../analytics/figures.ts";
import type { AppEnv } from "../app-env.ts";
import { wasmHeapBytes } from "../inference/ort-workerd.ts";
import { isReadableAnalytics } from "../local-platform.ts";
import type { EdgeRuntime } from "../runtime.ts";
import { mayCall } from "../tenants/keys.ts";
import { contextLocation } from "./context-location.ts";

/**
 * `GET /status`: this isolate's request counts per model (by the tier that answered) and per tenant, each
 * model's served version and edge variant, each tenant's global quota (the period's use across isolates, as
 * its Durable Object holds it, and this isolate's lease and counts), its response cache (answers kept, writes to the
 * shared tier), and the edge's own numbers (edge share, degraded answers, latency per colo, audit agreement, drift)
 * where the dataset is in the isolate. A key scoped to some models sees only those and its own tenant;
 * an unscoped key (or an open Worker) sees everything.
 * `GET /status/regions`: the latest scheduled region status check (shared through Workers KV) and this isolate's own
 * view of each region: breaker state, hedge delay, call counts, the answer time it expects for a request from where
 * this one came (`x-edgecascade-location` locally), and its evidence per place. Isolates do not share the latter.
 * `GET /status/sessions`: `/status`'s `sessions` alone, cheap to poll (`/status` lists every model: 600 KB and
 * tens of ms of the isolate's one thread with a thousand of them).
 */
export const status = new Hono<AppEnv>();

status.get("/", async (c) => {
  const rt = c.get("runtime");
  const tenant = c.get("tenant");
  const visible = (name: string) => mayCall(tenant.models, name);
  const visibleTenant = (name: string) => tenant.models === "*" || name === tenant.name;
  const counts = rt.counts.snapshot({ model: visible, tenant: visibleTenant });
  const models = Object.fromEntries(
    rt.models
      .all()
      .filter((m) => visible(m.name))
      .map((m) => [
        m.name,
        {
          servedVersion: m.servedVersion,
          rollout: m.rollout ?? null,
          edge: m.edge
            ? {
                name: m.edge.config.name,
                version: m.edge.version,
                threshold: rt.threshold(m),
                calibratedThreshold: m.edge.calibration.threshold,
                loaded: m.edge.ready,
                loads: m.edge.loads,
                evictions: m.edge.evictions,
                ...(m.edge.loadError ? { loadError: (m.edge.loadError as Error).message } : {}),
              }
            : null,
          requests: counts.models[m.name],
        },
      ]),
  );
  const registry = rt.registry;
  const view = registry?.view;
  return c.json({
    since: counts.since,
    tenant: tenant.name,
    modelSignatures: await rt.modelSignatures(),
    sessions: sessionsView(rt),
    models,
    tenants: counts.tenants,
    quotas: await rt.tenantLimits.quotas.snapshot(visibleTenant),
    // The model registry this isolate follows: when the cron last read it (the view's age tells an outage),
    // and what this isolate loaded from it, refused or failed to load (it keeps serving what it has).
    registry: registry
      ? {
          viewAt: view ? new Date(view.at).toISOString() : null,
          viewAgeS: view ? Math.round((Date.now() - view.at) / 1000) : null,
          revisions: Object.fromEntries(rt.models.all().map((m) => [m.name, m.registryRevision])),
          ...registry.counts,
          viewReadFailures: registry.viewReadFailures,
          ...(view?.errors ? { errors: view.errors } : {}),
          ...(registry.lastError ? { lastError: registry.lastError } : {}),
        }
      : null,
    observed: observed(rt, visible),
    cache: { entries: rt.cache.entries, sharedWrites: rt.cache.writes },
  });
});

/** The isolate's edge sessions within EDGE_SESSION_MEMORY_MB, and the wasm heap they live in. */
const sessionsView = (rt: EdgeRuntime) => ({ ...rt.sessions.snapshot(), wasmHeapBytes: wasmHeapBytes() });

/** How many of the latest data points `/status` lists as they were written (local dataset only). */
const LATEST_POINTS = 20;

/**
 * The edge's own numbers (edge/analytics/): from the in-isolate dataset of LOCAL_PLATFORM "memory" (`npm start`),
 * the figures docs/observability.md's SQL gives from Workers Analytics Engine, and the latest points; deployed,
 * where they are. A scoped key sees its models' points only.
 */
function observed(rt: EdgeRuntime, visible: (model: string) => boolean) {
  const dataset = rt.analytics;
  if (!isReadableAnalytics(dataset)) {
    return {
      dataset: dataset
        ? "Workers Analytics Engine (ANALYTICS): query it with SQL, docs/observability.md"
        : "none: no ANALYTICS binding",
    };
  }
  const points = dataset.points().filter((p) => visible(p.blobs[2] ?? ""));
  const baselines: Baselines = Object.fromEntries(
    rt.models.all().map((m) => [
      m.name,
      {
        labels: m.config.labels,
        versions: Object.fromEntries(
          Object.entries(m.config.versions).flatMap(([v, entry]) =>
            entry.heldout ? [[v, entry.heldout.classCounts]] : [],
          ),
        ),
        fallback: m.config.versions[m.config.version]?.heldout?.classCounts,
      },
    ]),
  );
  return {
    dataset: "in the isolate (LOCAL_PLATFORM=memory): Miniflare has no Analytics Engine",
    written: dataset.written,
    ...edgeFigures(points, baselines),
    latest: points.slice(-LATEST_POINTS),
  };
}

status.get("/regions", async (c) => {
  const rt = c.get("runtime");
  const regionStatus = await rt.latestRegionStatus(Date.now());
  return c.json({
    servedVersions: Object.fromEntries(rt.models.all().map((m) => [m.name, m.servedVersion])),
    regionStatus,
    isolate: rt.book.snapshot(contextLocation(c)),
  });
});
status.get("/sessions", (c) => c.json(sessionsView(c.get("runtime"))));

refuseOtherMethods(status, { "/": ["GET"], "/regions": ["GET"], "/sessions": ["GET"] });
