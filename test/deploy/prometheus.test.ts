import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse, stringify } from "yaml";
import { createMetrics } from "../../regional/metrics.ts";
import { ROOT } from "../../tools/edge-bundle/build-edge.ts";
import { probeExposition } from "../../tools/probe/prometheus.ts";
import { summarize } from "../../tools/probe/summary.ts";
import { anchorOf } from "./docs/doc-references.ts";

const DIR = join(ROOT, "deploy/prometheus");
const RULE_FILES = readdirSync(DIR).filter((f) => f.endsWith(".rules.yml"));
const TEST_FILES = readdirSync(join(DIR, "tests")).filter((f) => f.endsWith(".test.yml"));
/** Where every alert's runbook_url points (docs/deploy.md, step 6, says to replace it with your copy's). */
const RUNBOOK = "https://git.example.com/edgecascade/blob/main/docs/runbook.md";
/** Series the model rollout controller (issue 10) exports; not in regional/metrics.ts yet. */
const ROLLOUT_SERIES = ["edgecascade_rollout_rollbacks_total", "edgecascade_rollout_percent"];

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  labels?: Record<string, string>;
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
  it("are found: pools, rollouts, the cascade, probes and the SLOs of both", () => {
    expect(RULE_FILES.sort()).toEqual([
      "cascade.rules.yml",
      "probe-slo.rules.yml",
      "probe.rules.yml",
      "regional.rules.yml",
      "rollout.rules.yml",
      "slo.rules.yml",
    ]);
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
      // With the edge's registry view age, which a probe of a Worker following a registry writes.
      probeExposition(summarize([], { url: "u", startedAt: "t", durationS: 1, rateRps: 1, sent: 0 }), 0, {
        registryAgeS: 0,
      }),
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
      // Absolute: an alert is read in a pager or a chat, where a repository path opens nothing.
      expect(annotations?.runbook_url).toBe(`${RUNBOOK}#${anchorOf(alert!)}`);
      const section = sections.get(alert!);
      expect(section, `docs/runbook.md has no "## ${alert}"`).toBeDefined();
      for (const part of ["Meaning", "Confirm", "Mitigate", "Escalate"]) {
        expect(section, `${alert}: no **${part}**`).toContain(`**${part}`);
      }
    }
  });

  it("cluster.yml passes promtool check config (Kubernetes discovery swapped for a static target)", () => {
    // Debian's promtool is built without Kubernetes service discovery; everything else is checked as written.
    const config = readConfig("cluster.yml");
    const scrape = config.scrape_configs.find((s) => s.job_name === "edgecascade-regional")!;
    expect(scrape.kubernetes_sd_configs).toEqual([{ role: "pod", namespaces: { names: ["edgecascade"] } }]);
    delete scrape.kubernetes_sd_configs;
    scrape.static_configs = [{ targets: ["127.0.0.1:8000"] }];
    expect(config.scrape_configs.map((s) => s.job_name)).toEqual(["edgecascade-regional"]);
    expect(config.rule_files.sort()).toEqual([
      "cascade.rules.yml",
      "regional.rules.yml",
      "rollout.rules.yml",
      "slo.rules.yml",
    ]);
    expect(checkConfig(config, "cluster.yml")).toMatch(/SUCCESS: 4 rule files found/);
  });

  it("probes.yml, the one Prometheus for the probes, passes promtool check config", () => {
    const config = readConfig("probes.yml");
    expect(config.scrape_configs.map((s) => s.job_name)).toEqual(["edgecascade-probe"]);
    expect(config.rule_files).toEqual(["probe.rules.yml", "probe-slo.rules.yml"]);
    expect(checkConfig(config, "probes.yml")).toMatch(/SUCCESS: 2 rule files found/);
  });

  it("scrapes and evaluates each rule file in one place, and routes every alert to one Alertmanager", () => {
    const cluster = readConfig("cluster.yml");
    const probes = readConfig("probes.yml");
    // Every cluster runs cluster.yml: a probe alert there would fire once per cluster.
    expect([...cluster.rule_files, ...probes.rule_files].sort()).toEqual(RULE_FILES.sort());
    expect(cluster.scrape_configs.some((s) => s.job_name === "edgecascade-probe")).toBe(false);
    // The same Alertmanager, over HTTPS, as the user its web config knows; each host reads the password from
    // its own file (a cluster's from the Secret the chart mounts).
    const [fromCluster] = cluster.alerting.alertmanagers as Alertmanager[];
    const [fromProbes] = probes.alerting.alertmanagers as Alertmanager[];
    expect(probes.alerting.alertmanagers).toHaveLength(1);
    expect(cluster.alerting.alertmanagers).toHaveLength(1);
    expect(fromCluster!.static_configs).toEqual(fromProbes!.static_configs);
    for (const am of [fromCluster!, fromProbes!]) {
      expect(am.scheme).toBe("https");
      expect(Object.keys(webConfig().basic_auth_users)).toContain(am.basic_auth.username);
      expect(am.basic_auth.password_file).toMatch(/^\/etc\/prometheus\//);
    }
    expect(fromCluster!.basic_auth.password_file).toBe("/etc/prometheus/secrets/edgecascade-alertmanager/password");
  });
});

