import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  checkKvNamespaces,
  customDomainTakeovers,
  ensureRegionalHostnames,
  liveDeployment,
  rollBack,
  rollbackPlan,
  workerSecrets,
} from "./account-checks.ts";
import { cloudflareClient } from "./cloudflare-client.ts";
import { type CloudflareApi, startCloudflareApi } from "./rehearsal/cloudflare-api.ts";
import { RESIDENCIES } from "./residency.ts";

const ZONE = "example.com";
let api: CloudflareApi;
const logged: string[] = [];
const client = () =>
  cloudflareClient(
    { CLOUDFLARE_API_BASE_URL: api.baseUrl, CLOUDFLARE_API_TOKEN: "t", CLOUDFLARE_ACCOUNT_ID: api.account.id },
    undefined,
    (line) => logged.push(line),
  );

beforeAll(async () => {
  api = await startCloudflareApi({
    zones: [{ name: ZONE }, { name: "eu.example.net", regionalServices: true }],
    secrets: { w: { API_KEYS: "k", REGIONAL_SHARED_SECRET: "s" } },
    kvNamespaces: [{ id: "ns1", title: "staging-REGION_STATUS" }],
    dnsRecords: { [`api.${ZONE}`]: "A 192.0.2.1" },
  });
});
afterAll(() => api.close());

describe("what the deploy asks Cloudflare (against the stand-in)", () => {
  it("needs the token and account, and prints each call", async () => {
    expect(() => cloudflareClient({}, undefined, () => {})).toThrow(
      /set CLOUDFLARE_API_TOKEN and CLOUDFLARE_ACCOUNT_ID/,
    );
    await workerSecrets(client(), "w");
    expect(logged.at(-1)).toBe(`$ cloudflare-api GET /accounts/${api.account.id}/workers/scripts/w/secrets`);
  });

  it("lists a Worker's secrets, and says when there is no Worker yet", async () => {
    expect(await workerSecrets(client(), "w")).toEqual({ exists: true, names: ["API_KEYS", "REGIONAL_SHARED_SECRET"] });
    expect(await workerSecrets(client(), "nobody")).toEqual({ exists: false, names: [] });
    const wrongAccount = cloudflareClient(
      { CLOUDFLARE_API_BASE_URL: `${api.baseUrl}/nowhere`, CLOUDFLARE_API_TOKEN: "t" },
      "a",
      () => {},
    );
    await expect(workerSecrets(wrongAccount, "w")).rejects.toThrow(
      /did not list w's secrets, so they cannot be checked/,
    );
    expect((await liveDeployment(client(), "w")).versions).toEqual([
      { version_id: api.account.scripts.get("w")!.versions[0]!.id, percentage: 100 },
    ]);
  });

  it("refuses placeholder and unknown KV namespace ids, naming the command that makes one", async () => {
    expect(await checkKvNamespaces(client(), "staging", [{ binding: "REGION_STATUS", id: "ns1" }])).toEqual([
      "REGION_STATUS → staging-REGION_STATUS (ns1)",
    ]);
    await expect(
      checkKvNamespaces(client(), "staging", [
        { binding: "REGION_STATUS", id: "<staging REGION_STATUS namespace id>" },
      ]),
    ).rejects.toThrow(
      /id is the placeholder <staging REGION_STATUS namespace id>: npx wrangler kv namespace create REGION_STATUS --env staging/,
    );
    await expect(checkKvNamespaces(client(), "staging", [{ binding: "REGION_STATUS", id: "ns9" }])).rejects.toThrow(
      /KV namespace ns9 is not in account/,
    );
  });

  it("finds what a Custom Domain would take over", async () => {
    const routes = [
      { pattern: `api.${ZONE}`, custom_domain: true, zone_name: ZONE },
      { pattern: `new.${ZONE}`, custom_domain: true },
    ];
    const { changeset, found } = await customDomainTakeovers(client(), "w", routes);
    expect(changeset.added.map((d) => d.hostname)).toEqual([`api.${ZONE}`, `new.${ZONE}`]);
    expect(found).toEqual([{ hostname: `api.${ZONE}`, what: "a DNS record of its own (not a Custom Domain)" }]);
  });

  it("sets Regional Services before the domain goes live, and refuses where the zone has none", async () => {
    const eu = RESIDENCIES.eu!;
    const route = { pattern: "eu.eu.example.net", custom_domain: true, zone_name: "eu.example.net" };
    expect(await ensureRegionalHostnames(client(), "eu-only", eu, [route])).toEqual(["eu.eu.example.net → region eu"]);
    expect(await ensureRegionalHostnames(client(), "eu-only", eu, [route])).toEqual([
      "eu.eu.example.net → region eu (already)",
    ]);
    await expect(
      ensureRegionalHostnames(client(), "eu-only", eu, [
        { pattern: `eu.${ZONE}`, custom_domain: true, zone_name: ZONE },
      ]),
    ).rejects.toThrow(
      /refusing to deploy eu-only: DATA_RESIDENCY=eu needs Regional Services .* 403 Regional Services is not enabled/,
    );
  });

  it("rolls back unforced: refused when the target's secrets differ, and never by itself forced", async () => {
    const c = client();
    const s = api.account.scripts.get("w")!;
    const [v1] = s.versions;
    await c.call("PUT", `/accounts/${api.account.id}/workers/scripts/w/secrets`, {
      name: "REGIONAL_SHARED_SECRET",
      text: "new",
      type: "secret_text",
    });
    const plan = await rollbackPlan(c, "w", undefined);
    expect(plan).toEqual({ target: v1!.id, tag: undefined });
    await expect(rollBack(c, "production", "w", plan, "m", false, () => {})).rejects.toThrow(
      /refusing to roll production back .* \(REGIONAL_SHARED_SECRET\)/,
    );
    expect(s.deployments[0]!.versions[0]!.version_id).not.toBe(v1!.id);
    const notes: string[] = [];
    await rollBack(c, "production", "w", plan, "m", true, (l) => notes.push(l));
    expect(s.deployments[0]!.versions).toEqual([{ version_id: v1!.id, percentage: 100 }]);
    expect(notes).toEqual([
      `--restore-old-secrets: ${v1!.id} comes back with its own values of REGIONAL_SHARED_SECRET`,
    ]);
  });
});
