import { describe, expect, it } from "vitest";
import { deployableEnvs, parseDeployArgs } from "./deploy.ts";

describe("deploy arguments", () => {
  const envs = ["us", "eu", "ap"];

  it("finds the environments of wrangler.toml, not their sub-tables", () => {
    const toml = "[vars]\n[env.us]\nroutes = []\n[env.us.vars]\n[[env.us.ratelimits]]\n[env.eu]\n[env.ap-2]\n";
    expect(deployableEnvs(toml)).toEqual(["us", "eu", "ap-2"]);
  });

  it.each([
    [["--env", "eu"], { env: "eu", rest: [] }],
    [["--env=ap", "--dry-run", "--outdir", "x"], { env: "ap", rest: ["--dry-run", "--outdir", "x"] }],
    [["--dry-run", "-e", "us"], { env: "us", rest: ["--dry-run"] }],
  ])("%j", (argv, expected) => {
    expect(parseDeployArgs(argv, envs)).toEqual(expected);
  });

  it("requires a known environment", () => {
    expect(() => parseDeployArgs(["--dry-run"], envs)).toThrow(/--env is required \(one of us, eu, ap\)/);
    expect(() => parseDeployArgs(["--env", "mars"], envs)).toThrow(/unknown environment "mars"/);
  });
});
