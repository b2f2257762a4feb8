/**
 * bench:edge's scenarios (hello, parse, cache, edge, regional) in interleaved rounds: each round's closed
 * loops back to back (throughput, workerd CPU per request, steal), then its open loops (latency); medians, and
 * each scenario's ratios to hello-world paired by round.
 */
import { closedLoop, LoadClient, openLoop } from "../../../tools/probe/load.ts";
import { headerValue, type LoadResponse } from "../../../tools/probe/load-response.ts";
import { machineTicks, stealShare } from "../machine-steal.ts";
import { median, type PairedRatio, pairedRatio } from "../paired-ratio.ts";
import { cpuMs, listeningPid } from "../process-cpu.ts";

interface Scenario {
  name: "hello" | "parse" | "cache" | "edge" | "regional";
  what: string;
  url: string;
  path: string;
  bodies: string[];
}

export interface Tally {
  requests: number;
  errors: number;
  servedBy: Record<string, number>;
}

/** The scenario's i-th request and, as its answer comes, what it counts for (the generator: tools/probe/load.ts). */
const load = (s: Scenario, tally: Tally) => ({
  next: (i: number) => ({
    path: s.path,
    headers: { "content-type": "application/json" },
    body: s.bodies[i % s.bodies.length],
  }),
  onResponse: (r: LoadResponse) => {
    tally.requests++;
    if (r.status !== 200) tally.errors++;
    if (r.status === 0) return;
    const by = headerValue(r.headers, "x-served-by") ?? "none";
    tally.servedBy[by] = (tally.servedBy[by] ?? 0) + 1;
  },
});

export interface Measurement {
  reqPerSec: number;
  /** workerd's CPU (its threads' time on a core) per request during the closed loop, in µs; null when its pid is unknown. */
  cpuUsPerRequest: number | null;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  /** Share of the machine's CPU time the hypervisor took during the closed loop (/proc/stat); null where unknown. */
  steal?: number | null;
}

export const round = (x: number, digits = 3) => Math.round(x * 10 ** digits) / 10 ** digits;

/** How long and how hard each round loads each scenario (bench:edge's flags). */
interface RoundSettings {
  rounds: number;
  connections: number;
  warmupS: number;
  durationS: number;
  /** The open loop's offered rate, requests per second. */
  rate: number;
  latencyS: number;
}

/** The request bodies of the scenarios: every held-out row, in auto mode, forced to the edge, forced to a region. */
export interface ScenarioBodies {
  auto: string[];
  edge: string[];
  regional: string[];
}

/**
 * The scenarios' rounds against one edge Worker, its hello-world and the parse reference: medians, and each
 * scenario's ratios to hello (`withRegional`: the regional forward too).
 */
