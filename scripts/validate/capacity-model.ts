/**
 * Capacity on paper: from a peak request rate, the cache hit rate, each model's traffic and edge share, and the
 * per-request costs the benchmarks measured, what the edge and the regional pools must do, how many pods each
 * region needs, and what gives out first as traffic grows. Pure; `npm run validate:capacity` feeds it from
 * bench/*.json.
 */

export interface CapacityInputs {
  /** Requests per second at the peak, worldwide. */
  peakRps: number;
  /** Share of requests answered from the edge's cache (0-1). */
  cacheHitRate: number;
  /** Each model's share of the traffic (summing to 1) and the share of its uncached requests its edge variant answers. */
  models: { name: string; trafficShare: number; edgeShare: number }[];
  /** Each regional pool's share of the forwarded traffic (summing to 1): where the users are. */
  regions: { name: string; trafficShare: number }[];
  /** Worker CPU per request by what answered it, in µs (the Worker's own code, runtime overhead excluded). */
  workerUs: { cache: number; edge: number; forward: number };
  /** Forwarded requests one pool process answers per second at full load (measured). */
  poolRpsPerProcess: number;
  /** Pod shape: processes (= cores) per pod, the share of capacity kept free, the autoscaler's bounds. */
  pod: { processes: number; headroom: number; minReplicas: number; maxReplicas: number };
  /** The p95 target: it holds only while the share of requests sent to a region stays under 1 - 0.95. */
  p95Share: number;
  /**
   * The edge's rate limit (`RATE_LIMITER`: requests per second per client, counted per Cloudflare location), the
   * locations a client's traffic spreads over, and the largest share of all traffic one client (API key) sends.
   */
  rateLimit: { perClientRps: number; locations: number; busiestClientShare: number };
}

export interface RegionPlan {
  name: string;
  /** Forwarded requests per second this region receives at the peak. */
  rps: number;
  /** Pods needed at the peak with the headroom kept (at least the autoscaler's minimum). */
  pods: number;
  /** Whether the autoscaler's maximum suffices. */
  withinMax: boolean;
}

export interface Limit {
  what: string;
  /** The worldwide peak rate at which this limit is reached (Infinity: not by traffic growth). */
  atPeakRps: number;
  why: string;
}

export interface CapacityPlan {
  /** Requests per second by what answers them. */
  rates: { cache: number; edge: number; regional: number };
  /** Share of all requests forwarded to a region. */
  forwardedShare: number;
  /** Worker CPU: mean per request (µs) and in total (CPU-seconds per second, i.e. cores busy worldwide). */
  worker: { meanUsPerRequest: number; totalCores: number };
  /** Answers one pod gives per second with the headroom kept. */
  podRps: number;
  regions: RegionPlan[];
  /** What gives out, first first. */
  limits: Limit[];
}

function checkShares(what: string, shares: number[]): void {
  const sum = shares.reduce((a, b) => a + b, 0);
  if (shares.some((s) => !(s >= 0)) || Math.abs(sum - 1) > 1e-6) {
    throw new Error(`${what} shares must be >= 0 and sum to 1, got ${shares.join(" + ")} = ${sum}`);
  }
}

