import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

const LOCK = "/tmp/edgecascade-bench.lock";

/** The parent pid of `pid`, from /proc (Linux); undefined at the top or where /proc cannot be read. */
function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
    return ppid > 1 ? ppid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether a process above this one already holds the lock (`flock /tmp/edgecascade-bench.lock npm run bench`):
 * taking it again would wait for that process, which waits for this one.
 */
function heldAbove(): boolean {
  for (let pid = parentOf(process.pid); pid !== undefined; pid = parentOf(pid)) {
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      return false;
    }
    if (argv[0]?.endsWith("flock") && argv.includes(LOCK)) return true;
  }
  return false;
}

/**
 * Benchmarks never overlap: the first call re-executes this script under `flock /tmp/edgecascade-bench.lock`
 * and exits with its status; in the re-executed process, under a `flock` of the same file further up, or
 * where flock is missing, it returns at once.
 */
export function holdBenchLock(): void {
  if (process.env.EDGECASCADE_BENCH_LOCKED || heldAbove() || spawnSync("flock", ["--version"]).status !== 0) return;
  const child = spawnSync("flock", [LOCK, process.execPath, ...process.execArgv, ...process.argv.slice(1)], {
    stdio: "inherit",
    env: { ...process.env, EDGECASCADE_BENCH_LOCKED: "1" },
  });
  process.exit(child.status ?? 1);
}
