import { describe, expect, it } from "vitest";
import {
  breakerOpen,
  budgetSpent,
  degradedReason,
  NoRegionAnswered,
  RegionError,
  regionTimeout,
  tenantShed,
  tooFar,
} from "./errors.ts";

const unavailable = (r: string) => new RegionError("unavailable", r, "connection refused");
const status = (r: string) => new RegionError("status", r, "HTTP 503");

describe("degradedReason", () => {
  it.each([
    ["no regions", [], "no-regions"],
    ["every breaker open", [breakerOpen("us"), breakerOpen("eu")], "breakers-open"],
    ["a timeout among failures", [breakerOpen("us"), regionTimeout("eu", 10), unavailable("ap")], "deadline"],
    ["the budget spent before any call", [budgetSpent("us"), budgetSpent("eu")], "deadline"],
    ["an error, then no budget left", [status("us"), budgetSpent("eu")], "deadline"],
    ["errors only", [unavailable("us"), status("eu")], "regions-failed"],
    ["breakers and errors", [breakerOpen("us"), status("eu")], "regions-failed"],
    ["every region too far", [tooFar("eu", 90, 8), tooFar("ap", 240, 8)], "too-far"],
    ["the reachable one failed, the rest too far", [status("us"), tooFar("ap", 240, 8)], "regions-failed"],
    ["the reachable one's breaker open", [tooFar("ap", 240, 8), breakerOpen("us")], "breakers-open"],
    ["the reachable one timed out", [regionTimeout("us", 8), tooFar("ap", 240, 2)], "deadline"],
    ["a region shed the tenant", [tenantShed("us", "HTTP 429"), regionTimeout("eu", 8)], "tenant-shed"],
    ["shed after a failure", [status("us"), tenantShed("eu", "HTTP 429")], "tenant-shed"],
  ] as const)("%s -> %s", (_, errors, reason) => {
    expect(degradedReason(errors)).toBe(reason);
  });
});

describe("NoRegionAnswered", () => {
  it("names every region's failure", () => {
    const err = new NoRegionAnswered([breakerOpen("us"), regionTimeout("eu", 7)]);
    expect(err.message).toBe(
      "no region answered: region us: circuit breaker open; region eu: no answer within the remaining budget of 7 ms",
    );
    expect(new NoRegionAnswered([]).message).toBe("no regions configured");
    expect(new NoRegionAnswered([tooFar("ap", 239.6, 8)]).message).toBe(
      "no region answered: region ap: not sent: expected to answer in 240 ms, 8 ms of the budget left",
    );
  });
});
