import { type ChildProcess, spawn } from "node:child_process";
import { descendants, freePort, isRunning } from "./processes.ts";

const ROOT = new URL("../../", import.meta.url).pathname;

export interface LocalStack {
  /** `node scripts/start.ts`, or with `viaNpm` the npm process that runs it. */
  process: ChildProcess;
  edgeUrl: string;
  /** The pools' URLs, us, eu, ap. */
  poolUrls: string[];
  /** Everything it printed so far. */
  output(): string;
  /** The stack's process and its children when it became ready. */
  pids: number[];
  /** Ctrl-C, then SIGKILL whatever is left. */
  stop(): Promise<void>;
}

/**
 * `npm start` itself (scripts/start.ts), in its own process group, on free ports; `env` on top. With `viaNpm`, as a
 * person runs it: `npm start -- --edge-port P --us-port P ...` (the ports as flags), `process` being npm's; else
 * `node scripts/start.ts` with the ports in EDGE_PORT, US_PORT, EU_PORT, AP_PORT.
 */
export async function startLocalStack(
  env: Record<string, string> = {},
  options: { viaNpm?: boolean } = {},
): Promise<LocalStack> {
  const [edgePort, us, eu, ap] = await Promise.all([freePort(), freePort(), freePort(), freePort()]);
  const ports = { edge: edgePort, us, eu, ap };
  const flags = Object.entries(ports).flatMap(([name, port]) => [`--${name}-port`, String(port)]);
  const portVars = Object.fromEntries(
    Object.entries(ports).map(([name, port]) => [`${name.toUpperCase()}_PORT`, String(port)]),
  );
  const [command, args] = options.viaNpm
    ? ["npm", ["start", "--", ...flags]]
    : [process.execPath, ["scripts/start.ts"]];
  const child = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    env: {
      ...process.env,
      ...(options.viaNpm ? {} : portVars),
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
    poolUrls: [us, eu, ap].map((port) => `http://127.0.0.1:${port}`),
    output: () => output,
    pids,
    async stop() {
      const running = () => child.exitCode === null && child.signalCode === null;
      /** A signal to the stack's process group; gone already (its leader ended by a signal of a test): nothing. */
      const signalGroup = (signal: NodeJS.Signals) => {
        try {
          process.kill(-child.pid!, signal);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "ESRCH") throw err;
        }
      };
      if (running()) {
        const closed = new Promise<void>((resolve) => child.once("close", () => resolve()));
        signalGroup("SIGINT");
        await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, 20_000))]);
      }
      if (running()) signalGroup("SIGKILL");
      for (const pid of pids) if (isRunning(pid)) process.kill(pid, "SIGKILL");
    },
  };
}
