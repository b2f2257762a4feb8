import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { verifyEdgeModels } from "../../tools/deploy/verify-models.ts";
import { ROOT } from "../../tools/edge-bundle/build-edge.ts";
import { signRepository, testSigner } from "../support/model-keys.ts";
import { copyModels } from "../support/regional-server.ts";
import { type ApiCall, startCloudflareApi, uploadedBindings } from "./cloudflare-api.ts";

const run = promisify(execFile);
const NEW = "9a8b7c6d-2222-4b4b-8c8c-000000000002";
const OLD = "0f3c5d2e-1111-4a4a-8b8b-000000000001";
const tmp = mkdtempSync(join(tmpdir(), "edgecascade-deploy-cli-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * wrangler without credentials, its own config directory (no login from this machine) and no terminal: a
 * command whose arguments it accepts stops at "set a CLOUDFLARE_API_TOKEN"; one it does not stops earlier.
 */
const offline = () => {
  const env: NodeJS.ProcessEnv = { ...process.env, CI: "1", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" };
  for (const name of Object.keys(env)) if (/^CLOUDFLARE_|^CF_/.test(name)) delete env[name];
  env.XDG_CONFIG_HOME = join(tmp, "config");
  return env;
};

async function deploy(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return deployWith({}, ...args);
}

async function deployWith(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number; stdout: string; stderr: string }> {
  return run(process.execPath, ["tools/deploy.ts", ...args], { cwd: ROOT, env: { ...offline(), ...env } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (err: { code: number; stdout: string; stderr: string }) => err,
  );
}

/** A printed command line back into arguments (the plan quotes with single quotes only). */
function words(line: string): string[] {
  return [...line.matchAll(/'((?:[^']|'\\'')*)'|(\S+)/g)].map((m) => (m[1] ?? m[2]!).replace(/'\\''/g, "'"));
}

async function wrangler(args: string[]): Promise<{ code: number; output: string }> {
  return run(join(ROOT, "node_modules/.bin/wrangler"), args, { cwd: ROOT, env: offline(), timeout: 120_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, output: stdout + stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({ code: err.code, output: err.stdout + err.stderr }),
  );
}

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
      "wrangler deployments status --env eu-only --json",
      // The secrets are checked before anything is uploaded.
      "wrangler secret list --env eu-only --format json",
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
      "wrangler deployments status --env staging --json",
      `wrangler versions deploy ${NEW}@100% --env staging --message 'staging: move version to 100%' --yes`,
      "wrangler triggers deploy --env staging",
    ]);
  });

  it("prints the rollback", async () => {
    const { stdout } = await deploy("--env", "production", "--rollback", "--version-id", OLD, "--dry-run");
    expect(stdout.trim().split("\n")).toEqual([
      "wrangler deployments status --env production --json",
      `wrangler rollback ${OLD} --env production --message 'rollback of production' --yes`,
    ]);
  });

  it("refuses bad arguments with exit 2 and says why", async () => {
    const { code, stderr } = await deploy("--env", "production", "--percent", "150");
    expect(code).toBe(2);
    expect(stderr).toContain('--percent must be an integer from 1 to 100, got "150"');
  });

  it("prints commands whose arguments this wrangler accepts", async () => {
    const gradual = (await deploy("--env", "production", "--percent", "25", "--dry-run")).stdout;
    const rollback = (await deploy("--env", "production", "--rollback", "--dry-run")).stdout;
    const lines = [...gradual.trim().split("\n"), ...rollback.trim().split("\n")].map((line) =>
      words(line.replace("<uploaded-version-id>", NEW).replace("<serving-version-id>", OLD)).slice(1),
    );
    expect(lines.map((args) => args.slice(0, 2).join(" "))).toEqual([
      "deployments status",
      "secret list",
      "versions upload",
      "versions deploy",
      "triggers deploy",
      "deployments status",
      "rollback --env",
    ]);
    for (const args of lines) {
      if (args[0] === "versions" && args[1] === "upload") {
        // wrangler's own dry run bundles the Worker without uploading: the whole command runs here.
        const { code, output } = await wrangler([...args, "--dry-run", "--outdir", join(tmp, "upload")]);
        expect(output).toMatch(/Total Upload: [\d.]+ KiB/);
        expect(code, output).toBe(0);
      } else {
        const { code, output } = await wrangler(args);
        expect(code).not.toBe(0);
        expect(output, args.join(" ")).toContain("it's necessary to set a CLOUDFLARE_API_TOKEN");
        expect(output).not.toMatch(/Unknown argument|Not enough non-option arguments|Invalid values/);
      }
    }
  });
});

