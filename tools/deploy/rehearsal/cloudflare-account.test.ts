import { describe, expect, it } from "vitest";
import {
  ApiRefusal,
  deploy,
  domainChangeset,
  Ids,
  INVALID_INHERIT_BINDING,
  LATEST_VERSION_NOT_DEPLOYED,
  newAccount,
  putDomains,
  putSecrets,
  type Script,
  SECRETS_CHANGED,
  servingAlone,
  uploadVersion,
} from "./cloudflare-account.ts";

const NOW = "2026-12-01T00:00:00Z";
const secret = (name: string, text: string) => ({ name, type: "secret_text", text });

function worker(): { s: Script; ids: Ids } {
  const ids = new Ids();
  const s: Script = { name: "w", versions: [], deployments: [], schedules: [], workersDev: false };
  const v = uploadVersion(
    s,
    { bindings: [secret("API_KEYS", "k1"), secret("REGIONAL_SHARED_SECRET", "old")] },
    ids,
    NOW,
  );
  deploy(s, [{ version_id: v.id, percentage: 100 }], {}, false, ids, NOW);
  return { s, ids };
}

const refusal = (fn: () => unknown) => {
  try {
    fn();
  } catch (err) {
    if (err instanceof ApiRefusal) return { code: err.code, message: err.message };
    throw err;
  }
  throw new Error("not refused");
};

describe("the stand-in's Workers", () => {
  it("carries inherited secrets into a new version and refuses to inherit one it does not have", () => {
    const { s, ids } = worker();
    const v2 = uploadVersion(
      s,
      {
        bindings: [
          { name: "API_KEYS", type: "inherit" },
          { name: "X", type: "plain_text", text: "1" },
        ],
      },
      ids,
      NOW,
    );
    expect(v2.bindings).toEqual([secret("API_KEYS", "k1"), { name: "X", type: "plain_text", text: "1" }]);
    const kept = uploadVersion(s, { bindings: [], keep_bindings: ["secret_text"] }, ids, NOW);
    expect(kept.bindings.map((b) => b.name)).toEqual(["API_KEYS"]);
    expect(
      refusal(() => uploadVersion(s, { bindings: [{ name: "MODEL_PUBLIC_KEY", type: "inherit" }] }, ids, NOW)),
    ).toEqual({
      code: INVALID_INHERIT_BINDING,
      message: "inherit binding 'MODEL_PUBLIC_KEY' is invalid",
    });
  });

  it("refuses, unless forced, a deployment of a version whose secrets differ from the latest's", () => {
    const { s, ids } = worker();
    const v1 = s.versions[0]!;
    putSecrets(s, { REGIONAL_SHARED_SECRET: "new" }, ids, NOW, true);
    expect(servingAlone(s)?.bindings).toContainEqual(secret("REGIONAL_SHARED_SECRET", "new"));
    expect(refusal(() => deploy(s, [{ version_id: v1.id, percentage: 100 }], {}, false, ids, NOW))).toEqual({
      code: SECRETS_CHANGED,
      message: expect.stringMatching(/The following secrets have changed: REGIONAL_SHARED_SECRET$/),
    });
    deploy(s, [{ version_id: v1.id, percentage: 100 }], {}, true, ids, NOW);
    expect(servingAlone(s)?.id).toBe(v1.id);
    // The latest version is not the one serving now: a secret put is refused, as the API does after a rollback.
    expect(refusal(() => putSecrets(s, { API_KEYS: "k2" }, ids, NOW, true)).code).toBe(LATEST_VERSION_NOT_DEPLOYED);
  });

  it("refuses shares that do not add up to 100 and versions it does not have", () => {
    const { s, ids } = worker();
    expect(
      refusal(() => deploy(s, [{ version_id: s.versions[0]!.id, percentage: 90 }], {}, false, ids, NOW)).message,
    ).toMatch(/add up to 100%/);
    expect(refusal(() => deploy(s, [{ version_id: "nope", percentage: 100 }], {}, false, ids, NOW)).message).toMatch(
      /not found/,
    );
  });
});

describe("the stand-in's Custom Domains", () => {
  it("reports a hostname's own DNS record as conflicting, and replaces it only when told", () => {
    const account = newAccount("a", [{ name: "example.com" }]);
    account.dnsRecords.set("api.example.com", "A 192.0.2.1");
    const ids = new Ids();
    const origins = [{ hostname: "api.example.com", zone_name: "example.com" }];
    expect(domainChangeset(account, "w", origins).conflicting).toEqual([
      { hostname: "api.example.com", zone_id: account.zones[0]!.id, zone_name: "example.com" },
    ]);
    expect(refusal(() => putDomains(account, "w", { origins }, ids)).message).toMatch(
      /DNS records exist for api\.example\.com/,
    );
    putDomains(account, "w", { origins, override_existing_dns_record: true }, ids);
    expect(account.dnsRecords.has("api.example.com")).toBe(false);
    expect(account.customDomains.map((d) => [d.hostname, d.service])).toEqual([["api.example.com", "w"]]);
    // Another Worker's domain is "updated, modified"; the owner's own is unchanged; a hostname outside every zone is refused.
    expect(domainChangeset(account, "other", origins).updated).toEqual([expect.objectContaining({ modified: true })]);
    expect(domainChangeset(account, "w", origins).updated).toEqual([expect.objectContaining({ modified: false })]);
    expect(refusal(() => domainChangeset(account, "w", [{ hostname: "api.example.org" }])).message).toMatch(
      /not in a zone/,
    );
  });
});
