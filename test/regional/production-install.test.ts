import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { argmax } from "../../protocol/heldout.ts";
import { type RegionalPool, startRegionalPool } from "../../scripts/stack/regional-pool.ts";
import { heldout } from "../support/heldout.ts";
import { type ProductionCopy, productionCopy } from "../support/production-copy.ts";
import { classifyRows, post, TOLERANCE, worstDifference } from "../support/regional-server.ts";

// The pool as production runs it: `npm ci --omit=dev` in a copy of the repository, then `node regional/main.ts`
// from that copy (Node's own type stripping; no tsx, no devDependency).
describe("a production install", () => {
  let copy: ProductionCopy;
  let pool: RegionalPool;

  beforeAll(async () => {
    copy = await productionCopy();
    pool = await startRegionalPool({
      region: "prod",
      script: join(copy.dir, "regional/main.ts"),
      cwd: copy.dir,
      extraArgs: ["--ep", "cpu"],
    });
  }, 240_000);

  afterAll(async () => {
    await pool?.stop();
    copy?.remove();
  });

  it("installs every dependency and nothing that only development needs", () => {
    // package-lock.json marks each package only devDependencies reach with "dev": true.
    const lock = JSON.parse(readFileSync(join(copy.dir, "package-lock.json"), "utf8")) as {
      packages: Record<string, { dev?: boolean }>;
    };
    const devOnly = Object.entries(lock.packages).filter(([path, p]) => path !== "" && p.dev);
    expect(devOnly.map(([path]) => path)).toEqual(
      expect.arrayContaining(["node_modules/vitest", "node_modules/wrangler"]),
    );
    for (const [path] of devOnly) expect(existsSync(join(copy.dir, path)), `${path} is development-only`).toBe(false);
    const pkg = JSON.parse(readFileSync(join(copy.dir, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    for (const dep of Object.keys(pkg.dependencies)) {
      expect(existsSync(join(copy.dir, "node_modules", dep, "package.json")), `${dep} is installed`).toBe(true);
    }
  });

  it("starts from that copy, becomes ready and answers correctly", async () => {
    const from = 0;
    const n = 16;
    const res = await post(`${pool.url}/v1/classify`, classifyRows(from, n));
    expect(res.status).toBe(200);
    expect(res.body.servedBy).toBe("regional:prod");
    const predictions = res.body.predictions as { class: number; scores: number[] }[];
    expect(predictions.map((p) => p.class)).toEqual(
      heldout.rows.slice(from, from + n).map((r) => argmax(r.expected.digits!)),
    );
    expect(worstDifference(predictions, from)).toBeLessThan(TOLERANCE);
  });

  it("drains and exits 0 on SIGTERM", async () => {
    await pool.stop();
    expect(await pool.exited).toBe(0);
  });
});
