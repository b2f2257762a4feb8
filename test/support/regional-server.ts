import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { request } from "undici";
import { afterAll, beforeAll } from "vitest";
import { sha256Hex } from "../../protocol/digest.ts";
import type { LogFields, LogLevel } from "../../regional/log.ts";
import { parseCommandLine, type RegionalOptions } from "../../regional/options.ts";
import { type RegionalServer, type ServerHooks, startRegionalServer } from "../../regional/server.ts";
import { heldout, MODELS_DIR } from "./heldout.ts";

// The exposition readers, for the suites that import them with the pool.
export { counted, metric } from "./exposition.ts";

/** A parsed answer body; tests assert on its fields directly. */
// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON answers and assert on their values.
export type JsonBody = any;

export interface LogEntry extends LogFields {
  level: LogLevel;
  msg: string;
}

export interface TestServer extends RegionalServer {
  logs: LogEntry[];
}

/**
 * Options as the CLI would parse them from `flags` and `env`, after these defaults: port 0 on 127.0.0.1, no
 * gRPC (`--grpc-port 0` turns it on, on a free port), one worker, and the CPU provider, whose outputs the fixture's tolerances are for (test/regional/cli.test.ts
 * covers `--ep auto`). Later flags win.
 */
export function testOptions(flags: string[] = [], env: Record<string, string> = {}): RegionalOptions {
  const defaults = ["--port", "0", "--grpc-port", "off", "--host", "127.0.0.1", "--workers", "1", "--ep", "cpu"];
  const parsed = parseCommandLine([...defaults, ...flags], env);
  if (parsed.help) throw new Error("unexpected --help");
  return parsed.options;
}

/** A regional pool in this process, its log lines collected; `waitReady` waits until every model serves. */
export async function startTestServer(
  options: RegionalOptions,
  hooks: Partial<ServerHooks> = {},
  { waitReady = true } = {},
): Promise<TestServer> {
  const logs: LogEntry[] = [];
  const server = await startRegionalServer(options, {
    log: (level, msg, fields) => logs.push({ level, msg, ...fields }),
    ...hooks,
  });
  if (waitReady) {
    await server.loaded;
    if (!server.repository.ready()) {
      await server.shutdown();
      throw new Error(`test server not ready: ${server.repository.notReadyReasons().join("; ")}`);
    }
  }
  return Object.assign(server, { logs });
}

/**
 * The pool a whole test file shares: started with `options` before the file's first test (before the file's own
 * `beforeAll` hooks, which vitest runs in the order they were declared), shut down after its last. Read it only
 * inside tests and hooks: before it has started, any use throws.
 */
export function serverForFile(options: RegionalOptions): TestServer {
  let started: TestServer | undefined;
  beforeAll(async () => {
    started = await startTestServer(options);
  });
  afterAll(() => started?.shutdown());
  return new Proxy({} as TestServer, {
    get(_, key) {
      if (!started) throw new Error("the file's test server is used before its beforeAll started it");
      const value = Reflect.get(started, key);
      return typeof value === "function" ? value.bind(started) : value;
    },
  });
}

/** A scratch copy of the committed model repository (tests never modify models/). */
export function copyModels(): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), "edgecascade-models-"));
  cpSync(MODELS_DIR, dir, { recursive: true });
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface NewVersion {
  /** File contents; default: a byte-identical copy of version 1. */
  bytes?: Uint8Array;
  /** sha256 written into config.json; default: the bytes' real one. */
  sha256?: string;
  /** Test accuracy the config states; default: version 1's. */
  accuracy?: number;
  /** Also make it the version config.json serves. Default false. */
  makeDefault?: boolean;
  /**
   * A release gates record for the file, as `npm run model -- check` writes it (passed or not); default none.
   * Suites about rollouts use it where the gates themselves are not under test (test/models/check.test.ts).
   */
  gates?: "passed" | "failed";
}

/** Add `version` of `model` to a scratch repository: the file under `<version>/` and its entry in config.json. */
export async function addVersion(dir: string, model: string, version: string, spec: NewVersion = {}): Promise<void> {
  const configPath = join(dir, model, "config.json");
  const config = JSON.parse(readFileSync(configPath, "utf8"));
  const v1 = config.versions["1"];
  const bytes = spec.bytes ?? readFileSync(join(dir, model, "1", v1.file));
  cpSync(join(dir, model, "1"), join(dir, model, version), { recursive: true });
  writeFileSync(join(dir, model, version, v1.file), bytes);
  const sha256 = spec.sha256 ?? (await sha256Hex(bytes));
  config.versions[version] = {
    ...v1,
    sha256,
    bytes: bytes.length,
    accuracy: { ...v1.accuracy, test: spec.accuracy ?? v1.accuracy.test },
    ...(spec.gates
      ? {
          gates: {
            sha256,
            passed: spec.gates === "passed",
            against: config.version,
            checkedAt: new Date().toISOString(),
          },
        }
      : {}),
  };
  if (spec.makeDefault) config.version = version;
  writeFileSync(configPath, JSON.stringify(config, null, 2));
}

/** POST JSON (or a raw string) and read the answer. */
export async function post(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: Record<string, string>; body: JsonBody }> {
  const text = typeof body === "string" ? body : JSON.stringify(body);
  const res = await request(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: text,
  });
  return readResponse(res);
}

export async function get(url: string, headers: Record<string, string> = {}) {
  return readResponse(await request(url, { headers }));
}

async function readResponse(res: Awaited<ReturnType<typeof request>>) {
  const raw = await res.body.text();
  let body: JsonBody = raw;
  try {
    body = JSON.parse(raw);
  } catch {
    // Left as text (e.g. /metrics).
  }
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(", ") : String(v);
  return { status: res.statusCode, headers, body };
}

/** A classify body of held-out rows `from`..`from + n`. */
export function classifyRows(from: number, n = 1) {
  const rows = heldout.rows.slice(from, from + n).map((r) => r.input);
  return { model: "digits", inputs: n === 1 ? rows[0]! : rows };
}

/** Largest difference between an answer's scores and the fixture's expected `digits` output for those rows. */
export function worstDifference(predictions: { scores: number[] }[], from: number): number {
  let worst = 0;
  predictions.forEach((p, i) => {
    const expected = heldout.rows[from + i]!.expected.digits!;
    p.scores.forEach((s, c) => {
      worst = Math.max(worst, Math.abs(s - expected[c]!));
    });
  });
  return worst;
}

/** The fixture's expected `digits` probabilities and the runtime agree to this (test/models/models.test.ts). */
export const TOLERANCE = 1e-5;
