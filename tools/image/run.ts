import { spawn } from "node:child_process";

/** How often a silent command is reported as still running. */
const HEARTBEAT_MS = 20_000;

export interface Ran {
  code: number;
  /** stdout and stderr, interleaved as they came. */
  output: string;
}

/**
 * Run a command, its output passed on line by line behind `prefix`, and a "still running" line whenever it
 * has been silent for 20 s (npm ci inside a build, debootstrap's downloads): a long step shows it is alive.
 */
export function runStreaming(
  command: string,
  args: readonly string[],
  how: { prefix: string; cwd?: string; env?: NodeJS.ProcessEnv; print?: (line: string) => void },
): Promise<Ran> {
  const print = how.print ?? ((line: string) => process.stderr.write(`${line}\n`));
  const started = Date.now();
  let output = "";
  let lastLine = "";
  let partial = "";
  const child = spawn(command, args, { cwd: how.cwd, env: how.env ?? process.env, stdio: ["ignore", "pipe", "pipe"] });
  let silentSince = Date.now();
  const heartbeat = setInterval(() => {
    if (Date.now() - silentSince < HEARTBEAT_MS) return;
    const at = lastLine.length > 100 ? `${lastLine.slice(0, 100)}…` : lastLine;
    print(`${how.prefix} … still running (${Math.round((Date.now() - started) / 1000)} s; last: ${at})`);
    silentSince = Date.now();
  }, 1000);
  const take = (chunk: Buffer) => {
    const text = chunk.toString();
    output += text;
    silentSince = Date.now();
    const lines = (partial + text).split("\n");
    partial = lines.pop()!;
    for (const line of lines) {
      if (line.trim()) lastLine = line.trim();
      print(`${how.prefix} ${line}`);
    }
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  return new Promise((resolve, reject) => {
    child.on("error", (err) => {
      clearInterval(heartbeat);
      reject(new Error(`${command}: ${err.message}`));
    });
    child.on("close", (code, signal) => {
      clearInterval(heartbeat);
      if (partial) print(`${how.prefix} ${partial}`);
      resolve({ code: code ?? (signal ? 128 : 1), output });
    });
  });
}
