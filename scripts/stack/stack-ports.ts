import { createServer } from "node:net";
import { UsageError } from "../../tools/cli/errors.ts";
import { LOCAL_REGIONS } from "./local-regions.ts";

/** One port of the local stack: which process listens on it, the flag and variable that set it, its default. */
export interface StackPort {
  /** `edge`, or a region's name. */
  name: string;
  flag: string;
  variable: string;
}

/** The edge's port, then each pool's, with the flag and variable npm start's table reads them from (scripts/start.ts). */
export const STACK_PORTS: readonly StackPort[] = [
  { name: "edge", flag: "edge-port", variable: "EDGE_PORT" },
  ...LOCAL_REGIONS.map((r) => ({ name: r.name, flag: `${r.name}-port`, variable: r.portVar })),
];

/** How a port is set, for messages: `--us-port P (or US_PORT=P)`. */
export const howToSet = (port: StackPort) => `--${port.flag} P (or ${port.variable}=P)`;

/**
 * Each process's port from npm start's values (its flags, else their variables, else the defaults: the command's
 * table reads them), pure; two the same is a UsageError naming both spellings of each: both processes would want it.
 */
export function stackPorts(values: Readonly<Record<string, unknown>>): Record<string, number> {
  const ports: Record<string, number> = {};
  for (const port of STACK_PORTS) {
    const value = values[port.flag] as number;
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
