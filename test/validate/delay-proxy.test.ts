import { once } from "node:events";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { request } from "undici";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type DelayProxy, startDelayProxy } from "../../scripts/validate/delay-proxy.ts";

/** An echo server: what the proxy forwards comes back the same way. */
let echo: Server;
let echoPort: number;
const proxies: DelayProxy[] = [];

beforeAll(async () => {
  echo = createServer((socket) => socket.pipe(socket));
  echo.listen(0, "127.0.0.1");
  await once(echo, "listening");
  echoPort = (echo.address() as { port: number }).port;
});
afterEach(async () => {
  await Promise.all(proxies.splice(0).map((p) => p.close()));
});
afterAll(() => new Promise((resolve) => echo.close(resolve)));

const proxy = async (options: Partial<Parameters<typeof startDelayProxy>[0]> = {}) => {
  const p = await startDelayProxy({ target: { host: "127.0.0.1", port: echoPort }, ...options });
  proxies.push(p);
  return p;
};

const open = async (port: number): Promise<Socket> => {
  const socket = tcpConnect(port, "127.0.0.1");
  await once(socket, "connect");
  return socket;
};

/** Send `payload` and resolve with the ms until all of it has come back. */
async function roundTrip(socket: Socket, payload: Buffer): Promise<{ ms: number; echoed: Buffer }> {
  const started = performance.now();
  const parts: Buffer[] = [];
  let got = 0;
  const done = new Promise<void>((resolve) => {
    const onData = (chunk: Buffer) => {
      parts.push(chunk);
      got += chunk.length;
      if (got >= payload.length) {
        socket.off("data", onData);
        resolve();
      }
    };
    socket.on("data", onData);
  });
  socket.write(payload);
  await done;
  return { ms: performance.now() - started, echoed: Buffer.concat(parts) };
}

describe("delay proxy", () => {
  it("delays each direction by the one-way delay: a round trip takes at least twice it", async () => {
    const p = await proxy({ delayMs: 30 });
    const socket = await open(p.port);
    const { ms, echoed } = await roundTrip(socket, Buffer.from("ping"));
    expect(echoed.toString()).toBe("ping");
    expect(ms).toBeGreaterThanOrEqual(59);
    expect(p.stats()).toMatchObject({ connections: 1, bytesForward: 4, bytesBack: 4 });
    // One release each way, each at or after its due time; the next call counts from there.
    const late = p.releaseLateness();
    expect(late.count).toBe(2);
    expect(Math.min(late.p50Ms, late.maxMs)).toBeGreaterThanOrEqual(0);
    expect(p.releaseLateness().count).toBe(0);
    socket.destroy();
  });

  it("counts the HTTP request lines it forwards, a line split between two writes included", async () => {
    const p = await proxy();
    const socket = await open(p.port);
    const get = "GET /v2/health/ready HTTP/1.1\r\nhost: x\r\n\r\n";
    const post = "POST /v1/classify HTTP/1.1\r\ncontent-length: 2\r\n\r\n{}";
    await roundTrip(socket, Buffer.from(get + get));
    await roundTrip(socket, Buffer.from(post.slice(0, 9)));
    await roundTrip(socket, Buffer.from(post.slice(9)));
    expect(p.stats().requests).toEqual({ "GET /v2/health/ready": 2, "POST /v1/classify": 1 });
    socket.destroy();
  });

  it("keeps the deadline each request carried, a header line split between two writes included", async () => {
    const p = await proxy();
    const socket = await open(p.port);
    const post = (ms: string) =>
      `POST /v1/classify HTTP/1.1\r\nX-Edgecascade-Deadline-Ms: ${ms}\r\ncontent-length: 2\r\n\r\n{}`;
    await roundTrip(socket, Buffer.from(post("8") + post("350")));
    const split = post("7");
    await roundTrip(socket, Buffer.from(split.slice(0, 40)));
    await roundTrip(socket, Buffer.from(split.slice(40)));
    await roundTrip(socket, Buffer.from("GET /v2/health/ready HTTP/1.1\r\nhost: x\r\n\r\n"));
    expect(p.stats().deadlinesMs).toEqual([8, 350, 7]);
    socket.destroy();
  });

  it("keeps every byte in order through jitter and a delay lowered mid-stream", async () => {
    const p = await proxy({ delayMs: 20, jitterMs: 15, seed: 7 });
    const socket = await open(p.port);
    const payload = Buffer.alloc(2 << 20);
    for (let i = 0; i < payload.length; i++) payload[i] = (i * 7919) % 251;
    const parts: Buffer[] = [];
    let got = 0;
    const done = new Promise<void>((resolve) =>
      socket.on("data", (chunk: Buffer) => {
        parts.push(chunk);
        got += chunk.length;
        if (got >= payload.length) resolve();
      }),
    );
    // Written in small pieces over time, the delay dropping to 0 half way: later chunks must not overtake.
    for (let off = 0; off < payload.length; off += 64 * 1024) {
      socket.write(payload.subarray(off, off + 64 * 1024));
      if (off === payload.length / 2) p.setDelay(0, 0);
      await new Promise((r) => setImmediate(r));
    }
    await done;
    expect(Buffer.concat(parts).equals(payload)).toBe(true);
    socket.destroy();
  });

  it("applies a delay raised while the connection is open to what is sent next", async () => {
    const p = await proxy({ delayMs: 1 });
    const socket = await open(p.port);
    await roundTrip(socket, Buffer.from("a"));
    p.setDelay(50);
    expect(p.delay()).toEqual({ delayMs: 50, jitterMs: 0 });
    expect((await roundTrip(socket, Buffer.from("b"))).ms).toBeGreaterThanOrEqual(99);
    socket.destroy();
  });

  it("refuse: open and new connections are reset", async () => {
    const p = await proxy();
    const before = await open(p.port);
    before.on("error", () => {});
    const reset = new Promise((resolve) => before.on("close", resolve));
    p.setMode("refuse");
    await reset;
    const socket = tcpConnect(p.port, "127.0.0.1");
    const [err] = (await once(socket, "error")) as [NodeJS.ErrnoException];
    expect(err.code).toBe("ECONNRESET");
    expect(p.stats().refused).toBe(1);
  });

  it("blackhole: bytes are lost both ways until the partition heals; then new connections pass again", async () => {
    const p = await proxy({ delayMs: 1 });
    const socket = await open(p.port);
    socket.on("error", () => {});
    p.setMode("blackhole");
    let answered = false;
    socket.on("data", () => {
      answered = true;
    });
    socket.write("lost");
    await new Promise((r) => setTimeout(r, 200));
    expect(answered).toBe(false);
    expect(p.stats().blackholed).toBe(1);
    p.setMode("pass");
    const fresh = await open(p.port);
    expect((await roundTrip(fresh, Buffer.from("back"))).echoed.toString()).toBe("back");
    fresh.destroy();
  });

  it("http500: every request gets a JSON 500 after one round trip", async () => {
    const p = await proxy({ delayMs: 10, mode: "http500" });
    const started = performance.now();
    const res = await request(`${p.url}/v1/classify`, { method: "POST", body: JSON.stringify({ a: 1 }) });
    expect(res.statusCode).toBe(500);
    expect(await res.body.json()).toMatchObject({ code: "internal" });
    expect(performance.now() - started).toBeGreaterThanOrEqual(19);
    expect(p.stats().failed).toBe(1);
  });

  it("refuses negative delays, naming the field", async () => {
    const p = await proxy();
    expect(() => p.setDelay(-5)).toThrow("delayMs must be a number >= 0, got -5");
  });
});
