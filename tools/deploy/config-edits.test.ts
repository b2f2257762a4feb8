import { describe, expect, it } from "vitest";
import { isPlaceholderId, withKvNamespaceIds, withoutRequiredSecrets, withoutRoutes } from "./config-edits.ts";

const toml = [
  "[env.production]",
  'routes = [{ pattern = "api.example.com", custom_domain = true, zone_name = "example.com" }]',
  'kv_namespaces = [{ binding = "REGION_STATUS", id = "<production REGION_STATUS namespace id>" }]',
  'secrets = { required = ["API_KEYS", "REGIONAL_SHARED_SECRET", "MODEL_PUBLIC_KEY"] }',
  "[env.production.vars]",
  "[env.staging]",
  'routes = [{ pattern = "staging.example.com", custom_domain = true }]',
  'kv_namespaces = [{ binding = "REGION_STATUS", id = "<staging REGION_STATUS namespace id>" }]',
  'secrets = { required = ["API_KEYS", "REGIONAL_SHARED_SECRET"] }',
  "",
].join("\n");

describe("edits to one environment of the generated config", () => {
  it("drops only the allowed-open secrets from the environment's own secrets.required", () => {
    const open = withoutRequiredSecrets(`# generated\n${toml}`, "production", ["API_KEYS", "MODEL_PUBLIC_KEY"]);
    expect(open).toBe(
      `# generated\n${toml.replace('["API_KEYS", "REGIONAL_SHARED_SECRET", "MODEL_PUBLIC_KEY"]', '["REGIONAL_SHARED_SECRET"]')}`,
    );
    expect(withoutRequiredSecrets(`\n${toml}`, "staging", ["API_KEYS"])).toContain(
      'secrets = { required = ["REGIONAL_SHARED_SECRET"] }\n',
    );
    expect(() => withoutRequiredSecrets(`\n${toml}`, "eu-only", ["API_KEYS"])).toThrow(/no \[env\.eu-only\] table/);
    expect(() => withoutRequiredSecrets("\n[env.x]\nname = 1\n", "x", ["API_KEYS"])).toThrow(/has no "secrets/);
  });

  it("holds back one environment's routes, leaving the others'", () => {
    const edited = withoutRoutes(`\n${toml}`, "staging");
    expect(edited).not.toContain("staging.example.com");
    expect(edited).toContain('pattern = "api.example.com"');
    expect(() => withoutRoutes("\n[env.x]\nname = 1\n", "x")).toThrow(/has no "routes/);
  });

  it("puts KV namespace ids in place of one environment's placeholders", () => {
    const edited = withKvNamespaceIds(`\n${toml}`, "staging", { REGION_STATUS: "abc123" });
    expect(edited).toContain('{ binding = "REGION_STATUS", id = "abc123" }');
    expect(edited).toContain("<production REGION_STATUS namespace id>");
    expect(() => withKvNamespaceIds(`\n${toml}`, "staging", { OTHER: "x" })).toThrow(
      /no kv_namespaces entry for OTHER/,
    );
    expect(isPlaceholderId("<staging REGION_STATUS namespace id>")).toBe(true);
    expect(isPlaceholderId("0f1e2d3c4b5a69788796a5b4c3d2e1f0")).toBe(false);
  });
});
