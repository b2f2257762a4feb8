import { argmax, type HeldoutRow } from "../../protocol/heldout.ts";

/** One held-out row sent through the edge: who answered and with which class. */
export interface ShareAnswer {
  row: HeldoutRow;
  /** `x-served-by`: cache, edge, regional:<name>, degraded (null for a failed request). */
  servedBy: string | null;
  /** `x-edgecascade-degraded`, when degraded. */
  degraded?: string | null;
  /** The answered class (null for a failed request). */
  answered: number | null;
}

export interface ShareSummary {
  rows: number;
  /** Answers by tier: cache, edge, regional (every region together), degraded, failed. */
  tiers: Record<"cache" | "edge" | "regional" | "degraded" | "failed", number>;
  /** Degraded answers by reason. */
  degradedReasons: Record<string, number>;
  /** Share of rows answered by a region. */
  regionalShare: number;
  /** Share of rows whose answer is the full model's class (the cascade's agreement with the full model alone). */
  agreement: number;
  /** Share of rows whose answer is the row's true label. */
  accuracy: number;
}

const round = (x: number) => Math.round(x * 10_000) / 10_000;

/**
 * What the edge did with a held-out set: its regional share, and how often the cascade agreed with `model`
 * (the full model) and with the true labels. Pure.
 */
export function shareSummary(answers: readonly ShareAnswer[], model: string): ShareSummary {
  const tiers = { cache: 0, edge: 0, regional: 0, degraded: 0, failed: 0 };
  const degradedReasons: Record<string, number> = {};
  let agree = 0;
  let correct = 0;
  for (const a of answers) {
    const tier = a.servedBy?.startsWith("regional:") ? "regional" : (a.servedBy ?? "failed");
    if (!(tier in tiers) || a.answered === null) tiers.failed++;
    else tiers[tier as keyof typeof tiers]++;
    if (tier === "degraded")
      degradedReasons[a.degraded ?? "unknown"] = (degradedReasons[a.degraded ?? "unknown"] ?? 0) + 1;
    const full = a.row.expected[model];
    if (!full) throw new Error(`held-out row has no expected output for ${model}`);
    if (a.answered === argmax(full)) agree++;
    if (a.answered === a.row.label) correct++;
  }
  const n = answers.length || 1;
  return {
    rows: answers.length,
    tiers,
    degradedReasons,
    regionalShare: round(tiers.regional / n),
    agreement: round(agree / n),
    accuracy: round(correct / n),
  };
}
