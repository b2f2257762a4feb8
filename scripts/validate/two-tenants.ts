/**
 * validate:overload's two-tenant scenario: one pool with tenant A guaranteed (a reservation twice what A sends)
 * and tenant B best-effort. A sends single unsure rows steadily; B floods the pool with batches of unsure rows at
 * three times the pool's capacity. Every request is the edge's forward (signed, with its tenant and deadline), sent
 * straight to the pool: the flood stands for the forwards of many edge isolates, which one Worker on this machine
 * could not produce. A's p99 and success rate are measured beside a phase with A alone; B must get 429s; every
 * answer is checked against the request it answers. Then, while B floods, one Worker in front of the pool sends
 * each tenant's unsure rows: B's come back degraded (`tenant-shed`), A's from the region.
 */
import { edgeAnswers } from "../../protocol/heldout.ts";
import { closedLoop, openLoop } from "../../tools/probe/load.ts";
import { startRegionalPool } from "../stack/regional-pool.ts";
import { twoTenantVerdict } from "./tenant-verdict.ts";
import { throughTheEdge } from "./two-tenants/edge-phase.ts";
import { floodThroughIsolates, round, SECRET, stream, tenantStream } from "./two-tenants/forwards.ts";
import { pinCores, tenantCounts } from "./two-tenants/pool-readings.ts";
import {
  DEVICE,
  ISOLATES,
  SLO,
  type TenantPhase,
  type TwoTenantOptions,
  type TwoTenantReport,
  type TwoTenantRun,
} from "./two-tenants/scenario.ts";

/**
 * The scenario on one kind of pool: `device`, a pool whose capacity is its (simulated) accelerator's, with CPU to
 * spare for refusals, as a GPU pool's, flooded by every request B sends; `cpu`, the CPU-bound pool of this machine,
 * whose every refusal takes some of the capacity B floods, flooded as edge isolates forward B's rows (each backing
 * off for the Retry-After of a shed). A's rate is `aShare` of the capacity in rows (device) or requests (cpu: a row
 * alone costs a CPU pool nearly a request's work); its reservation twice that.
 */
