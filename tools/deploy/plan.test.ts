import { describe, expect, it } from "vitest";
import {
  deployableEnvs,
  gradualSplit,
  missingSecrets,
  parseDeployArgs,
  parseDeployment,
  parseSecretsFile,
  secretsMessage,
  shellLine,
  uploadedVersionId,
  wranglerCommand,
} from "./plan.ts";

const envs = ["us", "eu", "ap"];
const OLD = "0f3c5d2e-1111-4a4a-8b8b-000000000001";
const NEW = "9a8b7c6d-2222-4b4b-8c8c-000000000002";

describe("deploy arguments", () => {
  it("finds the environments of wrangler.toml, not their sub-tables", () => {
    const toml = "[vars]\n[env.us]\nroutes = []\n[env.us.vars]\n[[env.us.ratelimits]]\n[env.eu]\n[env.ap-2]\n";
    expect(deployableEnvs(toml)).toEqual(["us", "eu", "ap-2"]);
  });

  it.each([
    [
      ["--env", "eu"],
      {
        mode: "deploy",
        env: "eu",
        dryRun: false,
        rehearse: false,
        wranglerArgs: [],
        allowOpen: false,
        takeOverDns: false,
      },
    ],
    [
      ["--env=ap", "--dry-run", "--outdir", "x"],
      {
        mode: "deploy",
        env: "ap",
        dryRun: true,
        rehearse: false,
        wranglerArgs: ["--dry-run", "--outdir", "x"],
        allowOpen: false,
        takeOverDns: false,
      },
    ],
    [
      ["--dry-run", "-e", "us"],
      {
        mode: "deploy",
        env: "us",
        dryRun: true,
        rehearse: false,
        wranglerArgs: ["--dry-run"],
        allowOpen: false,
        takeOverDns: false,
      },
    ],
    [
      ["--env", "us", "--secrets-file", "s.env", "--allow-open", "--take-over-dns"],
      {
        mode: "deploy",
        env: "us",
        dryRun: false,
        rehearse: false,
        wranglerArgs: [],
        secretsFile: "s.env",
        allowOpen: true,
        takeOverDns: true,
      },
    ],
    [
      ["--env", "us", "--rehearse", "--secrets-file", "s.env"],
      {
        mode: "deploy",
        env: "us",
        dryRun: false,
        rehearse: true,
        wranglerArgs: [],
        secretsFile: "s.env",
        allowOpen: false,
        takeOverDns: false,
      },
    ],
    [
      ["--env", "eu", "--percent", "10", "--secrets-file=s.json"],
      {
        mode: "gradual",
        env: "eu",
        percent: 10,
        message: "eu: new version to 10%",
        dryRun: false,
        wranglerArgs: [],
        secretsFile: "s.json",
        allowOpen: false,
        takeOverDns: false,
      },
    ],
    [
      ["--env", "eu", "--percent=50", "--version-id", NEW, "--dry-run", "--message", "step 2"],
      {
        mode: "gradual",
        env: "eu",
        percent: 50,
        versionId: NEW,
        message: "step 2",
        dryRun: true,
        wranglerArgs: [],
        allowOpen: false,
        takeOverDns: false,
      },
    ],
    [
      ["--env", "us", "--rollback"],
      { mode: "rollback", env: "us", message: "rollback of us", dryRun: false, restoreOldSecrets: false },
    ],
    [
      ["--rollback", "--env", "us", "--version-id", OLD, "--dry-run", "--restore-old-secrets"],
      { mode: "rollback", env: "us", versionId: OLD, message: "rollback of us", dryRun: true, restoreOldSecrets: true },
    ],
  ])("%j", (argv, expected) => {
    expect(parseDeployArgs(argv, envs)).toEqual(expected);
  });

  it.each([
    [["--dry-run"], /--env is required \(one of us, eu, ap\)/],
    [["--env", "mars"], /unknown environment "mars"/],
    [["--env", "eu", "--percent", "0"], /--percent must be an integer from 1 to 100, got "0"/],
    [["--env", "eu", "--percent", "101"], /--percent must be an integer from 1 to 100/],
    [["--env", "eu", "--percent", "12.5"], /--percent must be an integer/],
    [["--env", "eu", "--percent"], /--percent needs a value/],
    [["--env", "eu", "--percent", "10", "--rollback"], /exclude each other/],
    [["--env", "eu", "--rollback", "--outdir", "x"], /--rollback takes no other arguments/],
    [["--env", "eu", "--version-id", NEW], /--version-id needs --percent or --rollback/],
    [["--env", "eu", "--percent", "5", "--version-id", "latest; rm -rf"], /--version-id must be a Worker version ID/],
    [
      ["--env", "eu", "--rollback", "--allow-open"],
      /--rollback takes no --secrets-file, --allow-open or --take-over-dns/,
    ],
    [
      ["--env", "eu", "--rollback", "--take-over-dns"],
      /--rollback takes no --secrets-file, --allow-open or --take-over-dns/,
    ],
    [["--env", "eu", "--restore-old-secrets"], /--restore-old-secrets goes with --rollback/],
    [["--env", "eu", "--rehearse", "--percent", "10"], /--rehearse walks a first deploy/],
    [["--env", "eu", "--rehearse", "--dry-run"], /--rehearse walks a first deploy/],
    [["--env", "eu", "--percent", "5", "--version-id", NEW, "--secrets-file", "s"], /not with --version-id/],
    [["--env", "eu", "--secrets-file"], /--secrets-file needs a value/],
  ])("refuses %j", (argv, message) => {
    expect(() => parseDeployArgs(argv, envs)).toThrow(message);
  });
});

