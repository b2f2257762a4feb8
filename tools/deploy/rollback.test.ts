import { describe, expect, it } from "vitest";
import { changedSecrets, rollbackRefusal, rollbackTarget } from "./rollback.ts";

const d = (id: string, at: string, versions: [string, number][]) => ({
  id,
  created_on: at,
  versions: versions.map(([version_id, percentage]) => ({ version_id, percentage })),
});

describe("rollback target", () => {
  it("is the newest earlier deployment's version at 100%, as wrangler rollback picks it", () => {
    const deployments = [
      d("d1", "2026-12-01T00:00:00Z", [["v1", 100]]),
      d("d4", "2026-12-04T00:00:00Z", [["v2", 100]]),
      d("d2", "2026-12-02T00:00:00Z", [
        ["v2", 10],
        ["v1", 90],
      ]),
      d("d3", "2026-12-03T00:00:00Z", [
        ["v2", 50],
        ["v1", 50],
      ]),
    ];
    expect(rollbackTarget(deployments)).toBe("v1");
    // A secret put makes a new deployment at 100%: the rollback then returns to the version before it.
    expect(rollbackTarget([...deployments, d("d5", "2026-12-05T00:00:00Z", [["v3", 100]])])).toBe("v2");
  });

  it("refuses when no earlier deployment had one version alone", () => {
    expect(() => rollbackTarget([d("d1", "2026-12-01T00:00:00Z", [["v1", 100]])])).toThrow(/--version-id/);
  });
});

describe("a rollback to changed secrets", () => {
  it("reads the names Cloudflare's refusal lists", () => {
    expect(
      changedSecrets(
        "Cannot deploy version v1: its secrets differ. The following secrets have changed: REGIONAL_SHARED_SECRET, API_KEYS [code: 10220]",
      ),
    ).toEqual(["REGIONAL_SHARED_SECRET", "API_KEYS"]);
    expect(changedSecrets("something else")).toEqual([]);
  });

  it("says what would come back and how to return to that code with today's secrets", () => {
    const text = rollbackRefusal("production", "v1", ["REGIONAL_SHARED_SECRET"], "0a1b2c3d4e5f");
    expect(text).toMatch(
      /^refusing to roll production back to version v1: its secrets differ .* \(REGIONAL_SHARED_SECRET\)/,
    );
    expect(text).toContain("pools refuse every\nforward (401)");
    expect(text).toContain("git checkout 0a1b2c3d4e5f && npm run deploy -- --env production");
    expect(text).toContain("--rollback --restore-old-secrets");
    expect(rollbackRefusal("staging", "v1", ["API_KEYS"], undefined)).toContain("git checkout <its commit>");
  });
});