/** The plan for `inputs`; throws naming the field when shares do not add up or a cost is not positive. */
export function capacityPlan(inputs: CapacityInputs): CapacityPlan {
  const { peakRps, cacheHitRate, models, regions, workerUs, poolRpsPerProcess, pod, p95Share, rateLimit } = inputs;
  checkShares(
    "model traffic",
    models.map((m) => m.trafficShare),
  );
  checkShares(
    "region traffic",
    regions.map((r) => r.trafficShare),
  );
  if (!(cacheHitRate >= 0 && cacheHitRate <= 1)) throw new Error(`cacheHitRate must be in [0, 1], got ${cacheHitRate}`);
  if (!(poolRpsPerProcess > 0)) throw new Error(`poolRpsPerProcess must be > 0, got ${poolRpsPerProcess}`);
  if (!(pod.headroom >= 0 && pod.headroom < 1)) throw new Error(`pod.headroom must be in [0, 1), got ${pod.headroom}`);

  const uncached = peakRps * (1 - cacheHitRate);
  const edgeShareOfUncached = models.reduce((s, m) => s + m.trafficShare * m.edgeShare, 0);
  const rates = {
    cache: peakRps * cacheHitRate,
    edge: uncached * edgeShareOfUncached,
    regional: uncached * (1 - edgeShareOfUncached),
  };
  const forwardedShare = rates.regional / peakRps;
  // A forwarded request runs the edge model first (it decided to forward), then the forward itself.
  const totalUs =
    rates.cache * workerUs.cache + rates.edge * workerUs.edge + rates.regional * (workerUs.edge + workerUs.forward);
  const podRps = poolRpsPerProcess * pod.processes * (1 - pod.headroom);
  const plans = regions.map((r) => {
    const rps = rates.regional * r.trafficShare;
    const pods = Math.max(pod.minReplicas, Math.ceil(rps / podRps));
    return { name: r.name, rps, pods, withinMax: pods <= pod.maxReplicas };
  });

  const busiest = plans.reduce((a, b) => (b.rps > a.rps ? b : a));
  const limits: Limit[] = [
    {
      what: `pods in ${busiest.name} (the busiest region) reach the autoscaler's maximum of ${pod.maxReplicas}`,
      atPeakRps: busiest.rps > 0 ? peakRps * ((pod.maxReplicas * podRps) / busiest.rps) : Number.POSITIVE_INFINITY,
      why: `${busiest.name} receives ${((busiest.rps / peakRps) * 100).toFixed(2)}% of all requests; each pod answers ${Math.round(podRps)} req/s with ${Math.round(pod.headroom * 100)}% headroom. Raise maxReplicaCount, or give the region bigger pods.`,
    },
    {
      what: `the p95 target: more than ${(p95Share * 100).toFixed(0)}% of requests forwarded`,
      // The share does not grow with traffic; it grows as the cache hit rate or the edge share fall.
      atPeakRps: forwardedShare > p95Share ? 0 : Number.POSITIVE_INFINITY,
      why: `${(forwardedShare * 100).toFixed(2)}% are forwarded (1 - cache hit rate) x (1 - edge share); a forward to a region farther than the budget is slower than the target, so the target holds while that share stays under ${(p95Share * 100).toFixed(0)}%. It is not traffic that moves it: a lower cache hit rate (more distinct inputs) or a model whose edge variant answers less does. With no cache at all the share is ${((1 - edgeShareOfUncached) * 100).toFixed(2)}%.`,
    },
  ];
  if (rateLimit.busiestClientShare > 0) {
    const clientCap = rateLimit.perClientRps * rateLimit.locations;
    limits.push({
      what: `the edge's rate limit for the busiest client (${rateLimit.perClientRps} req/s per location)`,
      atPeakRps: clientCap / rateLimit.busiestClientShare,
      why: `a client (API key) sending ${(rateLimit.busiestClientShare * 100).toFixed(0)}% of all traffic, spread over ${rateLimit.locations} locations, is refused (429) past ${Math.round(clientCap)} req/s. The limit guards against abuse: give high-volume tenants their own limit, or count browser traffic per client address rather than per shared app key.`,
    });
  }
  limits.sort((a, b) => a.atPeakRps - b.atPeakRps);
  return {
    rates,
    forwardedShare,
    worker: { meanUsPerRequest: totalUs / peakRps, totalCores: totalUs / 1e6 },
    podRps,
    regions: plans,
    limits,
  };
}

/**
 * The Worker's own CPU per request on a path, from closed-loop throughputs measured in one run: the time per
 * request of the path minus that of a hello-world Worker (the runtime's HTTP handling, which both pay), in µs.
 */
export function workerUsPerRequest(pathRps: number, helloRps: number): number {
  return Math.max(0, 1e6 / pathRps - 1e6 / helloRps);
}
