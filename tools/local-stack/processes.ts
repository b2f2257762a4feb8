import { readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:net";

/** Parent pid of every live process, from /proc (Linux). */
function parents(): Map<number, number> {
  const out = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // Field 4 of /proc/<pid>/stat is the parent pid; field 2, the command, is in parentheses (and may hold spaces).
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      out.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

/** Pids whose parent is `pid`. */
export function childPids(pid: number): number[] {
  return [...parents()].flatMap(([child, parent]) => (parent === pid ? [child] : []));
}

/** Every descendant of `pid` alive now (children, their children, ...). */
export function descendants(pid: number): number[] {
  const tree = [...parents()];
  const found: number[] = [];
  for (let queue = [pid]; queue.length; ) {
    const p = queue.shift()!;
    for (const [child, parent] of tree) {
      if (parent === p) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A TCP port free on 127.0.0.1 right now. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
