import type { GateRow } from "./gates.ts";

/** What `check` writes into `versions[v].gates` of config.json (pools read `sha256` and `passed`). */
export interface GatesRecordJson {
  sha256: string;
  passed: boolean;
  /** The served version the candidate was compared with. */
  against: string;
  checkedAt: string;
  results: Record<string, { measured: string; budget: string; passed: boolean }>;
}

export function gatesRecord(rows: readonly GateRow[], sha256: string, against: string, now: Date): GatesRecordJson {
  return {
    sha256,
    passed: rows.every((r) => r.passed),
    against,
    checkedAt: now.toISOString(),
    results: Object.fromEntries(rows.map((r) => [r.gate, { measured: r.value, budget: r.budget, passed: r.passed }])),
  };
}

/** A raw config.json with `record` as the gates of `version`; everything else as it was. */
export function withGatesRecord(
  raw: { versions: Record<string, Record<string, unknown>> },
  version: string,
  record: GatesRecordJson,
): typeof raw {
  return { ...raw, versions: { ...raw.versions, [version]: { ...raw.versions[version], gates: record } } };
}
