import { createServer } from "node:net";
import { describe, expect, it } from "vitest";
import { busyPorts, stackPorts } from "./stack-ports.ts";

describe("stackPorts", () => {
  it("takes each port from its flag, else its variable, else its default", () => {
    expect(stackPorts({}, {})).toEqual({ edge: 8787, us: 9001, eu: 9002, ap: 9003 });
    expect(stackPorts({ "edge-port": 8080, "ap-port": 9100 }, { EDGE_PORT: "7000", US_PORT: "9200" })).toEqual({
      edge: 8080,
      us: 9200,
      eu: 9002,
      ap: 9100,
    });
  });

  it("names the variable of a value that is no port, and both spellings of a clash", () => {
    expect(() => stackPorts({}, { EU_PORT: "90o2" })).toThrow(
      'EU_PORT must be a port number from 1 to 65535, got "90o2"',
    );
    expect(() => stackPorts({ "edge-port": 9001 }, {})).toThrow(
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
  it("--port, which it does not have, names the ones it has", async () => {
    const { execFileSync } = await import("node:child_process");
    const run = () =>
      execFileSync(process.execPath, ["scripts/start.ts", "--port", "8788"], {
        cwd: new URL("../../", import.meta.url).pathname,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      });
    expect(run).toThrow(/unknown flag --port; did you mean --edge-port, --us-port, --eu-port or --ap-port\?/);
  });
});
