import { connect, type Socket } from "node:net";
import { SERVED_BY_HEADER } from "../../protocol/headers.ts";
import { argmax } from "../../protocol/heldout.ts";
import { signatureHeaders } from "../../protocol/signing.ts";
import { LoadClient, runClosedLoop } from "../../tools/probe/load.ts";
import { type Auth, fuzzCase, type HostileCase, rng, type Target } from "./hostile.ts";
import type { ValidationModel } from "./model.ts";

/** Who is fuzzed, and the credentials a valid request carries there. */
export interface FuzzTarget {
  name: Target;
  /** `http://127.0.0.1:<port>` */
  origin: string;
  model: ValidationModel;
  /** Pools: the shared secret valid requests are signed with. */
  secret?: string;
  /** Edge: an accepted API key. */
  apiKey?: string;
}

export interface FuzzOptions {
  /** Requests in all (valid ones included). */
  requests: number;
  seed: number;
  /** Requests in flight on the shared keep-alive connections. Default 16. */
  concurrency?: number;
  /** Every n-th request is valid. Default 4. */
  validEvery?: number;
  /** Valid requests whose body trickles in over `slowBodyMs`, sent alongside. Default 0. */
  slowBodies?: number;
  slowBodyMs?: number;
}

export interface FuzzReport {
  target: Target;
  requests: number;
  hostile: number;
  valid: number;
  validCorrect: number;
  slowBodies: number;
  slowBodiesAnswered: number;
  statuses: Record<string, number>;
  byKind: Record<string, Record<string, number>>;
  /** Answers with a 5xx status. */
  serverErrors: number;
  /** Requests that got no answer: the connection closed or reset before a response. */
  dropped: number;
  /** Cases on a connection of their own that the server closed after answering (a 413, a 431): allowed. */
  closedAfterAnswer: number;
  /** What broke a rule, first 20. */
  problems: string[];
}

const TOLERANCE = 1e-4;
const hex = (r: ReturnType<typeof rng>) => Array.from({ length: 64 }, () => "0123456789abcdef"[r.int(16)]).join("");

/** The headers that authenticate (or fail to authenticate) a case. */
async function authHeaders(
  target: FuzzTarget,
  c: HostileCase,
  r: ReturnType<typeof rng>,
): Promise<Record<string, string>> {
  const auth: Auth = c.auth;
  if (auth === "none") return {};
  if (target.name === "edge") {
    const key = target.apiKey;
    if (!key) return {};
    if (auth === "key-wrong") return { authorization: `Bearer not-${key}` };
    if (auth === "key-empty") return { authorization: "Bearer " };
    if (auth === "key-huge") return { authorization: `Bearer ${"k".repeat(10_000)}` };
    if (auth === "key-header") return { "x-api-key": key };
    return { authorization: `Bearer ${key}` };
  }
  const secret = target.secret;
  if (!secret) return {};
  const call = { method: c.method, path: c.path, body: c.body ?? "" };
  if (auth === "sig-malformed")
    return { "x-edgecascade-timestamp": String(Math.floor(Date.now() / 1000)), "x-edgecascade-signature": "xyz" };
  if (auth === "sig-forged")
    return { "x-edgecascade-timestamp": String(Math.floor(Date.now() / 1000)), "x-edgecascade-signature": hex(r) };
  if (auth === "sig-expired") return signatureHeaders(secret, call, Date.now() - 120_000);
  if (auth === "sig-future") return signatureHeaders(secret, call, Date.now() + 120_000);
  if (auth === "sig-other-body")
    return signatureHeaders(secret, { ...call, body: `${typeof c.body === "string" ? c.body : ""} ` });
  return signatureHeaders(secret, call);
}

