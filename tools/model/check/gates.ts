import type { Budgets } from "./budgets.ts";
import { energyMj } from "./budgets.ts";

/** One runtime's per-row figures: one row per run, `samples` runs. */
export interface RowLatency {
  p50Ms: number;
  p99Ms: number;
  /** CPU time of the process per row, microseconds. */
  cpuUsPerRow: number;
  samples: number;
}

/** What `check` measured of a candidate version; later fields are absent when an earlier step failed. */
export interface Measured {
  /** The file against its config entry. */
  file: { bytes: number; sha256: string; listedSha256: string; listedBytes: number };
  /** Undefined: no public key given, not checked. */
  signature?: { problem: string | undefined };
  /** A session in onnxruntime-node (as the pools run it); the error when it failed. */
  load: { error: string | undefined };
  /** Why the graph does not match config.json's tensors, if it does not. */
  schema?: string | undefined;
  /** The pools' own fixture check (probabilities, accuracy against the stated one). */
  fixture?: { ok: true; accuracy: number } | { ok: false; reason: string };
  /** On the candidate's held-out rows: its accuracy, the served version's, and how often their labels agree. */
  comparison?: { rows: number; servedVersion: string; candidate: number; served: number; agreement: number };
  node?: RowLatency;
  /** Edge variants only: onnxruntime-web (wasm, one thread), as the Worker runs it. */
  web?: RowLatency;
}

export interface GateRow {
  gate: string;
  value: string;
  budget: string;
  passed: boolean;
}

const pct = (x: number) => `${(x * 100).toFixed(2)}%`;
const ms = (x: number) => `${x.toFixed(3)} ms`;

/**
 * The pass/fail table of a check: every gate, in order, with what was measured and what it was held to. A
 * gate whose measurement is missing (an earlier step failed) fails as "not measured".
 */
export function evaluateGates(m: Measured, budgets: Budgets, edgeVariant: boolean): GateRow[] {
  const rows: GateRow[] = [];
  const add = (gate: string, value: string, budget: string, passed: boolean) =>
    rows.push({ gate, value, budget, passed });
  const missing = (gate: string, budget: string) => add(gate, "not measured", budget, false);

  const { file } = m;
  add(
    "checksum",
    `sha256 ${file.sha256.slice(0, 12)}…, ${file.bytes} bytes`,
    `config.json: ${file.listedSha256.slice(0, 12)}…, ${file.listedBytes} bytes`,
    file.sha256 === file.listedSha256 && file.bytes === file.listedBytes,
  );
  if (m.signature) {
    add("signature", m.signature.problem ?? "verified", "signed by the given key", !m.signature.problem);
  } else {
    add("signature", "not checked (no public key given)", "--model-public-key to check", true);
  }
  add("load", m.load.error ?? "session created (onnxruntime-node, cpu)", "loads as the pools load it", !m.load.error);
  if (m.schema === undefined && m.load.error) missing("schema", "config.json's tensors");
  else add("schema", m.schema ?? "input and probabilities as config.json says", "config.json's tensors", !m.schema);

  if (m.fixture) {
    add(
      "fixture",
      m.fixture.ok ? `probabilities, accuracy ${pct(m.fixture.accuracy)}` : m.fixture.reason,
      "the pools' load check",
      m.fixture.ok,
    );
  } else missing("fixture", "the pools' load check");

  const c = m.comparison;
  if (c) {
    const floor = c.served - budgets.accuracyTolerance;
    add(
      "accuracy",
      pct(c.candidate),
      `>= ${pct(floor)} (version ${c.servedVersion}: ${pct(c.served)} - ${pct(budgets.accuracyTolerance)})`,
      c.candidate >= floor - 1e-12,
    );
    add(
      "agreement",
      `${pct(c.agreement)} of ${c.rows} rows`,
      `>= ${pct(budgets.minAgreement)} with version ${c.servedVersion}`,
      c.agreement >= budgets.minAgreement,
    );
  } else {
    missing("accuracy", `within ${pct(budgets.accuracyTolerance)} of the served version`);
    missing("agreement", `>= ${pct(budgets.minAgreement)}`);
  }

  add("size", `${file.bytes} bytes`, `<= ${budgets.maxBytes} bytes`, file.bytes <= budgets.maxBytes);

  const latency = (runtime: string, l: RowLatency | undefined, p50: number, p99: number) => {
    if (!l) {
      missing(`p50 ${runtime}`, `<= ${ms(p50)}`);
      missing(`p99 ${runtime}`, `<= ${ms(p99)}`);
      return;
    }
    add(`p50 ${runtime}`, `${ms(l.p50Ms)} per row (${l.samples} runs)`, `<= ${ms(p50)}`, l.p50Ms <= p50);
    add(`p99 ${runtime}`, `${ms(l.p99Ms)} per row`, `<= ${ms(p99)}`, l.p99Ms <= p99);
  };
  latency("onnxruntime-node", m.node, budgets.p50Ms, budgets.p99Ms);
  if (edgeVariant) latency("onnxruntime-web", m.web, budgets.webP50Ms, budgets.webP99Ms);

  // The energy of the runtime the version serves in: the Worker's wasm for an edge variant, else the pool's.
  const energyFrom = edgeVariant ? m.web : m.node;
  if (energyFrom) {
    const mj = energyMj(energyFrom.cpuUsPerRow, budgets.wattsPerCore);
    add(
      "energy (estimate)",
      `${mj.toFixed(4)} mJ per prediction (${energyFrom.cpuUsPerRow.toFixed(1)} µs CPU x ${budgets.wattsPerCore} W)`,
      `<= ${budgets.maxEnergyMj} mJ`,
      mj <= budgets.maxEnergyMj,
    );
  } else missing("energy (estimate)", `<= ${budgets.maxEnergyMj} mJ`);
  return rows;
}

/** The table `check` prints. */
export function gatesTable(rows: readonly GateRow[]): string {
  const header = { gate: "gate", value: "measured", budget: "budget", verdict: "" };
  const lines = [header, ...rows.map((r) => ({ ...r, verdict: r.passed ? "pass" : "FAIL" }))];
  const width = (k: "gate" | "value" | "budget") => Math.max(...lines.map((l) => l[k].length));
  const [g, v, b] = [width("gate"), width("value"), width("budget")];
  return lines
    .map((l) => `${l.verdict.padEnd(4)}  ${l.gate.padEnd(g)}  ${l.value.padEnd(v)}  ${l.budget.padEnd(b)}`.trimEnd())
    .join("\n");
}
