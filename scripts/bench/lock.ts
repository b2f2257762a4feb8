import { spawnSync } from "node:child_process";

const LOCK = "/tmp/edgecascade-bench.lock";

/**
 * Benchmarks never overlap: the first call re-executes this script under `flock /tmp/edgecascade-bench.lock`
 * and exits with its status; in the re-executed process (or where flock is missing) it returns at once.
 */
export function holdBenchLock(): void {
  if (process.env.EDGECASCADE_BENCH_LOCKED || spawnSync("flock", ["--version"]).status !== 0) return;
  const child = spawnSync("flock", [LOCK, process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, EDGECASCADE_BENCH_LOCKED: "1" },
  });
  process.exit(child.status ?? 1);
}
