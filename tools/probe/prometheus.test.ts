import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { probeExposition, writeProbeExposition } from "./prometheus.ts";
import { type ProbeResult, summarize } from "./summary.ts";

const ok = (path: ProbeResult["path"], latencyMs: number, extra: Partial<ProbeResult> = {}): ProbeResult => ({
  path,
  latencyMs,
  status: 200,
  ...extra,
});
const run = { url: 'https://eu.example.com/"edge"', startedAt: "t", durationS: 1, rateRps: 100 };

/** `name{labels} value` lines as a map from `name{labels}` to the value. */
function samples(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    const value = line.slice(at + 1);
    out.set(line.slice(0, at), value === "+Inf" ? Number.POSITIVE_INFINITY : Number(value));
  }
  return out;
}

describe("probe summary as Prometheus text", () => {
  const results = [
    ...Array.from({ length: 90 }, () => ok("cache", 2)),
    ...Array.from({ length: 6 }, () => ok("edge", 4, { correct: true })),
    ok("edge", 5, { correct: false }),
    ok("regional", 30, { region: "eu-central" }),
    ok("degraded", 12, { unmetered: true }),
    { path: "error", latencyMs: 2, status: 503, error: "HTTP 503" } as ProbeResult,
  ];
  const floorMs = Array.from({ length: 100 }, (_, i) => (i < 50 ? 0.5 : 0.8));
  const summary = summarize(results, { ...run, sent: 100, floorMs });
  const text = probeExposition(summary, 1_700_000_000_400);
  const url = 'url="https://eu.example.com/\\"edge\\""';

  it("passes promtool check metrics", () => {
    const promtool = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
    expect(promtool.error, "promtool must be installed (Debian package prometheus)").toBeUndefined();
    expect(promtool.stdout + promtool.stderr).toBe("");
    expect(promtool.status).toBe(0);
  });

  it("reports the run's counts, verdict and time, with the url escaped", () => {
    const s = samples(text);
    expect(s.get(`edgecascade_probe_last_run_timestamp_seconds{${url}}`)).toBe(1_700_000_000);
    expect(s.get(`edgecascade_probe_sent{${url}}`)).toBe(100);
    expect(s.get(`edgecascade_probe_answers{${url},path="cache"}`)).toBe(90);
    expect(s.get(`edgecascade_probe_answers{${url},path="edge"}`)).toBe(7);
    expect(s.get(`edgecascade_probe_answers{${url},path="degraded"}`)).toBe(1);
    expect(s.get(`edgecascade_probe_answers{${url},path="error"}`)).toBe(1);
    expect(s.get(`edgecascade_probe_error_ratio{${url}}`)).toBe(0.01);
    expect(s.get(`edgecascade_probe_label_mismatches{${url}}`)).toBe(1);
    expect(s.get(`edgecascade_probe_quota_unmetered{${url}}`)).toBe(1);
    expect(s.get(`edgecascade_probe_region_answers{${url},region="eu-central"}`)).toBe(1);
    // 95 of 100 answered within 5 ms: the target holds.
    expect(s.get(`edgecascade_probe_target_met{${url}}`)).toBe(1);
    expect(s.get(`edgecascade_probe_p95_target_seconds{${url}}`)).toBe(0.01);
    expect(s.get(`edgecascade_probe_measured_p95_seconds{${url}}`)).toBe(0.004);
  });

  it("gives the run's latency histogram: answered within each bound, the error never", () => {
    const s = samples(text);
    // 97 answered within 5 ms (cache and edge), the degraded one at 12 ms, the regional one at 30 ms.
    expect(s.get(`edgecascade_probe_answered_within{${url},bound_seconds="0.005"}`)).toBe(97);
    expect(s.get(`edgecascade_probe_answered_within{${url},bound_seconds="0.01"}`)).toBe(97);
    expect(s.get(`edgecascade_probe_answered_within{${url},bound_seconds="0.025"}`)).toBe(98);
    expect(s.get(`edgecascade_probe_answered_within{${url},bound_seconds="0.05"}`)).toBe(99);
    expect(s.get(`edgecascade_probe_answered_within{${url},bound_seconds="0.25"}`)).toBe(99);
  });

  it("gives latency in seconds as a summary per path and for all requests", () => {
    const s = samples(text);
    expect(s.get(`edgecascade_probe_latency_seconds{${url},path="regional",quantile="0.95"}`)).toBe(0.03);
    expect(s.get(`edgecascade_probe_latency_seconds_count{${url},path="cache"}`)).toBe(90);
    expect(s.get(`edgecascade_probe_latency_seconds_sum{${url},path="cache"}`)).toBeCloseTo(0.18, 9);
    expect(s.get(`edgecascade_probe_latency_seconds_count{${url},path="all"}`)).toBe(100);
    expect(s.get(`edgecascade_probe_latency_seconds{${url},path="all",quantile="0.5"}`)).toBe(0.002);
  });

  it("gives the probe's own floor when the run measured one", () => {
    const s = samples(text);
    expect(s.get(`edgecascade_probe_floor_seconds{${url},quantile="0.5"}`)).toBe(0.0005);
    expect(s.get(`edgecascade_probe_floor_seconds{${url},quantile="0.99"}`)).toBe(0.0008);
    expect(probeExposition(summarize(results, { ...run, sent: 100 }), 0)).not.toContain("floor");
  });

  it("gives the age of the edge's registry view only when the Worker follows a registry", () => {
    expect(
      samples(probeExposition(summary, 0, { registryAgeS: 42 })).get(
        `edgecascade_probe_edge_registry_age_seconds{${url}}`,
      ),
    ).toBe(42);
    expect(probeExposition(summary, 0, { registryAgeS: null })).not.toContain("registry");
  });

  it("says +Inf and 0 when more than 5% of requests failed", () => {
    const failing = summarize(
      [...Array.from({ length: 90 }, () => ok("edge", 1)), ...Array.from({ length: 10 }, () => ok("error", 1))],
      { ...run, sent: 100 },
    );
    const s = samples(probeExposition(failing, 0));
    expect(s.get(`edgecascade_probe_measured_p95_seconds{${url}}`)).toBe(Number.POSITIVE_INFINITY);
    expect(s.get(`edgecascade_probe_target_met{${url}}`)).toBe(0);
    expect(s.get(`edgecascade_probe_error_ratio{${url}}`)).toBe(0.1);
  });

  it("replaces the file whole, leaving no temporary file behind", () => {
    const dir = mkdtempSync(join(tmpdir(), "probe-prom-"));
    try {
      const file = join(dir, "edgecascade_probe.prom");
      writeProbeExposition(file, "old\n");
      writeProbeExposition(file, text);
      expect(readFileSync(file, "utf8")).toBe(text);
      expect(readdirSync(dir)).toEqual(["edgecascade_probe.prom"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
