import { spawnSync } from "node:child_process";

/** Whether `command` is on PATH. */
export function onPath(command: string): boolean {
  return spawnSync("/bin/sh", ["-c", `command -v ${command}`], { stdio: "ignore" }).status === 0;
}
