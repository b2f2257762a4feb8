import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { busyPorts, stackPorts } from "./stack-ports.ts";

/** scripts/start.ts imports Miniflare and wrangler before it reads its flags: about 1.5 s quiet, more on a busy machine. */
const SPAWN_TIMEOUT_MS = 30_000;

describe("stackPorts", () => {
  it("takes each process's port from npm start's values", () => {
    const values = { "edge-port": 8080, "us-port": 9001, "eu-port": 9002, "ap-port": 9100, "simulate-platform": false };
    expect(stackPorts(values)).toEqual({ edge: 8080, us: 9001, eu: 9002, ap: 9100 });
  });

  it("refuses two the same, naming both spellings of each", () => {
    expect(() => stackPorts({ "edge-port": 9001, "us-port": 9001, "eu-port": 9002, "ap-port": 9003 })).toThrow(
      "the edge and us ports are both 9001: set one with --edge-port P (or EDGE_PORT=P) or --us-port P (or US_PORT=P)",
    );
  });
});

describe("busyPorts", () => {
  it("names the flag and variable of a port something listens on", async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const taken = (server.address() as { port: number }).port;
    try {
      const busy = await busyPorts({ edge: taken, us: 0, eu: 0, ap: 0 });
      expect(busy).toEqual([`port ${taken} (the edge) is in use; choose another with --edge-port P (or EDGE_PORT=P)`]);
    } finally {
      server.close();
    }
  });
});

describe("npm start's flags", () => {
  const start = async (args: string[], env: Record<string, string> = {}) => {
    const { execFileSync } = await import("node:child_process");
    return () =>
      execFileSync(process.execPath, ["scripts/start.ts", ...args], {
        cwd: new URL("../../", import.meta.url).pathname,
        encoding: "utf8",
        env: { ...process.env, ...env },
        stdio: ["ignore", "pipe", "pipe"],
      });
  };

  it(
    "a variable that is no port is named with its flag",
    async () => {
      expect(await start([], { EU_PORT: "90o2" })).toThrow(
        /--eu-port \(EU_PORT\) must be an integer from 1 to 65535, got "90o2"/,
      );
    },
    SPAWN_TIMEOUT_MS,
  );

  it(
    "--port, which it does not have, names the ones it has",
    async () => {
      const { execFileSync } = await import("node:child_process");
      const run = () =>
        execFileSync(process.execPath, ["scripts/start.ts", "--port", "8788"], {
          cwd: new URL("../../", import.meta.url).pathname,
          encoding: "utf8",
          stdio: ["ignore", "pipe", "pipe"],
        });
      expect(run).toThrow(/unknown flag --port; did you mean --edge-port, --us-port, --eu-port or --ap-port\?/);
    },
    SPAWN_TIMEOUT_MS,
  );
});