/** Whether a 200's body is the right answer for the case's rows. */
function correctAnswer(
  target: FuzzTarget,
  c: HostileCase,
  headers: Record<string, string | string[] | undefined>,
  text: string,
): string | undefined {
  const { model } = target;
  let body: { predictions?: { class: number; scores: number[] }[]; servedBy?: string; outputs?: { data: number[] }[] };
  try {
    body = JSON.parse(text);
  } catch {
    return "a 200 that is not JSON";
  }
  const servedBy = String(body.servedBy ?? headers[SERVED_BY_HEADER] ?? "");
  // Which model answered: regional answers are the full model's; edge and degraded answers the edge model's;
  // a cache hit holds whichever answered first.
  const candidates = servedBy.startsWith("regional:")
    ? [model.name]
    : servedBy === "cache"
      ? [model.edgeModel, model.name]
      : target.name === "pool"
        ? [model.name]
        : [model.edgeModel];
  const rows = c.rows!;
  const scores = body.predictions
    ? body.predictions.map((p) => p.scores)
    : body.outputs?.[0]?.data
      ? [body.outputs[0].data]
      : undefined;
  if (!scores || scores.length !== rows.length) return `wrong number of answers: ${text.slice(0, 120)}`;
  const fits = candidates.some((name) =>
    rows.every((row, i) => {
      const expected = model.rows[row]!.expected[name]!;
      return (
        argmax(scores[i]!) === argmax(expected) && expected.every((p, k) => Math.abs(p - scores[i]![k]!) <= TOLERANCE)
      );
    }),
  );
  return fits ? undefined : `wrong answer from ${servedBy || target.name}`;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
  closed?: boolean;
  error?: string;
}

/**
 * `c` on a connection of its own, raw, with `connection: close`: `write` sends the body (`answered` says whether
 * the server has begun its answer), and the answer is read until the server closes it or, with `timeoutMs`, until
 * that passes. `closed`: the exchange ends with the connection, as it does here.
 */
function rawExchange(
  origin: string,
  c: HostileCase,
  headers: Record<string, string>,
  write: (socket: Socket, body: Buffer, answered: () => boolean) => Promise<void>,
  timeoutMs?: number,
): Promise<Answer> {
  const url = new URL(origin);
  const body = typeof c.body === "string" ? Buffer.from(c.body) : Buffer.from(c.body ?? new Uint8Array());
  const head =
    `${c.method} ${c.path} HTTP/1.1\r\nhost: ${url.host}\r\nconnection: close\r\ncontent-length: ${body.length}\r\n` +
    Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join("") +
    "\r\n";
  return new Promise((resolve) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    let finished = false;
    const done = (error?: string) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString("latin1");
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({ status, headers: {}, body: text.slice(text.indexOf("\r\n\r\n") + 4), closed: true, error });
    };
    const timer =
      timeoutMs === undefined ? undefined : setTimeout(() => done(`no answer within ${timeoutMs / 1000} s`), timeoutMs);
    socket.on("connect", async () => {
      socket.write(head);
      await write(socket, body, () => chunks.length > 0 || finished);
    });
    socket.on("data", (d: Buffer) => chunks.push(d));
    socket.on("end", () => done());
    // A reset after the server answered and closed (it did not read the rest of a body over the limit).
    socket.on("error", (err) => done(err.message));
  });
}

/** Send on a connection of its own, raw; read until the server closes it (or 10 s). */
function sendAlone(origin: string, c: HostileCase, headers: Record<string, string>): Promise<Answer> {
  // Like a client sending `Expect: 100-continue`, wait a moment for an early answer before the body, and send
  // it in slices that stop once an answer arrives: a server refusing a body over the limit may answer on the
  // headers, and a client that keeps writing to one that then closes meets EPIPE before it can read that answer.
  return rawExchange(
    origin,
    c,
    headers,
    async (socket, body, answered) => {
      await new Promise((r) => setTimeout(r, body.length > 100_000 ? 200 : 0));
      for (let at = 0; at < body.length && !answered() && !socket.destroyed; at += 16_384) {
        if (!socket.write(body.subarray(at, at + 16_384))) await new Promise((r) => socket.once("drain", r));
        await new Promise((r) => setImmediate(r));
      }
    },
    10_000,
  );
}

/** A valid request whose body arrives in pieces over `ms`: the server must wait for it and answer it. */
function slowBody(origin: string, c: HostileCase, headers: Record<string, string>, ms: number): Promise<Answer> {
  return rawExchange(origin, c, headers, async (socket, body, answered) => {
    const pieces = 10;
    for (let p = 0; p < pieces && !answered(); p++) {
      socket.write(body.subarray(Math.floor((p * body.length) / pieces), Math.floor(((p + 1) * body.length) / pieces)));
      await new Promise((r) => setTimeout(r, ms / pieces));
    }
  });
}

