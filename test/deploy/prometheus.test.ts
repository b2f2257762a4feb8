import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { createMetrics } from "../../regional/metrics.ts";
import { probeExposition } from "../../scripts/probe/prometheus.ts";
import { summarize } from "../../scripts/probe/summary.ts";
import { ROOT } from "../../scripts/stack/build-edge.ts";

const DIR = join(ROOT, "deploy/prometheus");
const RULE_FILES = readdirSync(DIR).filter((f) => f.endsWith(".rules.yml"));
const TEST_FILES = readdirSync(join(DIR, "tests")).filter((f) => f.endsWith(".test.yml"));
/** Series the model rollout controller (issue 10) exports; not in regional/metrics.ts yet. */
const ROLLOUT_SERIES = ["edgecascade_rollout_rollbacks_total", "edgecascade_rollout_percent"];

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  annotations?: Record<string, string>;
}
interface RuleTest {
  alert_rule_test?: { alertname: string; exp_alerts: unknown[] }[];
}

const rules: Rule[] = RULE_FILES.flatMap((f) =>
  (parse(readFileSync(join(DIR, f), "utf8")) as { groups: { rules: Rule[] }[] }).groups.flatMap((g) => g.rules),
);
const alerts = rules.filter((r) => r.alert);
const ruleTests = TEST_FILES.flatMap((f) =>
  (parse(readFileSync(join(DIR, "tests", f), "utf8")) as { tests: RuleTest[] }).tests.flatMap(
    (t) => t.alert_rule_test ?? [],
  ),
);

function promtool(...args: string[]) {
  const run = spawnSync("promtool", args, { cwd: DIR, encoding: "utf8" });
  expect(run.error, "promtool must be installed (Debian package prometheus)").toBeUndefined();
  return { status: run.status, output: run.stdout + run.stderr };
}

/** Metric family names from `# TYPE` lines of an exposition text. */
function families(text: string): string[] {
  return [...text.matchAll(/^# TYPE (\S+) /gm)].map((m) => m[1]!);
}

const tmp = mkdtempSync(join(tmpdir(), "edgecascade-prometheus-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("Prometheus rules", () => {
  it("are found: pools, rollouts and probes", () => {
    expect(RULE_FILES.sort()).toEqual(["probe.rules.yml", "regional.rules.yml", "rollout.rules.yml"]);
    expect(alerts.length).toBeGreaterThanOrEqual(15);
  });

  it("pass promtool check rules", () => {
    const { status, output } = promtool("check", "rules", ...RULE_FILES);
    expect(output).not.toMatch(/FAILED|error/i);
    expect(status, output).toBe(0);
    expect(output.match(/SUCCESS/g)).toHaveLength(RULE_FILES.length);
  });

  it("pass their unit tests (promtool test rules)", () => {
    const { status, output } = promtool("test", "rules", ...TEST_FILES.map((f) => `tests/${f}`));
    expect(status, output).toBe(0);
    expect(output.match(/SUCCESS/g)).toHaveLength(TEST_FILES.length);
  });

  it("test every alert both firing and not firing", () => {
    for (const { alert } of alerts) {
      const cases = ruleTests.filter((t) => t.alertname === alert);
      expect(
        cases.some((t) => t.exp_alerts.length > 0),
        `${alert} has no case where it fires`,
      ).toBe(true);
      expect(
        cases.some((t) => t.exp_alerts.length === 0),
        `${alert} has no case where it stays quiet`,
      ).toBe(true);
    }
    const tested = new Set(ruleTests.map((t) => t.alertname));
    expect([...tested].filter((name) => !alerts.some((a) => a.alert === name))).toEqual([]);
  });

  it("only use series that the pools, the probe or the rollout controller export", async () => {
    const regional = families(await createMetrics().text());
    const probe = families(
      probeExposition(summarize([], { url: "u", startedAt: "t", durationS: 1, rateRps: 1, sent: 0 }), 0),
    );
    const known = new Set([...regional, ...probe, ...ROLLOUT_SERIES]);
    const used = new Set(
      rules.flatMap((r) =>
        [...r.expr.matchAll(/(?<![:\w])edgecascade_\w+(?![:\w])/g)].map((m) =>
          m[0].replace(/_(bucket|sum|count)$/, ""),
        ),
      ),
    );
    expect(used.size).toBeGreaterThan(10);
    expect([...used].filter((name) => !known.has(name))).toEqual([]);
  });

  it("each alert links its own section of docs/runbook.md, which says how to confirm, mitigate and escalate", () => {
    const runbook = readFileSync(join(ROOT, "docs/runbook.md"), "utf8");
    const sections = new Map(
      runbook
        .split(/^## /m)
        .slice(1)
        .map((s) => [s.slice(0, s.indexOf("\n")).trim(), s] as const),
    );
    for (const { alert, annotations } of alerts) {
      expect(annotations?.runbook_url).toBe(`docs/runbook.md#${alert!.toLowerCase()}`);
      const section = sections.get(alert!);
      expect(section, `docs/runbook.md has no "## ${alert}"`).toBeDefined();
      for (const part of ["Meaning", "Confirm", "Mitigate", "Escalate"]) {
        expect(section, `${alert}: no **${part}**`).toContain(`**${part}`);
      }
    }
  });

  it("prometheus.yml passes promtool check config (Kubernetes discovery swapped for a static target)", () => {
    // Debian's promtool is built without Kubernetes service discovery; everything else is checked as written.
    const config = parse(readFileSync(join(DIR, "prometheus.yml"), "utf8")) as {
      rule_files: string[];
      scrape_configs: Record<string, unknown>[];
    };
    const scrape = config.scrape_configs.find((s) => s.job_name === "edgecascade-regional")!;
    expect(scrape.kubernetes_sd_configs).toEqual([{ role: "pod", namespaces: { names: ["edgecascade"] } }]);
    delete scrape.kubernetes_sd_configs;
    scrape.static_configs = [{ targets: ["127.0.0.1:8000"] }];
    expect(config.rule_files.sort()).toEqual(RULE_FILES);
    config.rule_files = config.rule_files.map((f) => join(DIR, f));
    const file = join(tmp, "prometheus.yml");
    writeFileSync(file, stringify(config));
    const { status, output } = promtool("check", "config", file);
    expect(status, output).toBe(0);
    expect(output).toMatch(/SUCCESS: 3 rule files found/);
  });
});
