import { createServer } from "node:net";
import { UsageError } from "../../tools/cli/errors.ts";
import { LOCAL_REGIONS } from "./local-regions.ts";

/** One port of the local stack: which process listens on it, the flag and variable that set it, its default. */
export interface StackPort {
  /** `edge`, or a region's name. */
  name: string;
  flag: string;
  variable: string;
  fallback: number;
}

/** The edge's port, then each pool's: `--edge-port`/EDGE_PORT 8787, `--us-port`/US_PORT 9001, ... */
export const STACK_PORTS: readonly StackPort[] = [
  { name: "edge", flag: "edge-port", variable: "EDGE_PORT", fallback: 8787 },
  ...LOCAL_REGIONS.map((r) => ({ name: r.name, flag: `${r.name}-port`, variable: r.portVar, fallback: r.port })),
];

/** How a port is set, for messages: `--us-port P (or US_PORT=P)`. */
export const howToSet = (port: StackPort) => `--${port.flag} P (or ${port.variable}=P)`;

/**
 * Each port of the stack (pure): its flag's value, else its variable's, else its default; a value that is no port
 * is a UsageError naming both spellings. Two of them the same is refused too: both processes would want it.
 */
export function stackPorts(
  flags: Readonly<Record<string, number | undefined>>,
  env: Readonly<Record<string, string | undefined>>,
): Record<string, number> {
  const ports: Record<string, number> = {};
  for (const port of STACK_PORTS) {
    const fromFlag = flags[port.flag];
    const raw = env[port.variable];
    let value = port.fallback;
    if (fromFlag !== undefined) value = fromFlag;
    else if (raw !== undefined && raw !== "") {
      value = Number(raw);
      if (!Number.isInteger(value) || value < 1 || value > 65535) {
        throw new UsageError(`${port.variable} must be a port number from 1 to 65535, got ${JSON.stringify(raw)}`);
      }
    }
    const clash = STACK_PORTS.find((other) => ports[other.name] === value);
    if (clash) {
      throw new UsageError(
        `the ${clash.name} and ${port.name} ports are both ${value}: set one with ${howToSet(clash)} or ${howToSet(port)}`,
      );
    }
    ports[port.name] = value;
  }
  return ports;
}

/** Whether something already listens on 127.0.0.1:`port`. */
async function inUse(port: number): Promise<boolean> {
  const server = createServer();
  return new Promise((resolve) => {
    server.once("error", (err: NodeJS.ErrnoException) => resolve(err.code === "EADDRINUSE"));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(false)));
  });
}

/**
 * The stack's ports that are taken now, each as a sentence naming the flag and variable that move it; empty when
 * all are free. Checked before anything starts, so that a second `npm start` says so instead of half-starting.
 */
export async function busyPorts(ports: Readonly<Record<string, number>>): Promise<string[]> {
  const busy: string[] = [];
  for (const port of STACK_PORTS) {
    const value = ports[port.name]!;
    if (await inUse(value)) {
      busy.push(
        `port ${value} (${port.name === "edge" ? "the edge" : `the ${port.name} pool`}) is in use; choose another with ${howToSet(port)}`,
      );
    }
  }
  return busy;
}
