import { describe, expect, it } from "vitest";
import { poolCertificateProblems, universalSslCovers, zoneOfHost } from "./hostnames.ts";

describe("Universal SSL coverage", () => {
  it("covers the zone's apex and one level below, nothing deeper, nothing outside", () => {
    expect(universalSslCovers("example.com", "example.com")).toBe(true);
    expect(universalSslCovers("example.com", "us-east-pool.example.com")).toBe(true);
    expect(universalSslCovers("example.com", "us-east.pool.example.com")).toBe(false);
    expect(universalSslCovers("example.com", "a.b.c.example.com")).toBe(false);
    expect(universalSslCovers("example.com", "example.org")).toBe(false);
    expect(universalSslCovers("example.com", "notexample.com")).toBe(false);
  });

  it("finds the most specific zone a host is in", () => {
    expect(zoneOfHost(["example.com", "edge.example.com"], "a.edge.example.com")).toBe("edge.example.com");
    expect(zoneOfHost(["example.com"], "a.example.org")).toBeUndefined();
  });

  it("names each pool a certificate would not cover, and the one-level name to use instead", () => {
    const regions = [
      { name: "us-east", url: "https://us-east.pool.edgecascade.example.com" },
      { name: "eu-west", url: "https://eu-west-pool.edgecascade.example.com" },
      { name: "local", url: "http://127.0.0.1:9001" },
      { name: "elsewhere", url: "https://a.b.other.example.net" },
    ];
    const problems = poolCertificateProblems(regions, ["edgecascade.example.com"]);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/^region us-east: us-east\.pool\.edgecascade\.example\.com is 2 levels below/);
    expect(problems[0]).toContain("Advanced Certificate Manager");
    expect(problems[0]).toMatch(/One level: us-east-pool\.edgecascade\.example\.com$/);
  });
});
