import { describe, expect, it } from "vitest";
import { changesetSummary, takeoverRefusal, takeovers } from "./custom-domains.ts";

describe("Custom Domains that would take something over", () => {
  const changeset = {
    added: [{ hostname: "api.example.com" }, { hostname: "new.example.com" }],
    removed: [{ hostname: "old.example.com" }],
    updated: [
      { id: "d1", hostname: "mine.example.com", modified: false },
      { id: "d2", hostname: "theirs.example.com", modified: true },
    ],
    conflicting: [{ hostname: "api.example.com" }],
  };

  it("finds a DNS record of its own and another Worker's Custom Domain, not the Worker's own", () => {
    const found = takeovers(changeset, "edgecascade-production", new Map([["d2", "marketing-site"]]));
    expect(found).toEqual([
      { hostname: "api.example.com", what: "a DNS record of its own (not a Custom Domain)" },
      { hostname: "theirs.example.com", what: 'the Custom Domain of another Worker, "marketing-site"' },
    ]);
    // A domain moving between this Worker's own records is no takeover.
    expect(takeovers({ ...changeset, conflicting: [] }, "marketing-site", new Map([["d2", "marketing-site"]]))).toEqual(
      [],
    );
  });

  it("refuses naming each hostname and the way past", () => {
    const text = takeoverRefusal("production", takeovers(changeset, "edgecascade-production", new Map()));
    expect(text).toMatch(/^refusing to deploy production: its Custom Domains would take over/);
    expect(text).toContain("  api.example.com: a DNS record of its own");
    expect(text).toContain("--take-over-dns");
  });

  it("summarises the changeset for the log", () => {
    expect(changesetSummary(changeset)).toBe(
      "api.example.com new, new.example.com new, mine.example.com unchanged, theirs.example.com moved to this Worker, old.example.com removed",
    );
    expect(changesetSummary({ added: [], removed: [], updated: [], conflicting: [] })).toBe("none");
  });
});
