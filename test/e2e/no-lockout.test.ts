import { type ChildProcess, spawn } from "node:child_process";
import { availableParallelism } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { edgeAnswers, type HeldoutRow } from "../../protocol/heldout.ts";
import { calibrationOf } from "../../protocol/model-config.ts";
import { LOCAL_REGIONS } from "../../scripts/stack/local-regions.ts";
import { heldout, modelConfig } from "../support/heldout.ts";
import { type LocalStack, startLocalStack } from "../support/local-stack.ts";
import { isRunning } from "../support/processes.ts";

/**
 * Issue 17's lock-out, replayed on `npm start` itself with its defaults (10 ms budget): the stack starts while
 * every core spins, so its first region probe, and the first requests, read the regions as slow. Once the load
 * ends, unsure rows must be answered by a region again within 10 s (before, every region stayed "too far" for
 * the next minute), and `cascade: "regional"` requests must reach one, from each region's place its own (issue 33:
 * the warm-up's slow calls, and one place's calls, once stood as every place's estimate). The assertions are on
 * who answered (x-served-by), polled in a bounded loop; nothing asserts on latency. The stack is started as a
 * person starts it (`npm start -- --edge-port P ...`), and ends with SIGTERM to npm alone.
 */
const threshold = calibrationOf(modelConfig("digits-edge")).threshold;
const unsure = heldout.rows.filter((r) => !edgeAnswers(r, threshold, "digits-edge"));
/** A row's first value moved by n/1000: a new cache key, the same unsure row in effect. */
const nudged = (row: HeldoutRow, n: number) => [row.input[0]! + n / 1000, ...row.input.slice(1)];

let stack: LocalStack | undefined;
let spinners: ChildProcess[] = [];
let loadEndedAt = 0;

async function classify(inputs: number[], parameters?: Record<string, unknown>, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack!.edgeUrl}/v1/classify`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify({ model: "digits", inputs, parameters }),
  });
  await res.arrayBuffer();
  return {
    status: res.status,
    servedBy: res.headers.get("x-served-by"),
    degraded: res.headers.get("x-edgecascade-degraded"),
  };
}

const stopSpinners = () => {
  for (const s of spinners) if (s.exitCode === null) s.kill("SIGKILL");
  spinners = [];
};

beforeAll(async () => {
  spinners = Array.from({ length: availableParallelism() }, () =>
    spawn(process.execPath, ["-e", "for (;;) {}"], { stdio: "ignore" }),
  );
  try {
    // No hedges: which region answers is asserted, and a hedge that won against a region still slow from the
    // load would be the cascade working, not a routing mistake.
    stack = await startLocalStack({ EDGE_HEDGE_BUDGET_RATIO: "0", EDGE_HEDGE_BUDGET_BURST: "0" }, { viaNpm: true });
    // Still under load: requests whose forwards read the regions as slow (cut off, or answered late).
    for (let i = 0; i < 10; i++) await classify(nudged(unsure[i % unsure.length]!, 1000 + i));
  } finally {
    stopSpinners();
    loadEndedAt = Date.now();
  }
});

afterAll(async () => {
  stopSpinners();
  await stack?.stop();
});

describe("npm start under a saturated CPU, then released", () => {
  it('within 10 s of the load ending, cascade "regional" from each region\'s place is answered by that region', async () => {
    for (const [i, region] of LOCAL_REGIONS.entries()) {
      const from = { "x-edgecascade-location": `${region.latitude},${region.longitude}` };
      const seen: string[] = [];
      let servedBy: string | null = null;
      // A degraded answer (cut off by the 10 ms budget while the machine recovers) is asked again; an answer from
      // another region than the place's own is a failure.
      for (let n = 0; servedBy !== `regional:${region.name}` && Date.now() - loadEndedAt < 10_000; n++) {
        const answer = await classify(nudged(unsure[i]!, 2000 + 100 * i + n), { cascade: "regional" }, from);
        expect(answer.status).toBe(200);
        servedBy = answer.servedBy;
        seen.push(`${servedBy}${answer.degraded ? `:${answer.degraded}` : ""}`);
        expect(servedBy === "degraded" || servedBy === `regional:${region.name}`, seen.join(", ")).toBe(true);
        if (servedBy === "degraded") await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(servedBy, `${region.place}: ${seen.join(", ")}`).toBe(`regional:${region.name}`);
    }
  });

  it("answers unsure rows from a region again within 10 s of the load ending", async () => {
    const loadEnded = Date.now();
    const seen: string[] = [];
    let regional = false;
    for (let i = 0; !regional && Date.now() - loadEnded < 10_000; i++) {
      const answer = await classify(nudged(unsure[i % unsure.length]!, i));
      expect(answer.status).toBe(200);
      seen.push(`${answer.servedBy}${answer.degraded ? `:${answer.degraded}` : ""}`);
      regional = answer.servedBy?.startsWith("regional:") ?? false;
      if (!regional) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(regional, seen.join(", ")).toBe(true);
  });

  it('sends every cascade "regional" request to a region', async () => {
    // Such requests are never degraded for an estimate, only by their deadline: one cut off by its 10 ms budget
    // (a machine still slow from the load) is asked again, any other degradation fails at once, and each of the
    // 20 must in the end be answered by a region.
    for (let i = 0; i < 20; i++) {
      const seen: string[] = [];
      for (let tries = 0; tries < 20; tries++) {
        const answer = await classify(unsure[i % unsure.length]!.input, { cascade: "regional" });
        seen.push(`${answer.status} ${answer.servedBy}${answer.degraded ? `:${answer.degraded}` : ""}`);
        expect(answer.status, seen.join(", ")).toBe(200);
        if (answer.servedBy?.startsWith("regional:")) break;
        expect(answer.degraded, seen.join(", ")).toBe("deadline");
      }
      expect(seen.at(-1), `request ${i}: ${seen.join(", ")}`).toMatch(/^200 regional:/);
    }
  });
});

describe("SIGTERM to npm", () => {
  it("stops every process of the stack, npm's child and its children included", async () => {
    const pids = stack!.pids;
    expect(pids.length).toBeGreaterThanOrEqual(5); // npm, scripts/start.ts, three pools, workerd
    process.kill(stack!.process.pid!, "SIGTERM");
    await expect.poll(() => pids.filter(isRunning), { timeout: 20_000 }).toEqual([]);
  });
});