export async function measureScenarios(
  settings: RoundSettings,
  at: { edge: string; hello: string; parse: string },
  bodies: ScenarioBodies,
  label: string,
  withRegional: boolean,
) {
  const { rounds, connections, warmupS, durationS, rate, latencyS } = settings;
  const scenarios: Scenario[] = [
    { name: "hello", what: "hello-world Worker (baseline)", url: at.hello, path: "/", bodies: bodies.auto },
    {
      name: "parse",
      what: "reference: a plain Worker parsing the JSON body, a constant answer",
      url: at.parse,
      path: "/",
      bodies: bodies.auto,
    },
    {
      name: "cache",
      what: "cache hit (auto, every row cached)",
      url: at.edge,
      path: "/v1/classify",
      bodies: bodies.auto,
    },
    {
      name: "edge",
      what: "edge inference (cascade edge, no cache)",
      url: at.edge,
      path: "/v1/classify",
      bodies: bodies.edge,
    },
  ];
  if (withRegional) {
    scenarios.push({
      name: "regional",
      what: "regional forward (cascade regional, real pool)",
      url: at.edge,
      path: "/v1/classify",
      bodies: bodies.regional,
    });
  }
  const samples = Object.fromEntries(scenarios.map((s) => [s.name, [] as Measurement[]]));
  const tallies = Object.fromEntries(scenarios.map((s) => [s.name, { requests: 0, errors: 0, servedBy: {} } as Tally]));
  for (let r = 1; r <= rounds; r++) {
    // Every scenario's closed loop back to back, so that a round's ratios compare runs seconds apart; every
    // other round in reverse order, so that drift during a round does not always favour the same scenario.
    // Then the open loops (latency), in the same order.
    const order = r % 2 === 1 ? scenarios : [...scenarios].reverse();
    const clients = new Map(
      order.map((s) => [s.name, new LoadClient(s.url, { connections: Math.max(connections, 64) })]),
    );
    const closed = new Map<string, Pick<Measurement, "reqPerSec" | "cpuUsPerRequest" | "steal">>();
    for (const s of order) {
      const client = clients.get(s.name)!;
      const tally = tallies[s.name]!;
      const scratch: Tally = { requests: 0, errors: 0, servedBy: {} };
      await closedLoop({ origin: s.url, client, connections, durationS: warmupS, ...load(s, scratch) });
      const pid = listeningPid(s.url);
      const cpuBefore = pid === undefined ? undefined : cpuMs(pid);
      const ticksBefore = machineTicks();
      const requestsBefore = tally.requests;
      const { reqPerSec } = (await closedLoop({ origin: s.url, client, connections, durationS, ...load(s, tally) }))
        .summary;
      const cpuAfter = pid === undefined ? undefined : cpuMs(pid);
      const steal = stealShare(ticksBefore, machineTicks()) ?? null;
      const answered = tally.requests - requestsBefore;
      const cpuUsPerRequest =
        cpuBefore !== undefined && cpuAfter !== undefined ? ((cpuAfter - cpuBefore) * 1000) / answered : null;
      closed.set(s.name, { reqPerSec, cpuUsPerRequest, steal });
    }
    for (const s of order) {
      const client = clients.get(s.name)!;
      const { latency } = (
        await openLoop({ origin: s.url, client, rate, durationS: latencyS, ...load(s, tallies[s.name]!) })
      ).summary;
      const m = { ...closed.get(s.name)!, p50Ms: latency.p50Ms, p95Ms: latency.p95Ms, p99Ms: latency.p99Ms };
      samples[s.name]!.push(m);
      console.log(
        `${label} round ${r} ${s.name.padEnd(8)} ${m.reqPerSec.toFixed(0).padStart(6)} req/s  ` +
          `workerd CPU ${m.cpuUsPerRequest?.toFixed(0) ?? "?"} µs/request  ` +
          `p50 ${m.p50Ms.toFixed(2)} p95 ${m.p95Ms.toFixed(2)} p99 ${m.p99Ms.toFixed(2)} ms @ ${rate}/s` +
          (m.steal == null ? "" : `  steal ${(m.steal * 100).toFixed(0)}%`),
      );
    }
    await Promise.all([...clients.values()].map((c) => c.close()));
  }

  const result = Object.fromEntries(
    scenarios.map((s) => {
      const ms = samples[s.name]!;
      const cpus = ms.flatMap((m) => (m.cpuUsPerRequest === null ? [] : [m.cpuUsPerRequest]));
      const med = {
        reqPerSec: round(median(ms.map((m) => m.reqPerSec)), 0),
        cpuUsPerRequest: cpus.length ? round(median(cpus), 0) : null,
        p50Ms: round(median(ms.map((m) => m.p50Ms))),
        p95Ms: round(median(ms.map((m) => m.p95Ms))),
        p99Ms: round(median(ms.map((m) => m.p99Ms))),
      };
      return [s.name, { what: s.what, ...med, rounds: ms, tally: tallies[s.name] }];
    }),
  );
  const base = result.hello!;
  const helloRounds = samples.hello!;
  const rounded = (r: PairedRatio | undefined) =>
    r ? { median: round(r.median), min: round(r.min), max: round(r.max) } : null;
  for (const s of scenarios) {
    const m = result[s.name]!;
    const ms = samples[s.name]!;
    // Per round, against the hello run of the same round: load from elsewhere that comes and goes cancels out.
    const throughput = rounded(
      pairedRatio(
        ms.map((x) => x.reqPerSec),
        helloRounds.map((x) => x.reqPerSec),
      ),
    )!;
    const cpu = rounded(
      pairedRatio(
        ms.map((x) => x.cpuUsPerRequest),
        helloRounds.map((x) => x.cpuUsPerRequest),
      ),
    );
    Object.assign(m, {
      vsHello: {
        throughput: throughput.median,
        throughputRange: [throughput.min, throughput.max],
        cpu: cpu?.median ?? null,
        cpuRange: cpu ? [cpu.min, cpu.max] : null,
        p50: round(m.p50Ms / base.p50Ms, 2),
        p99: round(m.p99Ms / base.p99Ms, 2),
      },
    });
  }
  return result;
}
