import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { startEdgeWorker } from "../../scripts/stack/edge-worker.ts";
import { withoutRequiredSecrets } from "../../tools/deploy/config-edits.ts";
import { MODELS_DIR, ROOT } from "../../tools/edge-bundle/build-edge.ts";
import { readRepository } from "../../tools/edge-bundle/edge-models.ts";

const run = promisify(execFile);
const EDGE_VARIANTS = readRepository(MODELS_DIR).filter((m) => m.edge).length;
const MiB = 1024 * 1024;
/** The Worker size limit on every plan since 2026-09-04: 64 MiB, uncompressed (docs/edge.md). */
const SIZE_LIMIT = 64 * MiB;

const EVERY_POOL = ["us-east", "us-west", "eu-central", "eu-west", "ap-northeast", "ap-southeast"];
/** The deployed environments: one anycast Worker that knows every pool, a residency-restricted one, staging. */
const REGIONS: Record<string, string[]> = {
  production: EVERY_POOL,
  "eu-only": ["eu-central", "eu-west"],
  staging: EVERY_POOL,
};

const tmp = mkdtempSync(join(tmpdir(), "edgecascade-deploy-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("deployed environments", () => {
  it("are production (the default: every pool), eu-only (residency) and staging", async () => {
    const { unstable_readConfig } = await import("wrangler");
    const toml = join(ROOT, "wrangler.toml");
    for (const [env, names] of Object.entries(REGIONS)) {
      const config = unstable_readConfig({ config: toml, env });
      const regions = config.vars.REGIONS as { name: string; continent: string }[];
      expect(regions.map((r) => r.name)).toEqual(names);
      if (env === "eu-only") expect(new Set(regions.map((r) => r.continent))).toEqual(new Set(["EU"]));
      // One hostname each, a Custom Domain: Cloudflare makes its DNS record and certificate.
      // A Custom Domain is a bare hostname: no path, no wildcard.
      // Its zone named, so that npm run deploy can check the pools' certificates and set Regional Services.
      expect(config.routes).toEqual([
        {
          pattern: expect.stringMatching(/^[\w-]+(\.[\w-]+)+$/),
          custom_domain: true,
          zone_name: "edgecascade.example.com",
        },
      ]);
      expect(config.kv_namespaces).toEqual([{ binding: "REGION_STATUS", id: expect.stringMatching(/\S/) }]);
      // Workers Logs and traces, each head-sampled; one Analytics Engine dataset per environment.
      expect(config.observability).toEqual({
        enabled: true,
        head_sampling_rate: expect.any(Number),
        traces: { enabled: true, head_sampling_rate: expect.any(Number) },
      });
      // The traces the Worker starts itself (no platform span) are sampled as the platform's are.
      expect(Number(config.vars.TRACE_SAMPLE_RATIO)).toBe(config.observability?.traces?.head_sampling_rate);
      expect(config.analytics_engine_datasets).toEqual([
        { binding: "ANALYTICS", dataset: `edgecascade_requests_${env.replace("-", "_")}` },
      ]);
      // The cron writes REGION_STATUS; its schedule is the top level's (inherited).
      expect(config.triggers.crons.length).toBeGreaterThan(0);
      const signed = env !== "staging";
      expect(config.secrets?.required).toEqual([
        "API_KEYS",
        "REGIONAL_SHARED_SECRET",
        ...(signed ? ["MODEL_PUBLIC_KEY"] : []),
      ]);
      expect(config.vars.ALLOW_LOCATION_OVERRIDE).toBe("false");
      // The tenants' global quotas: the Durable Object the Worker exports, bound and migrated in each environment
      // (neither is inherited), and the per-tenant location limit TENANTS may name.
      expect(config.durable_objects.bindings).toEqual([{ name: "TENANT_QUOTA", class_name: "TenantQuota" }]);
      expect(config.migrations).toEqual([{ tag: "v1-tenant-quota", new_sqlite_classes: ["TenantQuota"] }]);
      expect(config.ratelimits.map((r: { name: string }) => r.name)).toEqual(["RATE_LIMITER", "TENANT_RATE_LIMITER"]);
    }
    // Every environment has its own rate-limit namespace and its own REGION_STATUS namespace.
    const configs = Object.keys(REGIONS).map((env) => unstable_readConfig({ config: toml, env }));
    for (const ids of [configs.map((c) => c.ratelimits[0]!.namespace_id), configs.map((c) => c.kv_namespaces[0]!.id)]) {
      expect(new Set(ids).size).toBe(ids.length);
    }
    // An --allow-open deploy drops secrets from the env's `secrets = { required = [...] }` line (plan.ts).
    const text = readFileSync(toml, "utf8");
    for (const env of Object.keys(REGIONS)) {
      expect(withoutRequiredSecrets(text, env, ["API_KEYS"])).not.toBe(text);
    }
  });

  it.each(Object.keys(REGIONS))(
    "npm run deploy -- --env %s --dry-run builds the Worker with its own bindings",
    async (env) => {
      const outdir = join(tmp, env);
      // npm run deploy's stdout is left for its answers: wrangler's output, the dry run's report, goes to stderr.
      const { stderr: stdout } = await run(
        process.execPath,
        ["tools/deploy.ts", "--env", env, "--dry-run", "--outdir", outdir],
        { cwd: ROOT, env: { ...process.env, WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" } },
      );
      const [, raw] = stdout.match(/Total Upload: ([\d.]+) KiB \/ gzip: ([\d.]+) KiB/) ?? [];
      expect(raw, stdout).toBeDefined();
      // Under a quarter of the limit: the ORT wasm is ~14 MB of it (docs/edge.md).
      expect(Number(raw) * 1024).toBeLessThan(SIZE_LIMIT / 4);
      expect(stdout).toMatch(/env\.RATE_LIMITER \(\d+ requests\/60s\)/);
      expect(stdout).toMatch(/env\.REGION_STATUS \(.*\)\s+KV Namespace/);
      expect(stdout).toMatch(/env\.TENANT_QUOTA \(TenantQuota\)/);
      expect(stdout).toMatch(/env\.REGIONS/);
      expect(stdout).toMatch(/env\.ANALYTICS \(edgecascade_requests_\w+\)\s+Analytics Engine Dataset/);

      const files = readdirSync(outdir);
      expect(files).toContain("worker.js");
      expect(files.filter((f) => f.endsWith("-ort-wasm-simd-threaded.wasm"))).toHaveLength(1);
      // Exactly the repository's edge variants, one file each.
      expect(files.filter((f) => f.endsWith("-model.onnx"))).toHaveLength(EDGE_VARIANTS);
      const bytes = files
        .filter((f) => !f.endsWith(".map") && f !== "README.md")
        .reduce((n, f) => n + statSync(join(outdir, f)).size, 0);
      expect(bytes / 1024).toBeCloseTo(Number(raw), -1);
    },
  );

  it.each(Object.entries(REGIONS))(
    "env %s's bindings configure its own regions and the Worker starts with them",
    async (env, names) => {
      const worker = await startEdgeWorker({ env });
      try {
        const status = await worker.dispatchFetch(`${worker.url}/status/regions`);
        const body = (await status.json()) as { isolate: { regions: { name: string; url: string }[] } };
        expect(body.isolate.regions.map((r) => r.name)).toEqual(names);
        for (const r of body.isolate.regions)
          expect(r.url).toMatch(/^https:\/\/[\w-]+-pool\.edgecascade\.example\.com$/);
        // A location override header is ignored outside the local stack: no region answers, so the edge degrades,
        // and the request is still answered (status 200) without the header steering anything.
        const answer = await worker.dispatchFetch(`${worker.url}/v2/health/ready`);
        expect(answer.status).toBe(200);
      } finally {
        await worker.dispose();
      }
    },
  );
});

describe("npm run deploy", () => {
  it("runs from a checkout whose path has a space (import.meta.url is percent-encoded)", async () => {
    const checkout = join(tmp, "my projects", "edgecascade");
    mkdirSync(join(checkout, "tools/edge-bundle"), { recursive: true });
    mkdirSync(join(checkout, "tools/deploy"), { recursive: true });
    mkdirSync(join(checkout, "tools/cli"), { recursive: true });
    mkdirSync(join(checkout, "protocol"), { recursive: true });
    // What the entry point loads before it reads its arguments (the steps themselves load later).
    for (const file of [
      "tools/deploy.ts",
      "tools/deploy/plan.ts",
      "tools/edge-bundle/build-edge.ts",
      "tools/cli/command.ts",
      "tools/cli/errors.ts",
      "tools/cli/flags.ts",
      "tools/cli/table.ts",
      "protocol/field-suggestion.ts",
      "wrangler.toml",
    ]) {
      copyFileSync(join(ROOT, file), join(checkout, file));
    }
    // Without --env the script refuses with its usage; a script that does nothing would exit 0 silently.
    const exit = await run(process.execPath, [join(checkout, "tools/deploy.ts")], {
      cwd: ROOT,
    }).then(
      () => ({ code: 0, stderr: "" }),
      (err: { code: number; stderr: string }) => ({ code: err.code, stderr: err.stderr }),
    );
    expect(exit).toEqual({
      code: 2,
      stderr: expect.stringContaining("--env is required (one of production, eu-only, staging)"),
    });
  });
});
