/**
 * npm run validate:fuzz: hostile input at the edge and at a pool. A regional pool (with an edge secret) and the
 * edge Worker in workerd (with API keys, routed to that pool) each get `--requests` requests, a quarter of them
 * valid and the rest malformed or hostile (scripts/validate/hostile.ts: wrong types and shapes, huge numbers and
 * NaN/Infinity spellings, deep nesting, oversized and slow bodies, invalid UTF-8, wrong methods and content
 * types, forged, expired and re-used signatures, missing or wrong API keys, header floods). Rules: no 5xx, no
 * crash, no dropped connection except a close right after a 413/431, every valid request answered correctly.
 * Writes bench/fuzz.json and bench/fuzz.md. `--help` lists the flags; the defaults take about a minute.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { defineCommand, runMain } from "../../tools/cli/command.ts";
import type { FlagTable, FlagValues } from "../../tools/cli/flags.ts";
import { holdBenchLock } from "../benchmarks/lock.ts";
import { MODEL_FLAG, OUT_FLAG } from "../run-flags.ts";
import { startEdgeWorker } from "../stack/edge-worker.ts";
import { startRegionalPool } from "../stack/regional-pool.ts";
import { type FuzzReport, runFuzz } from "./fuzz-run.ts";
import { validationModel } from "./model.ts";
import { ROOT, type RunInfo, runInfo, runLine } from "./run-info.ts";

const FLAGS = {
  model: MODEL_FLAG,
  requests: {
    type: "number",
    placeholder: "N",
    default: 13_400,
    min: 1,
    integer: true,
    defaultText: "13400: 10,050 hostile each",
    help: "requests per target, valid ones included",
  },
  seed: { type: "number", placeholder: "N", default: 1, integer: true, help: "case seed" },
  "slow-bodies": {
    type: "number",
    placeholder: "N",
    default: 20,
    integer: true,
    help: "valid requests per target whose body trickles in over 2 s, alongside",
  },
  out: OUT_FLAG,
} as const satisfies FlagTable;

interface Alive {
  target: string;
  /** The process was still running at the end. */
  running: boolean;
  /** `GET /v2/health/ready` answered 200 at the end. */
  ready: boolean;
}

function markdown(info: RunInfo, reports: FuzzReport[], alive: Alive[]): string {
  const kinds = [...new Set(reports.flatMap((r) => Object.keys(r.byKind)))].sort();
  return `${[
    "# Hostile input",
    "",
    runLine(info),
    "",
    "A regional pool (edge secret set) and the edge Worker in workerd (API keys set, routed to that pool), each",
    "sent the requests below on 16 keep-alive connections; bodies over the limit and oversized headers on a",
    "connection of their own. Valid requests are interleaved (every 4th) and their answers checked against the",
    "held-out fixture; slow valid bodies trickle in alongside.",
    "",
    "| target | requests | hostile | valid (correct) | slow bodies (answered) | 5xx | dropped | closed after a 413/431 | problems |",
    "|---|---|---|---|---|---|---|---|---|",
    ...reports.map(
      (r) =>
        `| ${r.target} | ${r.requests} | ${r.hostile} | ${r.valid} (${r.validCorrect}) | ${r.slowBodies} (${r.slowBodiesAnswered}) | ${r.serverErrors} | ${r.dropped} | ${r.closedAfterAnswer} | ${r.problems.length} |`,
    ),
    "",
    ...alive.map(
      (a) =>
        `- ${a.target}: ${a.running ? "still running" : "**exited**"}, ready ${a.ready ? "200" : "**not 200**"} afterwards.`,
    ),
    "",
    "## Answers by kind of request",
    "",
    `| kind | ${reports.map((r) => r.target).join(" | ")} |`,
    `|---|${reports.map(() => "---").join("|")}|`,
    ...kinds.map(
      (k) =>
        `| ${k} | ${reports
          .map((r) =>
            Object.entries(r.byKind[k] ?? {})
              .map(([s, n]) => `${s}: ${n}`)
              .join(", "),
          )
          .join(" | ")} |`,
    ),
    ...reports.flatMap((r) =>
      r.problems.length ? ["", `Problems at ${r.target}:`, ...r.problems.map((p) => `- \`${p}\``)] : [],
    ),
  ].join("\n")}\n`;
}

async function main(values: FlagValues<typeof FLAGS>): Promise<number> {
  const model = validationModel(values.model);
  const { requests, seed, "slow-bodies": slowBodies } = values;
  const out = resolve(ROOT, values.out);
  holdBenchLock();
  const info = runInfo(`npm run validate:fuzz -- ${process.argv.slice(2).join(" ")}`.trim());

  const secret = randomBytes(24).toString("hex");
  const apiKey = randomBytes(16).toString("hex");
  const pool = await startRegionalPool({ region: "fuzz", env: { REGIONAL_SHARED_SECRET: secret } });
  const reports: FuzzReport[] = [];
  const alive: Alive[] = [];
  try {
    console.error(`pool: ${requests} requests...`);
    reports.push(await runFuzz({ name: "pool", origin: pool.url, model, secret }, { requests, seed, slowBodies }));
    const ready = await fetch(`${pool.url}/v2/health/ready`).then(
      (r) => r.status === 200,
      () => false,
    );
    alive.push({ target: "pool", running: pool.pid > 0 && (await isRunning(pool.pid)), ready });

    const edge = await startEdgeWorker({
      vars: {
        REGIONS: JSON.stringify([{ name: "fuzz", url: pool.url, latitude: 50.11, longitude: 8.68 }]),
        REGIONAL_SHARED_SECRET: secret,
        API_KEYS: apiKey,
        SLO_BUDGET_MS: "2000",
      },
      rateLimit: false,
    });
    try {
      console.error(`edge: ${requests} requests...`);
      reports.push(
        await runFuzz({ name: "edge", origin: edge.url, model, apiKey }, { requests, seed: seed + 1, slowBodies }),
      );
      const edgeReady = await fetch(`${edge.url}/v2/health/ready`).then(
        (r) => r.status === 200,
        () => false,
      );
      alive.push({ target: "edge (workerd)", running: edgeReady, ready: edgeReady });
    } finally {
      await edge.dispose();
    }
  } finally {
    await pool.stop();
  }
  for (const r of reports) {
    console.error(
      `${r.target}: ${r.requests} requests, 5xx ${r.serverErrors}, dropped ${r.dropped}, valid ${r.validCorrect}/${r.valid}, problems ${r.problems.length}`,
    );
  }
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, "fuzz.json"), `${JSON.stringify({ info, reports, alive }, null, 2)}\n`);
  writeFileSync(join(out, "fuzz.md"), markdown(info, reports, alive));
  console.error(`wrote ${join(out, "fuzz.md")}`);
  const clean = reports.every((r) => r.problems.length === 0 && r.slowBodiesAnswered === r.slowBodies);
  return clean && alive.every((a) => a.running && a.ready) ? 0 : 1;
}

async function isRunning(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

runMain(
  defineCommand({
    name: "validate:fuzz",
    usage: "npm run validate:fuzz -- [options]",
    flags: FLAGS,
    run: (values) => main(values),
  }),
  { errorExit: 2 },
);
