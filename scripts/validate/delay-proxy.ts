import { once } from "node:events";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { seededRandom } from "../../protocol/seeded-random.ts";
import { type LatencyStats, latencyStats } from "../../tools/probe/summary.ts";
import { checkDelaySettings, DelayLine, type DelaySettings } from "./delay-line.ts";
import { preciseTimer, startPreciseTimers } from "./precise-timer.ts";

/**
 * What the proxy does with connections:
 * - `pass`: forward both ways through the delay lines;
 * - `refuse`: reset every connection, new and open (a region whose host is down: connection refused);
 * - `blackhole`: accept, then lose every byte both ways (a partition: the caller sees only timeouts);
 * - `http500`: answer every request with `500` and close (a region that fails every call).
 */
export type ProxyMode = "pass" | "refuse" | "blackhole" | "http500";

export interface DelayProxyOptions {
  /** Where connections go (the regional pool). */
  target: { host: string; port: number };
  /** Port on 127.0.0.1. Default 0: a free one. */
  port?: number;
  /** One-way delay each way, in ms. Default 0. */
  delayMs?: number;
  /** Uniform jitter of each chunk's delay, ± ms (order is kept). Default 0. */
  jitterMs?: number;
  /** Seed of the jitter. Default 1. */
  seed?: number;
  /** Default `pass`. */
  mode?: ProxyMode;
}

export interface DelayProxyStats {
  /** Connections accepted and forwarded. */
  connections: number;
  /** Connections reset in `refuse` mode. */
  refused: number;
  /** Requests answered 500 in `http500` mode. */
  failed: number;
  /** Connections whose bytes were lost in `blackhole` mode. */
  blackholed: number;
  bytesForward: number;
  bytesBack: number;
  /**
   * HTTP/1.1 requests forwarded, by method and path (`"GET /v2/health/ready"`): what a region was sent,
   * counted from the request lines of the bytes that passed the proxy.
   */
  requests: Record<string, number>;
  /**
   * The `x-edgecascade-deadline-ms` of the latest requests forwarded (at most `DEADLINES_KEPT`), oldest first:
   * the deadline the edge gave the region, as sent.
   */
  deadlinesMs: number[];
}

export interface DelayProxy {
  /** `http://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Change the one-way delay (and jitter) for every byte that arrives from now on. */
  setDelay(delayMs: number, jitterMs?: number): void;
  delay(): DelaySettings;
  setMode(mode: ProxyMode): void;
  mode(): ProxyMode;
  stats(): DelayProxyStats;
  /**
   * How late the proxy released data against its due time (arrival + delay + jitter), per wake-up, both
   * directions, since the previous call (at most the last 65536): what the proxy added to the distance it
   * simulates. Each call starts a new count.
   */
  releaseLateness(): LatencyStats;
  close(): Promise<void>;
}

/** Queued bytes per direction above which the sending side is paused (TCP's window, roughly). */
const HIGH_WATER = 1 << 20;
const END = Symbol("end");
type Item = Buffer | typeof END;

const FAULT_BODY = JSON.stringify({ error: "injected fault: the region answers 500", code: "internal" });
const FAULT_RESPONSE =
  "HTTP/1.1 500 Internal Server Error\r\ncontent-type: application/json\r\n" +
  `content-length: ${Buffer.byteLength(FAULT_BODY)}\r\nconnection: close\r\n\r\n${FAULT_BODY}`;

/** The last LATE_SAMPLES release delays past due, ms (a ring: memory stays fixed over a long run). */
const LATE_SAMPLES = 1 << 16;
class Lateness {
  readonly #samples = new Float64Array(LATE_SAMPLES);
  #count = 0;

  record(ms: number): void {
    this.#samples[this.#count++ % LATE_SAMPLES] = ms;
  }

