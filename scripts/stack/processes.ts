import { readdirSync, readFileSync } from "node:fs";

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
