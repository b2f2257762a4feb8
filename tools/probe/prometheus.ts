/**
 * A probe run's summary as Prometheus text exposition, for node_exporter's textfile collector (a `.prom` file
 * in its `--collector.textfile.directory`) or a Pushgateway (`curl --data-binary @FILE`). Gauges, because a run
 * is a snapshot: each file replaces the previous run's. Every series carries the probed edge's `url`.
 * Alerting rules on these series: deploy/prometheus/probe.rules.yml.
 */
import { renameSync, writeFileSync } from "node:fs";
import { PROBE_PATHS, type ProbeSummary, WITHIN_BOUNDS_MS } from "./summary.ts";

type Labels = Record<string, string>;

/** Label values escaped as the exposition format requires (backslash, double quote, newline). */
function labelText(labels: Labels): string {
  const pairs = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`,
  );
  return `{${pairs.join(",")}}`;
}

function numberText(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Number.POSITIVE_INFINITY) return "+Inf";
  return String(n);
}

class Exposition {
  readonly #lines: string[] = [];

  /** One metric family; a sample's third element is a name suffix (`_sum`, `_count` of a summary). */
  metric(name: string, type: "gauge" | "summary", help: string, samples: [Labels, number, string?][]): void {
    this.#lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, value, suffix = ""] of samples) {
      this.#lines.push(`${name}${suffix}${labelText(labels)} ${numberText(value)}`);
    }
  }

  toString(): string {
    return `${this.#lines.join("\n")}\n`;
  }
}

/**
 * The exposition text of one run. `finishedAt` is the run's end (ms since the epoch): the probe-staleness alert
 * compares it with Prometheus' clock.
 */
export function probeExposition(
  summary: ProbeSummary,
  finishedAt: number,
  edge: { registryAgeS?: number | null } = {},
): string {
  const url = { url: summary.url };
  const out = new Exposition();
  const ms = (v: number) => v / 1000;
  out.metric("edgecascade_probe_last_run_timestamp_seconds", "gauge", "When the last probe run ended (Unix seconds).", [
    [url, Math.round(finishedAt / 1000)],
  ]);
  out.metric("edgecascade_probe_sent", "gauge", "Requests the last run sent.", [[url, summary.sent]]);
  out.metric(
    "edgecascade_probe_answers",
    "gauge",
    "Requests of the last run by who answered (cache, edge, regional, degraded) or error.",
    PROBE_PATHS.map((path) => [{ ...url, path }, summary.paths[path]?.count ?? 0]),
  );
  out.metric("edgecascade_probe_error_ratio", "gauge", "Share of the last run's requests that failed.", [
    [url, summary.errorRate],
  ]);
  out.metric(
    "edgecascade_probe_label_mismatches",
    "gauge",
    "Answers of the last run whose label differs from what the answering model should say.",
    [[url, summary.mismatches]],
  );
  out.metric(
    "edgecascade_probe_quota_unmetered",
    "gauge",
    "Answers of the last run served while the edge could not check the probe tenant's global quota (its Durable Object unreachable: failing open).",
    [[url, summary.unmetered]],
  );
  const latency: [Labels, number, string?][] = [];
  const paths = [
    ...PROBE_PATHS.flatMap((p) => (summary.paths[p] ? [[p, summary.paths[p]!] as const] : [])),
    ["all", summary.overall] as const,
  ];
  for (const [path, stats] of paths) {
    for (const [q, v] of [
      ["0.5", stats.p50Ms],
      ["0.95", stats.p95Ms],
      ["0.99", stats.p99Ms],
    ] as const) {
      latency.push([{ ...url, path, quantile: q }, ms(v)]);
    }
    latency.push([{ ...url, path }, ms(stats.meanMs * stats.count), "_sum"]);
    latency.push([{ ...url, path }, stats.count, "_count"]);
  }
  out.metric(
    "edgecascade_probe_latency_seconds",
    "summary",
    'Latency of the last run from each request\'s scheduled send, by path ("all" for every request).',
    latency,
  );
  if (summary.floor) {
    const floor = summary.floor;
    out.metric(
      "edgecascade_probe_floor_seconds",
      "summary",
      "The probe's own latency in the last run: the same requests on the same schedule against a no-op server.",
      [
        ...(
          [
            ["0.5", floor.p50Ms],
            ["0.95", floor.p95Ms],
            ["0.99", floor.p99Ms],
          ] as const
        ).map(([quantile, v]): [Labels, number] => [{ ...url, quantile }, ms(v)]),
        [url, ms(floor.meanMs * floor.count), "_sum"],
        [url, floor.count, "_count"],
      ],
    );
  }
  out.metric("edgecascade_probe_p95_target_seconds", "gauge", "The p95 target the run was judged against.", [
    [url, ms(summary.target.p95Ms)],
  ]);
  out.metric(
    "edgecascade_probe_measured_p95_seconds",
    "gauge",
    "p95 over every request sent, failures counted as never answered (+Inf when more than 5% failed).",
    [[url, summary.target.measuredP95Ms === null ? Number.POSITIVE_INFINITY : ms(summary.target.measuredP95Ms)]],
  );
  out.metric(
    "edgecascade_probe_answered_within",
    "gauge",
    "Requests of the last run answered within bound_seconds of their scheduled send (failures never are): its latency histogram, for the SLO rules against edgecascade_probe_sent.",
    WITHIN_BOUNDS_MS.map((bound): [Labels, number] => [
      { ...url, bound_seconds: String(bound / 1000) },
      summary.within[String(bound)] ?? 0,
    ]),
  );
  out.metric("edgecascade_probe_target_met", "gauge", "1 when the last run met the p95 target, else 0.", [
    [url, summary.target.holds ? 1 : 0],
  ]);
  out.metric(
    "edgecascade_probe_region_answers",
    "gauge",
    "Answers of the last run by the region that answered.",
    Object.entries(summary.regions).map(([region, n]) => [{ ...url, region }, n]),
  );
  // How old the model registry's view is that the edge serves from (its /status), when the Worker follows one:
  // the cron copies it from R2 each minute, so a growing age means the registry cannot be read.
  if (typeof edge.registryAgeS === "number") {
    out.metric(
      "edgecascade_probe_edge_registry_age_seconds",
      "gauge",
      "Age of the model registry's served state the probed Worker serves from (its /status registry.viewAgeS).",
      [[url, edge.registryAgeS]],
    );
  }
  return out.toString();
}

/**
 * Write the exposition so that a collector never reads half a file: to a temporary name in the same directory,
 * then renamed over `path` (node_exporter's textfile collector documents this).
 */
export function writeProbeExposition(path: string, text: string): void {
  const partial = `${path}.${process.pid}.tmp`;
  writeFileSync(partial, text);
  renameSync(partial, path);
}