  /** The samples since the last call, and a new count. */
  take(): LatencyStats {
    const stats = latencyStats(Array.from(this.#samples.subarray(0, Math.min(this.#count, LATE_SAMPLES))));
    this.#count = 0;
    return stats;
  }
}

/**
 * Moves the bytes of one direction through a DelayLine: one precise timer per direction (precise-timer.ts),
 * armed for the head of the queue, so any number of chunks in flight cost one timer (the pipe keeps the bytes'
 * order; see delay-line.ts).
 */
class DelayedPipe {
  readonly #line = new DelayLine<Item>();
  readonly #from: Socket;
  readonly #to: Socket;
  readonly #settings: () => DelaySettings;
  readonly #random: () => number;
  readonly #count: (chunk: Buffer) => void;
  readonly #late: Lateness;
  readonly #timer = preciseTimer(() => this.#flush());
  #armed = false;
  dropping = false;

  constructor(
    from: Socket,
    to: Socket,
    settings: () => DelaySettings,
    random: () => number,
    count: (chunk: Buffer) => void,
    late: Lateness,
  ) {
    this.#from = from;
    this.#to = to;
    this.#settings = settings;
    this.#random = random;
    this.#count = count;
    this.#late = late;
    from.on("data", (chunk: Buffer) => this.#push(chunk, chunk.length));
    from.on("end", () => this.#push(END, 0));
    to.on("drain", () => this.#relieve());
  }

  #push(item: Item, bytes: number): void {
    if (this.dropping) return;
    this.#line.push(item, bytes, performance.now(), this.#settings(), this.#random());
    if (this.#line.bytes + this.#to.writableLength > HIGH_WATER) this.#from.pause();
    this.#arm();
  }

  #arm(): void {
    const at = this.#line.nextAt();
    if (this.#armed || at === undefined) return;
    this.#armed = true;
    this.#timer.at(at);
  }

  #flush(): void {
    this.#armed = false;
    const now = performance.now();
    const due = this.#line.nextAt();
    if (due !== undefined && due <= now) this.#late.record(now - due);
    for (const item of this.#line.take(now)) {
      if (this.#to.destroyed) break;
      if (item === END) this.#to.end();
      else {
        this.#count(item);
        this.#to.write(item);
      }
    }
    this.#relieve();
    this.#arm();
  }

  #relieve(): void {
    if (this.#line.bytes + this.#to.writableLength <= HIGH_WATER / 2 && this.#from.isPaused()) this.#from.resume();
  }

  /** A partition: what is queued is lost, and so is whatever arrives from now on. */
  drop(): void {
    this.dropping = true;
    this.#line.clear();
  }

  stop(): void {
    this.#timer.cancel();
    this.#armed = false;
    this.#line.clear();
  }
}

const REQUEST_LINE = /(GET|HEAD|POST|PUT|DELETE|OPTIONS|PATCH) (\S+) HTTP\/1\.1\r\n/g;
const DEADLINE_LINE = /\r\nx-edgecascade-deadline-ms: *(\d+)\r\n/gi;
/** Longer than any request or header line the tests send, so that a line split between two chunks is still seen. */
const TAIL = 256;
/** Deadlines kept in `DelayProxyStats.deadlinesMs`. */
const DEADLINES_KEPT = 100;

/** Counts the request lines in one connection's forwarded bytes and keeps their deadlines (a line may span two chunks). */
class RequestLines {
  readonly #stats: Pick<DelayProxyStats, "requests" | "deadlinesMs">;
  #tail = "";

  constructor(stats: Pick<DelayProxyStats, "requests" | "deadlinesMs">) {
    this.#stats = stats;
  }

  see(chunk: Buffer): void {
    const text = this.#tail + chunk.toString("latin1");
    // A line wholly inside the tail was seen with the previous chunk.
    const seen = (match: RegExpExecArray) => match.index + match[0].length <= this.#tail.length;
    for (const match of text.matchAll(REQUEST_LINE)) {
      if (seen(match)) continue;
      const key = `${match[1]} ${match[2]}`;
      this.#stats.requests[key] = (this.#stats.requests[key] ?? 0) + 1;
    }
    for (const match of text.matchAll(DEADLINE_LINE)) {
      if (seen(match)) continue;
      this.#stats.deadlinesMs.push(Number(match[1]));
      if (this.#stats.deadlinesMs.length > DEADLINES_KEPT) this.#stats.deadlinesMs.shift();
    }
    this.#tail = text.slice(-TAIL);
  }
}

/** One client connection and its connection to the target, through two delayed pipes. */
class ProxiedConnection {
  readonly client: Socket;
  readonly upstream: Socket;
  readonly #pipes: DelayedPipe[];

  constructor(client: Socket, target: DelayProxyOptions["target"], proxy: ProxyState, onClose: () => void) {
    this.client = client;
    this.upstream = tcpConnect({ port: target.port, host: target.host, allowHalfOpen: true });
    this.upstream.setNoDelay(true);
    const settings = () => proxy.settings;
    const requestLines = new RequestLines(proxy.stats);
    this.#pipes = [
      new DelayedPipe(
        client,
        this.upstream,
        settings,
        proxy.random,
        (chunk) => {
          proxy.stats.bytesForward += chunk.length;
          requestLines.see(chunk);
        },
        proxy.late,
      ),
      new DelayedPipe(
        this.upstream,
        client,
        settings,
        proxy.random,
        (chunk) => {
          proxy.stats.bytesBack += chunk.length;
        },
        proxy.late,
      ),
    ];
    // A failure on one side reaches the other after the one-way delay, as a reset would; until then bytes
    // already in flight still arrive.
    const relay = (to: Socket) => () => {
      if (this.#pipes.some((p) => p.dropping)) return;
      setTimeout(() => to.resetAndDestroy(), proxy.settings.delayMs);
    };
    this.upstream.on("error", relay(client));
    client.on("error", relay(this.upstream));
    client.on("close", () => {
      for (const p of this.#pipes) p.stop();
      this.upstream.destroy();
      onClose();
    });
  }

  blackhole(): void {
    for (const p of this.#pipes) p.drop();
  }

  destroy(): void {
    for (const p of this.#pipes) p.stop();
    this.client.resetAndDestroy();
    this.upstream.destroy();
  }
}

interface ProxyState {
  settings: DelaySettings;
  random: () => number;
  stats: DelayProxyStats;
  late: Lateness;
}

/** Answer every request on the socket with a 500 (after one round trip) and close; the request is read first. */
function answerWithFault(client: Socket, proxy: ProxyState): void {
  let seen = Buffer.alloc(0);
  client.on("error", () => client.destroy());
  client.on("data", (chunk: Buffer) => {
    seen = Buffer.concat([seen, chunk]);
    const headEnd = seen.indexOf("\r\n\r\n");
    if (headEnd < 0) return;
    const length = Number(/\r\ncontent-length:\s*(\d+)/i.exec(seen.subarray(0, headEnd).toString("latin1"))?.[1] ?? 0);
    if (seen.length < headEnd + 4 + length) return;
    client.removeAllListeners("data");
    proxy.stats.failed++;
    setTimeout(() => client.end(FAULT_RESPONSE), 2 * proxy.settings.delayMs);
  });
}

/**
 * A TCP proxy in front of one region that puts network distance (and faults) between the edge and it:
 * `tc netem` is not available on this kernel, so the delay is applied in user space, per direction, to every
 * chunk as it arrives (delay-line.ts). The delay, jitter and mode can change while connections are open.
 */
export async function startDelayProxy(options: DelayProxyOptions): Promise<DelayProxy> {
  const state: ProxyState = {
    settings: checkDelaySettings({ delayMs: options.delayMs ?? 0, jitterMs: options.jitterMs ?? 0 }),
    random: seededRandom(options.seed ?? 1),
    stats: {
      connections: 0,
      refused: 0,
      failed: 0,
      blackholed: 0,
      bytesForward: 0,
      bytesBack: 0,
      requests: {},
      deadlinesMs: [],
    },
    late: new Lateness(),
  };
  let mode: ProxyMode = options.mode ?? "pass";
  const open = new Set<ProxiedConnection>();
  const faulted = new Set<Socket>();

  // Half-open sockets: each side's end of stream travels through its delay line like any other byte.
  const server: Server = createServer({ noDelay: true, allowHalfOpen: true }, (client) => {
    if (mode === "refuse") {
      state.stats.refused++;
      client.resetAndDestroy();
      return;
    }
    if (mode === "http500") {
      faulted.add(client);
      client.on("close", () => faulted.delete(client));
      answerWithFault(client, state);
      return;
    }
    const connection = new ProxiedConnection(client, options.target, state, () => open.delete(connection));
    open.add(connection);
    state.stats.connections++;
    if (mode === "blackhole") {
      state.stats.blackholed++;
      connection.blackhole();
    }
  });
  server.listen(options.port ?? 0, "127.0.0.1");
  await Promise.all([once(server, "listening"), startPreciseTimers()]);
  const port = (server.address() as { port: number }).port;

  return {
    url: `http://127.0.0.1:${port}`,
    port,
    setDelay(delayMs, jitterMs = state.settings.jitterMs) {
      state.settings = checkDelaySettings({ delayMs, jitterMs });
    },
    delay: () => ({ ...state.settings }),
    setMode(next) {
      if (next === mode) return;
      // Connections that lost bytes to a partition are broken for good; refusing and failing hosts drop theirs.
      if (next !== "blackhole" || mode !== "pass") for (const c of open) c.destroy();
      else
        for (const c of open) {
          state.stats.blackholed++;
          c.blackhole();
        }
      for (const s of faulted) s.destroy();
      mode = next;
    },
    mode: () => mode,
    stats: () => ({ ...state.stats, requests: { ...state.stats.requests }, deadlinesMs: [...state.stats.deadlinesMs] }),
    releaseLateness: () => state.late.take(),
    async close() {
      for (const c of open) c.destroy();
      for (const s of faulted) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
