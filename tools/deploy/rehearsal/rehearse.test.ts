import { describe, expect, it } from "vitest";
import { deploy, Ids, newAccount, type Script, uploadVersion } from "./cloudflare-account.ts";
import { probeKeyProblem } from "./local-probe.ts";
import { accountProblems, createdNamespaceId } from "./rehearse.ts";

describe("the rehearsal's checks of the account", () => {
  it("reads the id wrangler kv namespace create prints", () => {
    const output =
      'To access your new KV Namespace ...:\n[[kv_namespaces]]\nbinding = "REGION_STATUS"\nid = "0f1e2d3c"\n';
    expect(createdNamespaceId(output)).toBe("0f1e2d3c");
    expect(() => createdNamespaceId("✘ [ERROR] A KV namespace with the title ... already exists")).toThrow(
      /printed no id/,
    );
  });

  it("finds every part of the first deploy that is missing", () => {
    const account = newAccount("a", [{ name: "example.com" }]);
    const expected = {
      script: "edgecascade-staging",
      secrets: ["API_KEYS", "REGIONAL_SHARED_SECRET"],
      kv: { REGION_STATUS: "ns1" },
      hostnames: ["staging.example.com"],
      crons: ["* * * * *"],
    };
    expect(accountProblems(account, expected)).toEqual(["no Worker edgecascade-staging"]);
    const ids = new Ids();
    const s: Script = { name: "edgecascade-staging", versions: [], deployments: [], schedules: [], workersDev: false };
    account.scripts.set(s.name, s);
    const v = uploadVersion(
      s,
      {
        bindings: [
          { name: "API_KEYS", type: "secret_text", text: "k" },
          { name: "REGION_STATUS", type: "kv_namespace", namespace_id: "ns0" },
        ],
      },
      ids,
      "t",
    );
    deploy(s, [{ version_id: v.id, percentage: 100 }], {}, true, ids, "t");
    expect(accountProblems(account, { ...expected, regionKey: "eu" })).toEqual([
      "secret REGIONAL_SHARED_SECRET not set",
      "REGION_STATUS is not bound to KV namespace ns1",
      "staging.example.com is not a Custom Domain of edgecascade-staging",
      "staging.example.com has no Regional Services region eu",
      'cron schedules [], expected ["* * * * *"]',
    ]);
  });
});

describe("the probe's key", () => {
  it("must be one of API_KEYS, allowed to call the model it probes", () => {
    expect(probeKeyProblem("client,probe", "probe")).toBeUndefined();
    expect(probeKeyProblem(undefined, undefined)).toBeUndefined();
    expect(probeKeyProblem("client,probe", "k1")).toMatch(/^EDGECASCADE_API_KEY is not one of API_KEYS: .*401/);
    expect(probeKeyProblem("client,probe", undefined)).toMatch(/^EDGECASCADE_API_KEY, the probe's key, is not set/);
    const scoped = JSON.stringify([
      { key: "probe", models: ["breast-cancer"] },
      { key: "ops", tenant: "ops" },
    ]);
    expect(probeKeyProblem(scoped, "probe")).toMatch(/may not call digits, the model the probe sends: .*403/);
    expect(probeKeyProblem(scoped, "ops")).toBeUndefined();
  });
});
