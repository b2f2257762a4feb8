import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  deploy as deployVersion,
  Ids,
  putSecrets,
  servingAlone,
} from "../../tools/deploy/rehearsal/cloudflare-account.ts";
import {
  type ApiCall,
  type StandInOptions,
  startCloudflareApi,
  uploadedBindings,
} from "../../tools/deploy/rehearsal/cloudflare-api.ts";
import { verifyEdgeModels } from "../../tools/deploy/verify-models.ts";
import { ROOT } from "../../tools/edge-bundle/build-edge.ts";
import { signRepository, testSigner } from "../support/model-keys.ts";
import { workingCopy } from "../support/production-copy.ts";
import { copyModels } from "../support/regional-server.ts";

const run = promisify(execFile);
const NEW = "9a8b7c6d-2222-4b4b-8c8c-000000000002";
const OLD = "0f3c5d2e-1111-4a4a-8b8b-000000000001";
const ZONE = "edgecascade.example.com";
const tmp = mkdtempSync(join(tmpdir(), "edgecascade-deploy-cli-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * wrangler without credentials, its own config directory (no login from this machine) and no terminal: a
 * command whose arguments it accepts stops at "set a CLOUDFLARE_API_TOKEN"; one it does not stops earlier.
 */
const offline = () => {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: "1", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" };
  for (const name of Object.keys(env))
    if (/^CLOUDFLARE_|^CF_|^MODEL_PUBLIC_KEY$|^EDGECASCADE_/.test(name)) delete env[name];
  env.XDG_CONFIG_HOME = join(tmp, "config");
  return env;
};

type Exit = { code: number; stdout: string; stderr: string };

async function deployIn(root: string, env: Record<string, string>, ...args: string[]): Promise<Exit> {
  return run(process.execPath, [join(root, "tools/deploy.ts"), ...args], {
    cwd: root,
    env: { ...offline(), ...env },
    maxBuffer: 64 * 1024 * 1024,
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: Exit) => err,
  );
}

const deploy = (...args: string[]) => deployIn(ROOT, {}, ...args);

describe("npm run deploy --percent / --rollback --dry-run", () => {
  it("prints the gradual deploy's wrangler commands and runs nothing", async () => {
    const { code, stdout } = await deploy(
      "--env",
      "eu-only",
      "--percent",
      "10",
      "--dry-run",
      "--message",
      "canary 10%",
    );
    expect(code).toBe(0);
    expect(stdout.trim().split("\n")).toEqual([
      "cloudflare-api GET /accounts/<account>/workers/scripts/edgecascade-eu-only/deployments",
      // The secrets are checked before anything is uploaded.
      "cloudflare-api GET /accounts/<account>/workers/scripts/edgecascade-eu-only/secrets",
      // The generated config: wrangler.toml plus the alias of the Worker's model module (models/).
      "wrangler versions upload --env eu-only --message 'canary 10%' --config .wrangler-models-repository.toml",
      "wrangler versions deploy '<uploaded-version-id>@10%' '<serving-version-id>@90%' --env eu-only --message 'canary 10%' --yes",
      // Versions do not carry routes, Custom Domains or crons.
      "wrangler triggers deploy --env eu-only",
    ]);
  });

  it("moves an uploaded version without uploading, and finishes at 100%", async () => {
    const step = await deploy("--env", "staging", "--percent", "100", "--version-id", NEW, "--dry-run");
    expect(step.stdout.trim().split("\n")).toEqual([
      "cloudflare-api GET /accounts/<account>/workers/scripts/edgecascade-staging/deployments",
      `wrangler versions deploy ${NEW}@100% --env staging --message 'staging: move version to 100%' --yes`,
      "wrangler triggers deploy --env staging",
    ]);
  });

  it("prints the rollback: Cloudflare's deployment, unforced", async () => {
    const { stdout } = await deploy("--env", "production", "--rollback", "--version-id", OLD, "--dry-run");
    expect(stdout.trim().split("\n")).toEqual([
      "cloudflare-api GET /accounts/<account>/workers/scripts/edgecascade-production/deployments",
      `cloudflare-api POST /accounts/<account>/workers/scripts/edgecascade-production/deployments ${OLD}@100% (refused by Cloudflare if its secrets differ from today's)`,
    ]);
  });

  it("refuses bad arguments with exit 2 and says why", async () => {
    const { code, stderr } = await deploy("--env", "production", "--percent", "150");
    expect(code).toBe(2);
    expect(stderr).toContain('--percent must be an integer from 1 to 100, got "150"');
  });
});

describe("npm run deploy against a stand-in for Cloudflare's API", () => {
  const KV = { production: "kv0production", "eu-only": "kv0euonly", staging: "kv0staging" };
  let copy: { dir: string; remove(): void };
  beforeAll(async () => {
    // A checkout whose wrangler.toml has real KV namespace ids, as docs/deploy.md step 7 leaves it.
    copy = await workingCopy();
    const toml = join(copy.dir, "wrangler.toml");
    let text = readFileSync(toml, "utf8");
    for (const [env, id] of Object.entries(KV)) text = text.replace(`<${env} REGION_STATUS namespace id>`, id);
    writeFileSync(toml, text);
  });
  afterAll(() => copy?.remove());

  async function standIn(options: StandInOptions = {}) {
    return startCloudflareApi({
      zones: [{ name: ZONE }],
      kvNamespaces: Object.entries(KV).map(([env, id]) => ({ id, title: `${env}-REGION_STATUS` })),
      ...options,
    });
  }
  async function deployTo(
    api: { baseUrl: string; account: { id: string } },
    env: Record<string, string>,
    ...args: string[]
  ) {
    return deployIn(
      copy.dir,
      {
        CLOUDFLARE_API_BASE_URL: api.baseUrl,
        CLOUDFLARE_API_TOKEN: "test-token",
        CLOUDFLARE_ACCOUNT_ID: api.account.id,
        ...env,
      },
      ...args,
    );
  }
  const uploads = (calls: ApiCall[]) =>
    calls.filter(
      (c) => /^(PUT|POST)$/.test(c.method) && /\/workers\/scripts\/edgecascade-[\w-]+(\?|\/versions\?)/.test(c.url),
    );

  it("refuses the first deploy of an environment without its secrets: nothing is uploaded", async () => {
    const api = await standIn();
    try {
      const { code, stderr } = await deployTo(api, {}, "--env", "production");
      expect(code).toBe(1);
      expect(stderr).toContain("refusing to deploy production: required secrets are not set");
      for (const name of ["API_KEYS", "REGIONAL_SHARED_SECRET", "MODEL_PUBLIC_KEY"])
        expect(stderr).toContain(`  ${name}: `);
      expect(stderr).toContain("--secrets-file");
      expect(api.calls.map((c) => `${c.method} ${c.url}`)).toEqual([
        `GET /client/v4/accounts/${api.account.id}/workers/scripts/edgecascade-production/secrets`,
      ]);
    } finally {
      await api.close();
    }
  });

  it("sets staging's secrets with its first upload, and leaves its models unsigned whatever key the shell exports", async () => {
    const api = await standIn();
    const file = join(tmp, "staging.env");
    writeFileSync(file, "API_KEYS=k1,k2\nREGIONAL_SHARED_SECRET=s3cret\n");
    const shellKey = (await testSigner()).publicKey;
    try {
      const { code, stdout, stderr } = await deployTo(
        api,
        { MODEL_PUBLIC_KEY: shellKey },
        "--env",
        "staging",
        "--secrets-file",
        file,
      );
      expect(code, stderr).toBe(0);
      expect(stderr).toContain(
        "==> secrets: API_KEYS, REGIONAL_SHARED_SECRET set (no Worker yet; in --secrets-file: API_KEYS, REGIONAL_SHARED_SECRET)",
      );
      expect(stderr).toContain(
        "==> edge models: MODEL SIGNATURES NOT VERIFIED for staging (staging's Worker gets no MODEL_PUBLIC_KEY): breast-cancer-edge/1, digits-edge/1",
      );
      expect(stderr).toContain("(the shell's MODEL_PUBLIC_KEY is not staging's: its Worker holds none)");
      // A new Worker: uploaded without its route, the Custom Domain checked, then attached with the cron.
      expect(stderr).toMatch(
        /\$ wrangler deploy --env staging --config \.wrangler-models-first\.toml --secrets-file \S+staging\.env/,
      );
      expect(stderr).toContain(`==> custom domains: staging.${ZONE} new`);
      expect(stderr).toContain("$ wrangler triggers deploy --env staging");
      const [upload] = uploads(api.calls);
      // The deployed bundle carries none of the local stack's stand-ins (edge/local/), only the Worker's code
      // (esbuild heads each module it takes with its path).
      expect(upload!.body).toContain("\n// edge/cache/response-cache.ts\n");
      expect(upload!.body.match(/^\/\/ edge\/local\/.*$/gm)).toBeNull();
      expect(upload!.body).not.toMatch(/MemoryCache|MemoryRateLimit/);
      const bindings = uploadedBindings(upload!);
      expect(bindings).toContainEqual({ name: "API_KEYS", type: "secret_text", text: "k1,k2" });
      expect(bindings).toContainEqual({ name: "REGIONAL_SHARED_SECRET", type: "secret_text", text: "s3cret" });
      expect(bindings.some((b) => b.name === "MODEL_PUBLIC_KEY")).toBe(false);
      expect(bindings).toContainEqual(
        expect.objectContaining({ name: "REGION_STATUS", type: "kv_namespace", namespace_id: KV.staging }),
      );
      const serving = servingAlone(api.account.scripts.get("edgecascade-staging")!)!;
      // stdout: the version serving now.
      expect(stdout.trim()).toBe(serving.id);
      expect(api.account.customDomains.map((d) => d.hostname)).toEqual([`staging.${ZONE}`]);
      expect(api.unknown).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it("refuses a Custom Domain that would take over a DNS record, unless told --take-over-dns", async () => {
    const api = await standIn({ dnsRecords: { [`staging.${ZONE}`]: "A 192.0.2.1" } });
    const file = join(tmp, "takeover.env");
    writeFileSync(file, "API_KEYS=k1\nREGIONAL_SHARED_SECRET=s\n");
    const versions = () => api.account.scripts.get("edgecascade-staging")?.versions.length ?? 0;
    try {
      // A first deploy: the Worker is uploaded first (only then can Cloudflare be asked), its domain held back.
      const first = await deployTo(api, {}, "--env", "staging", "--secrets-file", file);
      expect(first.code).toBe(1);
      expect(first.stderr).toContain(
        "refusing to deploy staging: its Custom Domains would take over what is there now:",
      );
      expect(first.stderr).toContain(`  staging.${ZONE}: a DNS record of its own (not a Custom Domain)`);
      expect(first.stderr).toContain(
        "(edgecascade-staging is uploaded and serves no hostname yet: deploy again once the hostname is free.)",
      );
      expect(versions()).toBe(1);
      expect(api.account.customDomains).toEqual([]);
      expect(api.account.dnsRecords.get(`staging.${ZONE}`)).toBe("A 192.0.2.1");

      // The Worker exists now: refused before anything is uploaded.
      const again = await deployTo(api, {}, "--env", "staging");
      expect(again.code).toBe(1);
      expect(again.stderr).toContain(`  staging.${ZONE}: a DNS record of its own (not a Custom Domain)`);
      expect(versions()).toBe(1);

      const taken = await deployTo(api, {}, "--env", "staging", "--take-over-dns");
      expect(taken.code, taken.stderr).toBe(0);
      expect(taken.stderr).toContain(
        `(--take-over-dns: replacing staging.${ZONE}'s a DNS record of its own (not a Custom Domain))`,
      );
      expect(versions()).toBe(2);
      expect(api.account.dnsRecords.has(`staging.${ZONE}`)).toBe(false);
      expect(api.account.customDomains.map((d) => [d.hostname, d.service])).toEqual([
        [`staging.${ZONE}`, "edgecascade-staging"],
      ]);
    } finally {
      await api.close();
    }
  });

  it("does not deploy eu-only where Cloudflare will not set Regional Services: nothing is uploaded", async () => {
    const api = await standIn();
    const file = join(tmp, "eu.env");
    writeFileSync(file, "API_KEYS=k1\nREGIONAL_SHARED_SECRET=s\n");
    try {
      const { code, stderr } = await deployTo(api, {}, "--env", "eu-only", "--secrets-file", file, "--allow-open");
      expect(code).toBe(1);
      expect(stderr).toContain(
        `refusing to deploy eu-only: DATA_RESIDENCY=eu needs Regional Services (region "eu") on eu.${ZONE}`,
      );
      expect(stderr).toContain("Data Localization Suite, an add-on to the Enterprise plan");
      expect(uploads(api.calls)).toEqual([]);
      expect(api.account.customDomains).toEqual([]);
    } finally {
      await api.close();
    }
  });

  it("deploys without its secrets only with --allow-open, and says so loudly", async () => {
    const api = await standIn();
    try {
      const { code, stderr } = await deployTo(api, {}, "--env", "staging", "--allow-open");
      expect(code, stderr).toBe(0);
      expect(stderr).toContain("!!! --allow-open: deploying staging WITHOUT API_KEYS, REGIONAL_SHARED_SECRET:");
      expect(stderr).toContain("!!! API_KEYS: anyone may call the Worker");
      const [upload] = uploads(api.calls);
      expect(uploadedBindings(upload!).filter((b) => b.type === "secret_text" || b.type === "inherit")).toEqual([]);
    } finally {
      await api.close();
    }
  });
});

describe("npm run deploy -- --rehearse, where the real deploy would stop", () => {
  it("stops at the probe's key when it is not one of API_KEYS, before anything runs", async () => {
    const file = join(tmp, "rehearse.env");
    writeFileSync(file, "API_KEYS=client-key\nREGIONAL_SHARED_SECRET=s\n");
    const { code, stderr } = await deployIn(
      ROOT,
      { EDGECASCADE_API_KEY: "k1" },
      "--env",
      "staging",
      "--rehearse",
      "--secrets-file",
      file,
    );
    expect(code).toBe(1);
    expect(stderr).toContain("REHEARSAL of staging's first deploy");
    expect(stderr).toContain(
      "the scheduled probe's key: EDGECASCADE_API_KEY is not one of API_KEYS: the scheduled probe would get 401 on every request",
    );
    expect(stderr).not.toContain("==> ");
  });

  it("stops at the secrets, as the first deploy without them would", async () => {
    const { code, stderr } = await deployIn(ROOT, {}, "--env", "production", "--rehearse");
    expect(code).toBe(1);
    expect(stderr).toMatch(
      /==> kv namespaces: REGION_STATUS: created \w+ \(wrangler\.toml has the placeholder <production REGION_STATUS namespace id>\)/,
    );
    expect(stderr).toContain("refusing to deploy production: required secrets are not set");
    expect(stderr).not.toContain("==> secrets:");
    expect(stderr).not.toContain("npm start");
  });
});

describe("npm run deploy -- --rollback, after a rotated secret", () => {
  it("refuses to bring the old secret back, names it and the way back; --restore-old-secrets does it", async () => {
    const api = await startCloudflareApi({
      zones: [{ name: ZONE }],
      secrets: { "edgecascade-production": { API_KEYS: "k1", REGIONAL_SHARED_SECRET: "old", MODEL_PUBLIC_KEY: "pk" } },
    });
    const s = api.account.scripts.get("edgecascade-production")!;
    const ids = new Ids();
    const now = new Date().toISOString();
    // A second version of the same code (tagged with its commit), then `wrangler secret put REGIONAL_SHARED_SECRET`.
    const v1 = s.versions[0]!;
    v1.annotations["workers/tag"] = "0a1b2c3d4e5f";
    s.versions.push({ ...v1, id: "v2-same-secrets", number: 2, annotations: {} });
    deployVersion(s, [{ version_id: "v2-same-secrets", percentage: 100 }], {}, false, ids, now);
    putSecrets(s, { REGIONAL_SHARED_SECRET: "rotated" }, ids, now, true);
    const rotated = servingAlone(s)!.id;
    const env = {
      CLOUDFLARE_API_BASE_URL: api.baseUrl,
      CLOUDFLARE_API_TOKEN: "t",
      CLOUDFLARE_ACCOUNT_ID: api.account.id,
    };
    try {
      const refused = await deployIn(ROOT, env, "--env", "production", "--rollback");
      expect(refused.code).toBe(1);
      expect(refused.stderr).toContain(
        "refusing to roll production back to version v2-same-secrets: its secrets differ from the ones serving now (REGIONAL_SHARED_SECRET).",
      );
      expect(servingAlone(s)!.id).toBe(rotated);

      // To a version whose secrets are today's, the rollback goes through.
      s.versions.push({ ...servingAlone(s)!, id: "v4-rotated-too", number: 4 });
      deployVersion(s, [{ version_id: "v4-rotated-too", percentage: 100 }], {}, false, ids, now);
      const back = await deployIn(ROOT, env, "--env", "production", "--rollback");
      expect(back.code, back.stderr).toBe(0);
      expect(back.stdout.trim()).toBe(rotated);

      const old = await deployIn(ROOT, env, "--env", "production", "--rollback", "--version-id", v1.id);
      expect(old.code).toBe(1);
      expect(old.stderr).toContain("git checkout 0a1b2c3d4e5f && npm run deploy -- --env production");
      const forced = await deployIn(
        ROOT,
        env,
        "--env",
        "production",
        "--rollback",
        "--version-id",
        v1.id,
        "--restore-old-secrets",
      );
      expect(forced.code, forced.stderr).toBe(0);
      expect(forced.stderr).toContain(
        `--restore-old-secrets: ${v1.id} comes back with its own values of REGIONAL_SHARED_SECRET`,
      );
      expect(servingAlone(s)!.id).toBe(v1.id);
    } finally {
      await api.close();
    }
  });
});

describe("edge model checks before a deploy", () => {
  it("without MODEL_PUBLIC_KEY, says the edge models are not signature-checked", async () => {
    const { code, stderr } = await deploy("--env", "eu-only", "--percent", "10", "--dry-run");
    expect(code).toBe(0);
    expect(stderr).toContain(
      "MODEL SIGNATURES NOT VERIFIED for eu-only (no MODEL_PUBLIC_KEY): breast-cancer-edge/1, digits-edge/1 checked against their sha256 only",
    );
  });

  it("with a public key, refuses to bundle unsigned edge models: nothing is uploaded", async () => {
    const key = (await testSigner()).publicKey;
    const { code, stdout, stderr } = await deployIn(
      ROOT,
      { MODEL_PUBLIC_KEY: key },
      "--env",
      "eu-only",
      "--percent",
      "10",
      "--dry-run",
    );
    expect(code).toBe(1);
    expect(stderr).toContain("deploy: edge models refused, nothing deployed:");
    expect(stderr).toMatch(/signature refused: digits-edge\/1 is not signed/);
    expect(stdout).not.toContain("versions upload");
  });

  it("passes edge models signed by the key, and names a tampered one", async () => {
    const signer = await testSigner();
    const models = copyModels();
    try {
      await signRepository(models.dir, signer);
      expect(await verifyEdgeModels(models.dir, signer.publicKey)).toEqual(["breast-cancer-edge/1", "digits-edge/1"]);
      const configPath = join(models.dir, "digits-edge", "config.json");
      const config = JSON.parse(readFileSync(configPath, "utf8"));
      config.versions["1"].signature = (await testSigner()).sign({
        model: "digits-edge",
        version: "1",
        sha256: config.versions["1"].sha256,
        bytes: config.versions["1"].bytes,
      });
      writeFileSync(configPath, JSON.stringify(config));
      await expect(verifyEdgeModels(models.dir, signer.publicKey)).rejects.toThrow(
        /digits-edge\/1 is signed by key [0-9a-f]{16}, and this server only trusts key/,
      );
    } finally {
      models.remove();
    }
  });
});
