import { readFileSync } from "node:fs";

/** Resident set size in bytes from the text of `/proc/<pid>/status` (its `VmRSS:` line, in kB). */
export function rssFromStatus(status: string): number | undefined {
  const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  return kb === undefined ? undefined : Number(kb) * 1024;
}

/** Samples the resident memory of processes every `everyMs` and keeps each one's peak (Linux /proc). */
export class RssSampler {
  readonly #pids: number[];
  readonly #timer: ReturnType<typeof setInterval>;
  readonly peak = new Map<number, number>();

  constructor(pids: number[], everyMs = 100) {
    this.#pids = pids;
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), everyMs);
    this.#timer.unref();
  }

  #sample(): void {
    for (const pid of this.#pids) {
      let rss: number | undefined;
      try {
        rss = rssFromStatus(readFileSync(`/proc/${pid}/status`, "utf8"));
      } catch {
        continue; // The process has exited.
      }
      if (rss !== undefined) this.peak.set(pid, Math.max(this.peak.get(pid) ?? 0, rss));
    }
  }

  /** Stop sampling; the sum of each process's peak (an upper bound of their peak together), in bytes. */
  stop(): number {
    clearInterval(this.#timer);
    this.#sample();
    return [...this.peak.values()].reduce((a, b) => a + b, 0);
  }
}