interface Alertmanager {
  scheme: string;
  basic_auth: { username: string; password_file: string };
  static_configs: unknown[];
}

const AM = join(ROOT, "deploy/alertmanager");
const webConfig = () =>
  parse(readFileSync(join(AM, "web.yml"), "utf8")) as {
    tls_server_config: { cert_file: string; key_file: string };
    basic_auth_users: Record<string, string>;
  };

describe("the Alertmanager", () => {
  it("routes by the runbook's severities and passes amtool check-config", () => {
    const run = spawnSync("amtool", ["check-config", join(AM, "alertmanager.yml")], { encoding: "utf8" });
    expect(run.error, "amtool must be installed (Debian package prometheus-alertmanager)").toBeUndefined();
    expect(run.status, run.stdout + run.stderr).toBe(0);
    const config = parse(readFileSync(join(AM, "alertmanager.yml"), "utf8"));
    const severities = new Set(alerts.map((a) => a.labels?.severity));
    expect([...severities].sort()).toEqual(["page", "ticket", "warning"]);
    expect(
      config.route.routes.map((r: { matchers: string[]; receiver: string }) => [r.matchers[0], r.receiver]),
    ).toEqual([
      ['severity="page"', "pager"],
      ['severity=~"warning|ticket"', "chat"],
    ]);
  });

  it("takes alerts over HTTPS with a bcrypt password only (promtool check web-config, with a certificate made here)", () => {
    const cert = join(tmp, "am.crt");
    const key = join(tmp, "am.key");
    const made = spawnSync(
      "openssl",
      [
        "req",
        "-x509",
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
        "-keyout",
        key,
        "-out",
        cert,
        "-days",
        "1",
        "-subj",
        "/CN=alertmanager.test",
      ],
      { encoding: "utf8" },
    );
    expect(made.status, made.stderr).toBe(0);
    const web = webConfig();
    expect(web.tls_server_config).toEqual({
      cert_file: "/etc/prometheus/alertmanager.crt",
      key_file: "/etc/prometheus/alertmanager.key",
    });
    const file = join(tmp, "web.yml");
    writeFileSync(file, stringify({ ...web, tls_server_config: { cert_file: cert, key_file: key } }));
    const { status, output } = promtool("check", "web-config", file);
    expect(status, output).toBe(0);
    // Without a valid bcrypt hash the check fails: the test can tell.
    writeFileSync(
      file,
      stringify({
        ...web,
        tls_server_config: { cert_file: cert, key_file: key },
        basic_auth_users: { prometheus: "secret" },
      }),
    );
    expect(promtool("check", "web-config", file).status).not.toBe(0);
  });
});

interface PrometheusConfig {
  rule_files: string[];
  scrape_configs: Record<string, unknown>[];
  alerting: { alertmanagers: unknown[] };
}

function readConfig(file: string): PrometheusConfig {
  return parse(readFileSync(join(DIR, file), "utf8")) as PrometheusConfig;
}

/** promtool check config on a copy whose rule files point back into deploy/prometheus/; returns its output. */
function checkConfig(config: PrometheusConfig, name: string): string {
  const file = join(tmp, name);
  writeFileSync(file, stringify({ ...config, rule_files: config.rule_files.map((f) => join(DIR, f)) }));
  const { status, output } = promtool("check", "config", file);
  expect(status, output).toBe(0);
  return output;
}
