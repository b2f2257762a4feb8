import { execFileSync } from "node:child_process";
import { availableParallelism, cpus, loadavg, totalmem } from "node:os";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** Where and when a run happened, for the committed results. */
export function runInfo(command: string) {
  let git = "unknown";
  try {
    git = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT }).toString().trim();
  } catch {
    // Not a git checkout (a production copy): the results say so.
  }
  return {
    command,
    date: new Date().toISOString(),
    git,
    machine: {
      cpu: cpus()[0]?.model ?? "unknown",
      cores: availableParallelism(),
      memoryGiB: Math.round(totalmem() / 2 ** 30),
      loadAverageAtStart: loadavg().map((l) => Math.round(l * 100) / 100),
      node: process.version,
    },
  };
}

export type RunInfo = ReturnType<typeof runInfo>;

/** The Markdown line every result file starts with. */
export const runLine = (info: RunInfo) =>
  `\`${info.command}\`, ${info.date}, git ${info.git}. Machine: ${info.machine.cpu}, ${info.machine.cores} cores ` +
  `(load average ${info.machine.loadAverageAtStart.join(" / ")} at start), Node ${info.machine.node}.`;
