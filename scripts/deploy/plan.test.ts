import { describe, expect, it } from "vitest";
import {
  deployableEnvs,
  gradualSplit,
  parseDeployArgs,
  parseDeploymentStatus,
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
    [["--env", "eu"], { mode: "deploy", env: "eu", wranglerArgs: [] }],
    [
      ["--env=ap", "--dry-run", "--outdir", "x"],
      { mode: "deploy", env: "ap", wranglerArgs: ["--dry-run", "--outdir", "x"] },
    ],
    [["--dry-run", "-e", "us"], { mode: "deploy", env: "us", wranglerArgs: ["--dry-run"] }],
    [
      ["--env", "eu", "--percent", "10"],
      { mode: "gradual", env: "eu", percent: 10, message: "eu: new version to 10%", dryRun: false, wranglerArgs: [] },
    ],
    [
      ["--env", "eu", "--percent=50", "--version-id", NEW, "--dry-run", "--message", "step 2"],
      { mode: "gradual", env: "eu", percent: 50, versionId: NEW, message: "step 2", dryRun: true, wranglerArgs: [] },
    ],
    [["--env", "us", "--rollback"], { mode: "rollback", env: "us", message: "rollback of us", dryRun: false }],
    [
      ["--rollback", "--env", "us", "--version-id", OLD, "--dry-run"],
      { mode: "rollback", env: "us", versionId: OLD, message: "rollback of us", dryRun: true },
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

describe("wrangler's answers", () => {
  it("reads the live deployment from wrangler deployments status --json", () => {
    const json = JSON.stringify({
      id: "d1",
      source: "wrangler",
      strategy: "percentage",
      versions: [{ version_id: OLD, percentage: 100 }],
      created_on: "2026-12-01T00:00:00Z",
    });
    expect(parseDeploymentStatus(json)).toEqual({ versions: [{ version_id: OLD, percentage: 100 }] });
    expect(() => parseDeploymentStatus('{"versions": []}')).toThrow(/unexpected answer/);
    expect(() => parseDeploymentStatus('{"error": "not found"}')).toThrow(/unexpected answer/);
  });

  it("takes the uploaded version's ID from wrangler's output file", () => {
    const file = [
      JSON.stringify({ version: 1, type: "wrangler-session", wrangler_version: "4.164.0" }),
      JSON.stringify({ version: 1, type: "version-upload", worker_name: "edgecascade", version_id: NEW }),
      "",
    ].join("\n");
    expect(uploadedVersionId(file)).toBe(NEW);
    expect(() => uploadedVersionId(file.split("\n")[0]!)).toThrow(/no version ID/);
  });
});

describe("wrangler commands", () => {
  it("spells each step with wrangler's flags", () => {
    expect(wranglerCommand.status("eu")).toEqual(["deployments", "status", "--env", "eu", "--json"]);
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
    expect(wranglerCommand.rollback("eu", undefined, "m")).toEqual([
      "rollback",
      "--env",
      "eu",
      "--message",
      "m",
      "--yes",
    ]);
    expect(wranglerCommand.rollback("eu", OLD, "m")).toEqual([
      "rollback",
      OLD,
      "--env",
      "eu",
      "--message",
      "m",
      "--yes",
    ]);
  });

  it("prints command lines a shell takes back", () => {
    expect(shellLine(["versions", "deploy", `${NEW}@10%`, "--message", "it's 10%"])).toBe(
      `versions deploy ${NEW}@10% --message 'it'\\''s 10%'`,
    );
  });
});
