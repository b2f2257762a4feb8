import { describe, expect, it } from "vitest";
import { PREREQUISITES, prerequisitePlan, rootSuitePlan } from "./plan.ts";

const [chromium, promtool, buildah, debootstrap] = PREREQUISITES.test;
const [wrk] = PREREQUISITES.bench;

describe("prerequisitePlan", () => {
  it("does nothing when every program is there", () => {
    expect(prerequisitePlan([], { isRoot: false, hasApt: false })).toEqual({ action: "none" });
  });

  it("installs every missing package with one apt-get when root on Debian", () => {
    expect(prerequisitePlan([chromium!, promtool!], { isRoot: true, hasApt: true })).toEqual({
      action: "install",
      packages: ["chromium", "prometheus"],
      command: ["apt-get", "install", "-y", "--no-install-recommends", "chromium", "prometheus"],
    });
  });

  it("names each missing program and the exact sudo command when not root", () => {
    const plan = prerequisitePlan([promtool!, wrk!], { isRoot: false, hasApt: true });
    expect(plan.action).toBe("ask");
    const message = plan.action === "ask" ? plan.message : "";
    expect(message).toContain("promtool (Debian package prometheus)");
    expect(message).toContain("wrk (Debian package wrk)");
    expect(message).toContain("sudo apt-get update && sudo apt-get install -y --no-install-recommends prometheus wrk");
    expect(message).not.toContain("chromium");
  });

  it("names the packages when there is no apt, even as root", () => {
    const plan = prerequisitePlan([chromium!], { isRoot: true, hasApt: false });
    expect(plan).toEqual({
      action: "ask",
      message: expect.stringContaining("Install the packages chromium with your system's package manager"),
    });
  });

  it("installs what only root needs (the image test's buildah and debootstrap) as root, and never asks others for it", () => {
    expect(prerequisitePlan([buildah!, debootstrap!], { isRoot: true, hasApt: true })).toEqual({
      action: "install",
      packages: ["buildah", "debootstrap"],
      command: ["apt-get", "install", "-y", "--no-install-recommends", "buildah", "debootstrap"],
    });
    expect(prerequisitePlan([buildah!, debootstrap!], { isRoot: false, hasApt: true })).toEqual({ action: "none" });
    const plan = prerequisitePlan([buildah!, promtool!], { isRoot: false, hasApt: true });
    const message = plan.action === "ask" ? plan.message : "";
    expect(message).toMatch(/apt-get install -y --no-install-recommends prometheus$/);
    expect(message).not.toContain("buildah");
  });
});

describe("rootSuitePlan (the image suite)", () => {
  const suite = "the image suite";

  it("runs as root with buildah and debootstrap there", () => {
    expect(rootSuitePlan(suite, [chromium!], { isRoot: true, ci: true })).toEqual({ action: "run" });
  });

  it("fails, naming the programs, as root without them: CI or not, never a skip", () => {
    for (const ci of [true, false]) {
      expect(rootSuitePlan(suite, [buildah!, debootstrap!], { isRoot: true, ci })).toEqual({
        action: "fail",
        reason:
          "the image suite runs as root, and buildah (Debian package buildah), debootstrap (Debian package debootstrap) are missing: `npm test` installs them as root (scripts/prerequisites.ts)",
      });
    }
  });

  it("is skipped, saying why, when not root; in CI, which runs as root, that fails", () => {
    expect(rootSuitePlan(suite, [buildah!], { isRoot: false, ci: false })).toEqual({
      action: "skip",
      reason: "the image suite needs root (buildah, namespaces); this run is not root",
    });
    expect(rootSuitePlan(suite, [], { isRoot: false, ci: true })).toEqual({
      action: "fail",
      reason:
        "the image suite needs root (buildah, namespaces); this run is not root, and CI must run it (CI runs as root)",
    });
  });
});