async function onePool(options: TwoTenantOptions, kind: "device" | "cpu"): Promise<TwoTenantRun> {
  const { model, capacityS, phaseS, connections, sloMs, bRows, aShare, flood } = options;
  const unsure = model.rows.filter((r) => !edgeAnswers(r, model.threshold, model.edgeModel));
  const env = { REGIONAL_SHARED_SECRET: SECRET };
  const extraArgs =
    kind === "device" ? ["--simulated-run-ms", String(DEVICE.runMs), "--max-batch", String(DEVICE.maxBatch)] : [];

  // The pool's capacity for B's requests, measured first on a pool of its own (the reservation depends on it).
  console.error(`two tenants, ${kind} pool: measuring its capacity for ${bRows}-row requests...`);
  const probe = await startRegionalPool({ region: "tenants", env, extraArgs });
  let capacity: TwoTenantRun["capacity"];
  let pinned: string;
  try {
    const pin = pinCores(probe, options.pin);
    pinned = pin.description;
    try {
      const b = stream("b", model, unsure, bRows, 60_000);
      await closedLoop({ origin: probe.url, connections: 32, durationS: 1, next: b.next });
      const { summary } = await closedLoop({ origin: probe.url, connections: 32, durationS: capacityS, next: b.next });
      capacity = {
        rowsPerS: round((summary.ok * bRows) / summary.durationS),
        reqPerS: round(summary.ok / summary.durationS),
        statuses: Object.fromEntries(Object.entries(summary.statuses).map(([k, v]) => [k, v])),
      };
    } finally {
      pin.undo();
    }
  } finally {
    await probe.stop();
  }
  const aRate = Math.max(1, round((kind === "device" ? capacity.rowsPerS : capacity.reqPerS) * aShare));
  const reservation = 2 * aRate;
  const bRate = (capacity.rowsPerS * flood) / bRows;
  console.error(
    `  capacity ${capacity.rowsPerS} rows/s (${capacity.reqPerS} req/s); A ${aRate} rows/s within a reservation of ${reservation}, B ${round(bRate)} req/s (${flood}x)`,
  );

  const pool = await startRegionalPool({
    region: "tenants",
    env: { ...env, REGIONAL_TENANTS: `a=guaranteed:${reservation},b=best-effort` },
    extraArgs,
  });
  const phases: TenantPhase[] = [];
  let edgeCounts: TwoTenantRun["edge"];
  let poolCounts: TwoTenantRun["poolCounts"];
  try {
    const pin = pinCores(pool, options.pin);
    try {
      // Warm the pool's connections and answering rate, then A alone, then A beside B's flood.
      const warm = stream("a", model, unsure, 1, sloMs);
      await closedLoop({ origin: pool.url, connections: 8, durationS: 1, next: warm.next });
      // A's requests from a process of their own: the one that floods is busy reading B's answers.
      const runA = () => tenantStream({ origin: pool.url, rate: aRate, durationS: phaseS, model: model.name, sloMs });
      const alone = async (r: number) => {
        phases.push({ round: r, phase: "A alone", a: { ...(await runA()), offeredRps: aRate } });
      };
      const beside = async (r: number) => {
        const b = stream("b", model, unsure, bRows, sloMs);
        const [ofA, runOfB] = await Promise.all([
          runA(),
          kind === "device"
            ? openLoop({ origin: pool.url, rate: bRate, durationS: phaseS, connections, timeoutMs: 30_000, ...b })
            : floodThroughIsolates(pool.url, bRate, phaseS, connections, ISOLATES, b),
        ]);
        phases.push({
          round: r,
          phase: `A beside B at ${flood}x the capacity`,
          a: { ...ofA, offeredRps: aRate },
          b: { ...b.counter.tally(runOfB, bRows), offeredRps: round(bRate), offeredRowsPerS: round(bRate * bRows) },
        });
      };
      // Rounds of the two phases back to back, every other one in reverse order: a round's ratio is taken within it.
      for (let r = 1; r <= options.rounds; r++) {
        if (r % 2 === 1) {
          await alone(r);
          await beside(r);
        } else {
          await beside(r);
          await alone(r);
        }
        for (const p of phases.filter((x) => x.round === r)) {
          console.error(
            `  round ${r}, ${p.phase}: A ${JSON.stringify(p.a.statuses)} p99 ${p.a.p99Ms} ms${p.b ? `; B ${JSON.stringify(p.b.statuses)} ${JSON.stringify(p.b.refusals)}` : ""}`,
          );
        }
      }
    } finally {
      pin.undo();
    }
    if (kind === "device") edgeCounts = await throughTheEdge(pool, options, unsure, bRate);
    poolCounts = tenantCounts(await (await fetch(`${pool.url}/metrics`)).text());
    console.error(`  the pool's counts: ${JSON.stringify(poolCounts)}`);
  } finally {
    await pool.stop();
  }
  const rounds = Array.from({ length: options.rounds }, (_, i) => {
    const of = phases.filter((p) => p.round === i + 1);
    const withB = of.find((p) => p.b)!;
    return { aAlone: of.find((p) => !p.b)!.a, aWithB: withB.a, b: withB.b! };
  });
  return {
    kind,
    pinned,
    capacity,
    reservationRowsPerS: reservation,
    phases,
    ...(edgeCounts ? { edge: edgeCounts } : {}),
    poolCounts,
    verdict: twoTenantVerdict(rounds, SLO(sloMs)),
  };
}

export async function twoTenants(options: TwoTenantOptions): Promise<TwoTenantReport> {
  const device = await onePool(options, "device");
  const cpu = await onePool(options, "cpu");
  return { settings: { ...options, model: options.model.name }, runs: [device, cpu] };
}