describe("gradual split", () => {
  const alone = { versions: [{ version_id: OLD, percentage: 100 }] };
  const split = {
    versions: [
      { version_id: NEW, percentage: 10 },
      { version_id: OLD, percentage: 90 },
    ],
  };

  it("sends the new version its share and leaves the rest on the one serving now", () => {
    expect(gradualSplit(alone, NEW, 10)).toEqual([`${NEW}@10%`, `${OLD}@90%`]);
    expect(gradualSplit(alone, NEW, 100)).toEqual([`${NEW}@100%`]);
  });

  it("moves a split under way, keeping the other version as the stable one", () => {
    expect(gradualSplit(split, NEW, 50)).toEqual([`${NEW}@50%`, `${OLD}@50%`]);
    expect(gradualSplit(split, NEW, 100)).toEqual([`${NEW}@100%`]);
    // Back towards the old one, e.g. after a look at the new version's errors.
    expect(gradualSplit(split, OLD, 100)).toEqual([`${OLD}@100%`]);
  });

  it("refuses a third version during a split, and a version that already serves everything", () => {
    expect(() => gradualSplit(split, "third-version", 5)).toThrow(/a gradual deploy is under way \(.*@10%, .*@90%\)/);
    expect(() => gradualSplit(alone, OLD, 50)).toThrow(/already serves 100% of traffic/);
  });
});

describe("the platform's answers", () => {
  it("reads the deployment serving now, as Cloudflare lists it", () => {
    const deployment = {
      id: "d1",
      source: "wrangler",
      strategy: "percentage",
      versions: [{ version_id: OLD, percentage: 100 }],
      created_on: "2026-12-01T00:00:00Z",
    };
    expect(parseDeployment(deployment)).toEqual({ versions: [{ version_id: OLD, percentage: 100 }] });
    expect(() => parseDeployment({ versions: [] })).toThrow(/unexpected deployment/);
    expect(() => parseDeployment(undefined)).toThrow(/unexpected deployment/);
  });

  it("takes the uploaded version's ID from wrangler's output file", () => {
    const file = [
      JSON.stringify({ version: 1, type: "wrangler-session", wrangler_version: "4.164.0" }),
      JSON.stringify({ version: 1, type: "version-upload", worker_name: "edgecascade", version_id: NEW }),
      "",
    ].join("\n");
    expect(uploadedVersionId(file)).toBe(NEW);
    expect(uploadedVersionId(JSON.stringify({ version: 1, type: "deploy", version_id: OLD }))).toBe(OLD);
    expect(() => uploadedVersionId(file.split("\n")[0]!)).toThrow(/no version ID/);
  });
});

