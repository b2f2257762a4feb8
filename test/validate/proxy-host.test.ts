import { once } from "node:events";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ProxyPlacement, startProxyHost } from "../../scripts/validate/proxy-host.ts";

/** An echo server: what a proxy forwards comes back the same way. */
let echo: Server;
let echoPort: number;

beforeAll(async () => {
  echo = createServer((socket) => socket.pipe(socket));
  echo.listen(0, "127.0.0.1");
  await once(echo, "listening");
  echoPort = (echo.address() as { port: number }).port;
});
afterAll(() => new Promise((resolve) => echo.close(resolve)));

/** Send `text` and resolve with the ms until it has come back, and what came back. */
async function roundTrip(port: number, text: string): Promise<{ ms: number; echoed: string }> {
  const socket: Socket = tcpConnect(port, "127.0.0.1");
  await once(socket, "connect");
  const started = performance.now();
  let echoed = "";
  const done = new Promise<void>((resolve) =>
    socket.on("data", (chunk: Buffer) => {
      echoed += chunk.toString();
      if (echoed.length >= text.length) resolve();
    }),
  );
  socket.write(text);
  await done;
  socket.destroy();
  return { ms: performance.now() - started, echoed };
}

describe.each<ProxyPlacement>(["in-process", "apart"])("delay proxies %s", (placement) => {
  it("start, change delay and mode, count and close as the stack needs them", async () => {
    const host = await startProxyHost(placement);
    try {
      const proxy = await host.start({ target: { host: "127.0.0.1", port: echoPort }, delayMs: 1 });
      expect(await roundTrip(proxy.port, "ping")).toMatchObject({ echoed: "ping" });
      await proxy.setDelay(40);
      expect((await roundTrip(proxy.port, "pong")).ms).toBeGreaterThanOrEqual(79);
      expect(await proxy.stats()).toMatchObject({ connections: 2, bytesForward: 8, bytesBack: 8 });
      // A release each way per round trip at least (a closing connection's end of stream is released too).
      expect((await proxy.releaseLateness()).count).toBeGreaterThanOrEqual(4);
      await proxy.setMode("refuse");
      const refused = tcpConnect(proxy.port, "127.0.0.1");
      const [err] = (await once(refused, "error")) as [NodeJS.ErrnoException];
      expect(err.code).toBe("ECONNRESET");
      await proxy.close();
    } finally {
      await host.stop();
    }
  });
});

describe("delay proxies apart", () => {
  it("names the failure of a call the child process could not do", async () => {
    const host = await startProxyHost("apart");
    try {
      await expect(host.start({ target: { host: "127.0.0.1", port: echoPort }, delayMs: -1 })).rejects.toThrow(
        "delay proxy process: delayMs must be a number >= 0, got -1",
      );
    } finally {
      await host.stop();
    }
  });
});