describe("npm run deploy: never open, never unsigned (against a stand-in for Cloudflare's API)", () => {
  const ACCOUNT = "0123456789abcdef0123456789abcdef";
  async function deployTo(api: { baseUrl: string }, ...args: string[]) {
    return deployWith(
      { CLOUDFLARE_API_BASE_URL: api.baseUrl, CLOUDFLARE_API_TOKEN: "test-token", CLOUDFLARE_ACCOUNT_ID: ACCOUNT },
      ...args,
    );
  }
  const uploads = (calls: ApiCall[]) =>
    calls.filter((c) => c.method === "PUT" && /\/workers\/scripts\/edgecascade-[\w-]+\?/.test(c.url));

  it("refuses the first deploy of an environment without its secrets: nothing is uploaded", async () => {
    const api = await startCloudflareApi({});
    try {
      const { code, stderr } = await deployTo(api, "--env", "production");
      expect(code).toBe(1);
      expect(stderr).toContain("refusing to deploy production: required secrets are not set");
      for (const name of ["API_KEYS", "REGIONAL_SHARED_SECRET", "MODEL_PUBLIC_KEY"])
        expect(stderr).toContain(`  ${name}: `);
      expect(stderr).toContain("--secrets-file");
      expect(api.calls.map((c) => `${c.method} ${c.url}`)).toEqual([
        `GET /client/v4/accounts/${ACCOUNT}/workers/scripts/edgecascade-production/secrets`,
      ]);
    } finally {
      await api.close();
    }
  });

  it("sets the secrets with the Worker's first upload (--secrets-file), never after it", async () => {
    const api = await startCloudflareApi({});
    const file = join(tmp, "staging.env");
    writeFileSync(file, "API_KEYS=k1,k2\nREGIONAL_SHARED_SECRET=s3cret\n");
    try {
      const { stderr } = await deployTo(api, "--env", "staging", "--secrets-file", file);
      expect(stderr).toContain("secrets of staging: API_KEYS, REGIONAL_SHARED_SECRET set");
      expect(stderr).toContain(
        "$ wrangler deploy --env staging --config .wrangler-models-repository.toml --secrets-file",
      );
      // The stand-in answers the upload with "no such Worker", so wrangler stops there: what counts is what it sent.
      const [upload] = uploads(api.calls);
      expect(upload, JSON.stringify(api.calls.map((c) => c.url))).toBeDefined();
      const bindings = uploadedBindings(upload!);
      expect(bindings).toContainEqual({ name: "API_KEYS", type: "secret_text", text: "k1,k2" });
      expect(bindings).toContainEqual({ name: "REGIONAL_SHARED_SECRET", type: "secret_text", text: "s3cret" });
      expect(bindings).toContainEqual(expect.objectContaining({ name: "REGION_STATUS", type: "kv_namespace" }));
    } finally {
      await api.close();
    }
  });

  it("deploys without them only with --allow-open, and says so loudly", async () => {
    const api = await startCloudflareApi({});
    try {
      const { stderr } = await deployTo(api, "--env", "staging", "--allow-open");
      expect(stderr).toContain("!!! --allow-open: deploying staging WITHOUT API_KEYS, REGIONAL_SHARED_SECRET:");
      expect(stderr).toContain("!!! API_KEYS: anyone may call the Worker");
      // wrangler enforces secrets.required itself: the open deploy runs from a config without them.
      expect(stderr).toContain("$ wrangler deploy --env staging --config .wrangler-models-open.toml");
      const [upload] = uploads(api.calls);
      expect(upload).toBeDefined();
      expect(uploadedBindings(upload!).filter((b) => b.type === "secret_text" || b.type === "inherit")).toEqual([]);
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
    const { code, stdout, stderr } = await deployWith(
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