describe("secrets before a deploy", () => {
  it("reads a secrets file as JSON or .env, skipping comments and empty values", () => {
    expect(parseSecretsFile('{"API_KEYS": "k1,k2", "REGIONAL_SHARED_SECRET": "s", "EMPTY": ""}')).toEqual({
      API_KEYS: "k1,k2",
      REGIONAL_SHARED_SECRET: "s",
    });
    const dotenv =
      "# edge secrets\nAPI_KEYS=k1,k2\nexport REGIONAL_SHARED_SECRET = 'a b'\nMODEL_PUBLIC_KEY=\"x=\"\nEMPTY=\n";
    expect(parseSecretsFile(dotenv)).toEqual({
      API_KEYS: "k1,k2",
      REGIONAL_SHARED_SECRET: "a b",
      MODEL_PUBLIC_KEY: "x=",
    });
  });

  it("lets the shell override a name the .env file has, as wrangler does, and adds none it lacks", () => {
    const shell = { MODEL_PUBLIC_KEY: "from-shell", ADMIN_TOKEN: "not-a-worker-secret" };
    expect(parseSecretsFile("API_KEYS=k1\nMODEL_PUBLIC_KEY=from-file\n", shell)).toEqual({
      API_KEYS: "k1",
      MODEL_PUBLIC_KEY: "from-shell",
    });
    // A JSON file is taken as written.
    expect(parseSecretsFile('{"MODEL_PUBLIC_KEY": "from-file"}', shell)).toEqual({ MODEL_PUBLIC_KEY: "from-file" });
  });

  const required = ["API_KEYS", "REGIONAL_SHARED_SECRET", "MODEL_PUBLIC_KEY"];
  it("counts a secret set on the Worker, given in the file, or a var of the environment", () => {
    expect(missingSecrets(required, { onWorker: [], inFile: [], vars: [] })).toEqual(required);
    expect(missingSecrets(required, { onWorker: ["API_KEYS"], inFile: ["REGIONAL_SHARED_SECRET"], vars: [] })).toEqual([
      "MODEL_PUBLIC_KEY",
    ]);
    expect(
      missingSecrets(required, {
        onWorker: ["API_KEYS"],
        inFile: ["REGIONAL_SHARED_SECRET"],
        vars: ["MODEL_PUBLIC_KEY"],
      }),
    ).toEqual([]);
  });

  it("refuses naming each missing secret, what it leaves open and the way to give it", () => {
    const refusal = secretsMessage("production", ["API_KEYS", "REGIONAL_SHARED_SECRET"], false);
    expect(refusal).toMatch(/^refusing to deploy production: required secrets are not set/);
    expect(refusal).toContain("API_KEYS: anyone may call the Worker");
    expect(refusal).toContain("REGIONAL_SHARED_SECRET: calls to the pools go unsigned");
    expect(refusal).toContain("npm run deploy -- --env production --secrets-file");
    const warning = secretsMessage("production", ["API_KEYS"], true);
    expect(warning).toContain("!!! --allow-open: deploying production WITHOUT API_KEYS:");
    expect(warning).not.toContain("refusing");
  });
});

describe("wrangler commands", () => {
  it("spells each step with wrangler's flags", () => {
    expect(wranglerCommand.triggers("eu")).toEqual(["triggers", "deploy", "--env", "eu"]);
    expect(wranglerCommand.upload("eu", "m", ["--var", "A:1"])).toEqual([
      "versions",
      "upload",
      "--env",
      "eu",
      "--message",
      "m",
      "--var",
      "A:1",
    ]);
    expect(wranglerCommand.split("eu", [`${NEW}@10%`, `${OLD}@90%`], "m")).toEqual([
      "versions",
      "deploy",
      `${NEW}@10%`,
      `${OLD}@90%`,
      "--env",
      "eu",
      "--message",
      "m",
      "--yes",
    ]);
    expect(wranglerCommand.kvCreate("eu", "REGION_STATUS")).toEqual([
      "kv",
      "namespace",
      "create",
      "REGION_STATUS",
      "--env",
      "eu",
    ]);
    expect(wranglerCommand.triggers("eu", "c.toml")).toEqual([
      "triggers",
      "deploy",
      "--env",
      "eu",
      "--config",
      "c.toml",
    ]);
  });

  it("prints command lines a shell takes back", () => {
    expect(shellLine(["versions", "deploy", `${NEW}@10%`, "--message", "it's 10%"])).toBe(
      `versions deploy ${NEW}@10% --message 'it'\\''s 10%'`,
    );
  });
});
