import { type ChildProcess, spawn } from "node:child_process";
import { descendants, freePort, isRunning } from "./processes.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

export interface LocalStack {
  process: ChildProcess;
  edgeUrl: string;
  /** Everything it printed so far. */
  output(): string;
  /** The stack's process and its children when it became ready. */
  pids: number[];
  /** Ctrl-C, then SIGKILL whatever is left. */
  stop(): Promise<void>;
}

/** `npm start` itself (scripts/start.ts), in its own process group, on free ports; `env` on top. */
export async function startLocalStack(env: Record<string, string> = {}): Promise<LocalStack> {
  const [edgePort, us, eu, ap] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const child = spawn(process.execPath, ["scripts/start.ts"], {
    cwd: ROOT,
    detached: true,
    env: {
      ...process.env,
      EDGE_PORT: String(edgePort),
      US_PORT: String(us),
      EU_PORT: String(eu),
      AP_PORT: String(ap),
      WRANGLER_SEND_METRICS: "false",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d) => {
    output += d;
  });
  child.stderr!.on("data", (d) => {
    output += d;
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (/local stack ready/.test(output)) {
        clearInterval(timer);
        resolve();
      } else if (child.exitCode !== null) {
        clearInterval(timer);
        reject(new Error(`npm start exited early:\n${output}`));
      }
    }, 100);
  });
  const pids = [child.pid!, ...descendants(child.pid!)];
  return {
    process: child,
    edgeUrl: `http://127.0.0.1:${edgePort}`,
    output: () => output,
    pids,
    async stop() {
      if (child.exitCode === null) {
        const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
        process.kill(-child.pid!, "SIGINT");
        await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 20_000))]);
      }
      if (child.exitCode === null) process.kill(-child.pid!, "SIGKILL");
      for (const pid of pids) if (isRunning(pid)) process.kill(pid, "SIGKILL");
    },
  };
}