/**
 * Fuzz one target: `requests` requests from `fuzzCase` (a quarter valid by default) on keep-alive connections,
 * plus slow valid bodies alongside. Rules: no 5xx; every 4xx a JSON `{error, code}`; requests built wrong get a
 * 4xx; every valid request the right answer; no request without an answer, except on a connection of its own
 * that the server closes after answering it (the only closes allowed are right after a 413 or 431).
 */
export async function runFuzz(target: FuzzTarget, options: FuzzOptions): Promise<FuzzReport> {
  const { requests, seed, concurrency = 16, validEvery = 4, slowBodies = 0, slowBodyMs = 2000 } = options;
  const r = rng(seed);
  const cases = Array.from({ length: requests }, (_, i) => fuzzCase(r, i, target.model, target.name, validEvery));
  const report: FuzzReport = {
    target: target.name,
    requests,
    hostile: cases.filter((c) => c.expect !== "valid").length,
    valid: cases.filter((c) => c.expect === "valid").length,
    validCorrect: 0,
    slowBodies,
    slowBodiesAnswered: 0,
    statuses: {},
    byKind: {},
    serverErrors: 0,
    dropped: 0,
    closedAfterAnswer: 0,
    problems: [],
  };
  const problem = (c: HostileCase, what: string) => {
    if (report.problems.length < 20) {
      const body = typeof c.body === "string" ? c.body.slice(0, 120) : c.body ? `<${c.body.length} bytes>` : "";
      report.problems.push(`${c.kind} ${c.method} ${c.path} ${JSON.stringify(body)}: ${what}`);
    }
  };
  const judge = (c: HostileCase, a: Answer) => {
    const key = String(a.status);
    report.statuses[key] = (report.statuses[key] ?? 0) + 1;
    const kind = report.byKind[c.kind] ?? {};
    kind[key] = (kind[key] ?? 0) + 1;
    report.byKind[c.kind] = kind;
    if (a.status === 0) {
      report.dropped++;
      problem(c, `no answer (${a.error ?? "connection closed"})`);
      return;
    }
    if (a.closed) report.closedAfterAnswer++;
    if (a.status >= 500) {
      report.serverErrors++;
      problem(c, `${a.status} ${a.body.slice(0, 200)}`);
      return;
    }
    if (a.status >= 400) {
      let body: { error?: unknown; code?: unknown } = {};
      try {
        body = JSON.parse(a.body);
      } catch {
        // Judged below.
      }
      if (typeof body.error !== "string" || typeof body.code !== "string") {
        problem(c, `a ${a.status} that is not {"error", "code"}: ${a.body.slice(0, 120)}`);
      }
      if (c.expect === "valid") problem(c, `valid request refused: ${a.status} ${a.body.slice(0, 200)}`);
      return;
    }
    if (c.expect === "4xx") problem(c, `accepted: ${a.status} ${a.body.slice(0, 120)}`);
    if (c.expect === "valid") {
      const wrong = correctAnswer(target, c, a.headers, a.body);
      if (wrong) problem(c, wrong);
      else report.validCorrect++;
    }
  };

  // No hostile request may hang the run: one unanswered for 30 s counts as dropped.
  const client = new LoadClient(target.origin, { connections: concurrency, timeoutMs: 30_000 });
  const slow = Array.from({ length: slowBodies }, async (_, i) => {
    const c = { ...fuzzCase(rng(seed + 1 + i), 0, target.model, target.name, 1), kind: "slow-body" };
    const a = await slowBody(target.origin, c, { ...c.headers, ...(await authHeaders(target, c, r)) }, slowBodyMs);
    if (a.status === 200 && !correctAnswer(target, c, a.headers, a.body)) report.slowBodiesAnswered++;
    else problem(c, `slow body: ${a.status} ${a.error ?? a.body.slice(0, 120)}`);
  });
  const cased = runClosedLoop(
    concurrency,
    (i) => i >= cases.length,
    async (i) => {
      const c = cases[i]!;
      const headers = { ...c.headers, ...(await authHeaders(target, c, r)) };
      if (c.ownConnection) judge(c, await sendAlone(target.origin, c, headers));
      else judge(c, await client.send({ method: c.method, path: c.path, headers, body: c.body }));
    },
  );
  await Promise.all([cased, ...slow]);
  await client.close();
  return report;
}
