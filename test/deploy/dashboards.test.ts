import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { BLOBS, DOUBLES } from "../../edge/analytics/layout.ts";
import { createMetrics } from "../../regional/metrics.ts";
import { ANALYTICS_QUERIES, SQL_API } from "../../tools/dashboards/analytics-sql.ts";
import { DASHBOARDS, dashboardJson } from "../../tools/dashboards/dashboards.ts";
import { ROOT } from "../../tools/edge-bundle/build-edge.ts";
import { probeExposition } from "../../tools/probe/prometheus.ts";
import { summarize } from "../../tools/probe/summary.ts";

const GRAFANA_DIR = join(ROOT, "deploy/grafana");
const RULES_DIR = join(ROOT, "deploy/prometheus");

interface Target {
  datasource?: { type: string };
  expr?: string;
  query?: string;
}
interface Panel {
  type: string;
  title: string;
  targets?: Target[];
}
const committed = Object.fromEntries(
  readdirSync(GRAFANA_DIR)
    .filter((f) => f.endsWith(".json"))
    .map((f) => [f, JSON.parse(readFileSync(join(GRAFANA_DIR, f), "utf8")) as { panels: Panel[] }]),
);
const targets = Object.values(committed).flatMap((d) => d.panels.flatMap((p) => p.targets ?? []));
const promql = targets.filter((t) => t.datasource?.type === "prometheus").map((t) => t.expr!);
const sql = targets.filter((t) => t.datasource?.type === "vertamedia-clickhouse-datasource").map((t) => t.query!);

/** A dashboard expression as Prometheus gets it once Grafana has filled in its variables. */
const interpolated = (expr: string) =>
  expr.replaceAll("$__rate_interval", "5m").replace(/\$(region|model|url|location)\b/g, ".*");

/** Metric families a text exposition declares. */
const families = (text: string) => [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);

const tmp = mkdtempSync(join(tmpdir(), "edgecascade-dashboards-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("Grafana dashboards (tools/dashboards/, Foundation SDK)", () => {
  it("are exactly what the code generates (npm run dashboards)", () => {
    expect(Object.keys(committed).sort()).toEqual(Object.keys(DASHBOARDS).sort());
    for (const [file, build] of Object.entries(DASHBOARDS)) {
      expect(readFileSync(join(GRAFANA_DIR, file), "utf8"), `deploy/grafana/${file}: npm run dashboards`).toBe(
        dashboardJson(build),
      );
    }
  });

  it("show what the issue asks of each: pools, probes per location, the edge from Analytics Engine", () => {
    const titles = (file: string) => committed[file]!.panels.map((p) => p.title);
    for (const title of [
      "Requests per second",
      "p95 per stage",
      "Queue depth",
      "Batch size",
      "Audit agreement (last hour)",
      "Drift (PSI, last hour)",
    ]) {
      expect(titles("pools.json")).toContain(title);
    }
    expect(titles("probes.json")).toContain("p95 and p99 per location");
    expect(titles("edge.json")).toEqual(
      expect.arrayContaining(["Edge share", "Degraded answers", "Latency per colo", "Audit agreement"]),
    );
  });

  it("every PromQL expression passes promtool, over series the pools, probes and recording rules give", () => {
    expect(promql.length).toBeGreaterThan(20);
    const file = join(tmp, "dashboards.rules.yml");
    const rules = promql.map((expr, i) => ({ record: `dashboard:expression_${i}`, expr: interpolated(expr) }));
    writeFileSync(file, stringify({ groups: [{ name: "dashboards", rules }] }));
    const run = spawnSync("promtool", ["check", "rules", file], { encoding: "utf8" });
    expect(run.error, "promtool must be installed (Debian package prometheus)").toBeUndefined();
    expect(run.stdout + run.stderr).toMatch(`SUCCESS: ${rules.length} rules found`);

    const recorded = readdirSync(RULES_DIR)
      .filter((f) => f.endsWith(".rules.yml"))
      .flatMap((f) =>
        (
          parse(readFileSync(join(RULES_DIR, f), "utf8")) as { groups: { rules: { record?: string }[] }[] }
        ).groups.flatMap((g) => g.rules.flatMap((r) => (r.record ? [r.record] : []))),
      );
    const probe = probeExposition(summarize([], { url: "u", startedAt: "t", durationS: 1, rateRps: 1, sent: 0 }), 0);
    const known = new Set(recorded);
    return createMetrics()
      .text()
      .then((text) => {
        for (const name of [...families(text), ...families(probe)]) known.add(name);
        const used = new Set(
          promql.flatMap((e) =>
            // Series (edgecascade_*) and recording rules (level:metric:operations); label names have no colon.
            [...e.matchAll(/(?<![\w:])(edgecascade_\w+|[a-z_]+:[\w:]+)/g)].map((m) =>
              m[1]!.replace(/_(bucket|sum|count)$/, ""),
            ),
          ),
        );
        expect([...used].filter((name) => !known.has(name))).toEqual([]);
      });
  });

  it("the edge's SQL reads only columns the data points have, and is docs/observability.md's", () => {
    expect(sql.length).toBe(Object.keys(ANALYTICS_QUERIES).length);
    for (const query of sql) {
      for (const [, kind, n] of query.matchAll(/\b(blob|double)(\d+)\b/g)) {
        expect(Number(n)).toBeLessThanOrEqual(kind === "blob" ? BLOBS.length : DOUBLES.length);
      }
    }
    const docs = readFileSync(join(ROOT, "docs/observability.md"), "utf8");
    for (const [name, query] of Object.entries(ANALYTICS_QUERIES)) {
      expect(docs, `docs/observability.md has no ${name} query`).toContain(query(SQL_API));
    }
  });
});
