/**
 * The docs' runnable blocks, run as a reader would paste them: in order, in one bash (what one block exports
 * the next one uses), `set -euo pipefail` so that the first failing command stops the run where it failed.
 * Each block's output (stdout and stderr as one stream) is kept apart by a marker line between blocks.
 */
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import type { CodeBlock } from "../../support/markdown-blocks.ts";

/** The marker a block's info string carries when it cannot run on a test machine. */
export const CANNOT_RUN = /^cannot-run-here:\s*(.*)$/;

export interface DocBlock {
  file: string;
  block: CodeBlock;
}

export interface BlockRun {
  where: string;
  output: string;
  /** Wall time from its start to the next block's (or the end). */
  seconds: number;
}

export interface ShellRun {
  /** Each block that started, in order, with what it printed. */
  blocks: BlockRun[];
  /** 0 when every block ran to its end. */
  code: number | null;
  /** Where it stopped, when code is not 0. */
  failedAt: string | undefined;
}

const MARK = "@@docs-run-block";

export async function runBlocks(
  blocks: readonly DocBlock[],
  options: { cwd: string; env: NodeJS.ProcessEnv; scriptDir: string; timeoutMs: number },
): Promise<ShellRun> {
  const where = blocks.map((b) => `${b.file}:${b.block.line} (${b.block.heading})`);
  const script = [
    "set -euo pipefail",
    "exec 2>&1",
    ...blocks.flatMap((b, i) => [`echo "${MARK} ${i} $(date +%s.%N)"`, b.block.text]),
    `echo "${MARK} end $(date +%s.%N)"`,
  ].join("\n");
  const path = join(options.scriptDir, "docs-run.sh");
  writeFileSync(path, script);
  const child = spawn("bash", [path], {
    cwd: options.cwd,
    env: options.env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let output = "";
  child.stdout.on("data", (d) => {
    output += d;
  });
  child.stderr.on("data", (d) => {
    output += d;
  });
  const timer = setTimeout(() => process.kill(-child.pid!, "SIGKILL"), options.timeoutMs);
  const code = await new Promise<number | null>((resolve) => child.on("close", (c) => resolve(c)));
  clearTimeout(timer);
  const parts = output.split(new RegExp(`^${MARK} `, "m")).slice(1);
  const runs: (BlockRun & { at: number })[] = [];
  let ended = false;
  for (const part of parts) {
    const newline = part.indexOf("\n");
    const [index, at] = part.slice(0, newline < 0 ? undefined : newline).split(" ");
    const last = runs.at(-1);
    if (last) last.seconds = Number(at) - last.at;
    if (index === "end") ended = true;
    else
      runs.push({
        where: where[Number(index)]!,
        output: newline < 0 ? "" : part.slice(newline + 1),
        at: Number(at),
        seconds: NaN,
      });
  }
  const ok = code === 0 && ended;
  return {
    blocks: runs.map(({ at: _at, ...r }) => r),
    code: ok ? 0 : (code ?? -1),
    failedAt: ok ? undefined : runs.at(-1)?.where,
  };
}
