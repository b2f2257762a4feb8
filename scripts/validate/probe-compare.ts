import { quantileOrZero } from "../../tools/probe/summary.ts";

/**
 * hey's arguments for the load the probe sends with `--mix hot --hot-rows 1`: one worker (`-q` is per worker)
 * at `rate`, the same POST body. `-disable-compression`: the probe sends no Accept-Encoding, and with Go's
 * default `Accept-Encoding: gzip` workerd gzips and chunks every answer, which is work the probe's requests
 * never ask for. `-o csv`: every request's own time, not the summary's rounded percentiles.
 */
export function heyArgs(options: { url: string; rate: number; durationS: number; body: string }): string[] {
  const { url, rate, durationS, body } = options;
  return [
    ...["-z", `${durationS}s`, "-q", String(rate), "-c", "1"],
    ...["-m", "POST", "-T", "application/json", "-d", body],
    ...["-disable-compression", "-o", "csv", `${url}/v1/classify`],
  ];
}

export interface HeyRun {
  /** Each 200's response time, ms (hey writes seconds to four places: 0.1 ms steps). */
  latencyMs: number[];
  /** Requests per status code ("0" when no answer came). */
  statuses: Record<string, number>;
}

/** hey's `-o csv`: a header line, then response-time (s), DNS+dialup, DNS, request-write, response-delay, response-read, status-code, offset. */
export function parseHeyCsv(csv: string): HeyRun {
  const latencyMs: number[] = [];
  const statuses: Record<string, number> = {};
  for (const line of csv.split("\n").slice(1)) {
    const fields = line.split(",");
    if (fields.length < 7) continue;
    const status = fields[6]!.trim();
    statuses[status] = (statuses[status] ?? 0) + 1;
    if (status === "200") latencyMs.push(Number(fields[0]) * 1000);
  }
  return { latencyMs, statuses };
}

/** p50 (nearest rank, as the probe's summary), rounded to µs. */
export function p50(values: readonly number[]): number {
  return (
    Math.round(
      quantileOrZero(
        [...values].sort((a, b) => a - b),
        0.5,
      ) * 1000,
    ) / 1000
  );
}

/** One round's p50s, in ms: hey and the probe on the same stack, and each against a no-op server. */
export interface RoundP50s {
  heyMs: number;
  probeMs: number;
  probeFloorMs: number;
  heyFloorMs: number;
}

export interface ComparedRound extends RoundP50s {
  /** probe − hey on the stack. */
  differenceMs: number;
  /** probe floor − hey floor (the no-op server: the clients alone). */
  floorDifferenceMs: number;
  within: boolean;
}

export interface Comparison {
  toleranceMs: number;
  rounds: ComparedRound[];
  /** Each column's median over the rounds, the differences being the medians of the rounds' own differences. */
  median: Omit<ComparedRound, "within">;
  roundsWithin: number;
  /** The median difference is within the tolerance, either way. */
  holds: boolean;
}

const median = (values: readonly number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length / 2;
  const value = sorted.length % 2 ? sorted[Math.floor(mid)]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  return Math.round(value * 1000) / 1000;
};

/** Compare the rounds: each one's difference, and whether the median difference is within `toleranceMs`. */
export function compareRounds(rounds: readonly RoundP50s[], toleranceMs: number): Comparison {
  if (rounds.length === 0) throw new Error("no rounds to compare");
  const compared = rounds.map((r) => {
    const differenceMs = Math.round((r.probeMs - r.heyMs) * 1000) / 1000;
    const floorDifferenceMs = Math.round((r.probeFloorMs - r.heyFloorMs) * 1000) / 1000;
    return { ...r, differenceMs, floorDifferenceMs, within: Math.abs(differenceMs) <= toleranceMs };
  });
  const of = (key: keyof Omit<ComparedRound, "within">) => median(compared.map((r) => r[key]));
  const med = {
    heyMs: of("heyMs"),
    probeMs: of("probeMs"),
    probeFloorMs: of("probeFloorMs"),
    heyFloorMs: of("heyFloorMs"),
    differenceMs: of("differenceMs"),
    floorDifferenceMs: of("floorDifferenceMs"),
  };
  return {
    toleranceMs,
    rounds: compared,
    median: med,
    roundsWithin: compared.filter((r) => r.within).length,
    holds: Math.abs(med.differenceMs) <= toleranceMs,
  };
}
