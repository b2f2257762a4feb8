import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { HeldoutSet } from "../../protocol/heldout.ts";
import { signatureHeaders } from "../../protocol/signing.ts";
import { type WrkRequest, type WrkResult, wrk, wrkScript } from "./wrk.ts";

/** What one round measured, one connection each, back to back (wrk -c1: every request waits for the last). */
export interface ForwardRound {
  /** The hello-world Worker. */
  hello: WrkResult;
  /** The trivial forwarding Worker (forward-worker.js) sending the pool the same signed call. */
  trivial: WrkResult;
  /** cascade "regional" through the edge: cache bypassed, edge model skipped, forwarded to the region. */
  regional: WrkResult;
  /** cascade "edge" through the edge: the edge model answers. */
  edge: WrkResult;
  /** The same signed call the edge makes, sent to the pool directly. */
  pool: WrkResult;
}

export interface ForwardOverhead {
  rounds: ForwardRound[];
  /** regional − edge − pool, per percentile: the median over rounds of each round's own difference, in ms. */
  overheadP50Ms: number;
  overheadP95Ms: number;
  /** The same for the trivial forward: trivial − hello − pool. What workerd's subrequest itself costs here. */
  floorP50Ms: number;
  floorP95Ms: number;
}

const median = (xs: number[]) => {
  const s = [...xs].sort((x, y) => x - y);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/**
 * The edge's forward overhead as docs/performance.md defines it: the latency of cascade "regional" through the edge,
 * minus cascade "edge" through the edge (what any answer through the Worker costs), minus the pool answering
 * the same call directly (what the region itself costs): what is left is the forward (signing, the layers,
 * the outgoing connection, re-encoding). Its floor, measured the same way in the same rounds: a trivial
 * forwarding Worker (forward-worker.js) minus the hello-world Worker minus the pool. One connection, the loads
 * interleaved in each round. The direct calls carry signatures made just before each round (the pool accepts
 * 30 s of skew).
 */
export async function measureForwardOverhead(options: {
  edgeUrl: string;
  poolUrl: string;
  helloUrl: string;
  trivialUrl: string;
  model: string;
  secret: string | undefined;
  heldout: HeldoutSet;
  seconds: number;
  rounds: number;
  onRound?: (round: number, measured: ForwardRound) => void;
}): Promise<ForwardOverhead> {
  const { edgeUrl, poolUrl, helloUrl, trivialUrl, model, secret, heldout, seconds } = options;
  const dir = mkdtempSync(join(tmpdir(), "edgecascade-forward-"));
  const json = { "content-type": "application/json" };
  const viaEdge = (cascade: string): WrkRequest[] =>
    heldout.rows.map((r) => ({
      method: "POST",
      path: "/v1/classify",
      headers: json,
      body: JSON.stringify({ model, inputs: r.input, parameters: { cascade } }),
    }));
  const script = (name: string, requests: WrkRequest[]) => {
    const file = join(dir, `${name}.lua`);
    writeFileSync(file, wrkScript(requests));
    return file;
  };
  const regionalScript = script("regional", viaEdge("regional"));
  const edgeScript = script("edge", viaEdge("edge"));
  /** The body the edge forwards (edge/serve.ts), signed as the edge signs it. */
  const direct = async () =>
    script(
      "pool",
      await Promise.all(
        heldout.rows.map(async (r) => {
          const body = JSON.stringify({ model, inputs: [r.input] });
          const signed = secret ? await signatureHeaders(secret, { method: "POST", path: "/v1/classify", body }) : {};
          return { method: "POST" as const, path: "/v1/classify", headers: { ...json, ...signed }, body };
        }),
      ),
    );
  const one = (url: string, file: string) => wrk(`${url}/v1/classify`, { connections: 1, seconds, script: file });
  const rounds: ForwardRound[] = [];
  try {
    for (let round = 1; round <= options.rounds; round++) {
      const signed = await direct();
      const measured = {
        regional: await one(edgeUrl, regionalScript),
        edge: await one(edgeUrl, edgeScript),
        pool: await one(poolUrl, signed),
        trivial: await one(trivialUrl, signed),
        hello: await one(helloUrl, signed),
      };
      rounds.push(measured);
      options.onRound?.(round, measured);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const overhead = (p: "p50Ms" | "p95Ms") => median(rounds.map((r) => r.regional[p] - r.edge[p] - r.pool[p]));
  const floor = (p: "p50Ms" | "p95Ms") => median(rounds.map((r) => r.trivial[p] - r.hello[p] - r.pool[p]));
  return {
    rounds,
    overheadP50Ms: overhead("p50Ms"),
    overheadP95Ms: overhead("p95Ms"),
    floorP50Ms: floor("p50Ms"),
    floorP95Ms: floor("p95Ms"),
  };
}
