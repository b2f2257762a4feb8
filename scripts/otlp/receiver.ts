import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";

/**
 * A local OTLP/HTTP trace receiver: what a collector (OpenTelemetry Collector, Jaeger, Tempo) does with the
 * spans the pools export, kept in memory and read back by trace id. Debian packages no collector, so the tests
 * and `npm run traces` (docs/observability.md) use this. It decodes what it receives with the OTLP `.proto` files
 * themselves (./proto, opentelemetry-proto, Apache-2.0), protobuf as the pools send it and JSON as Cloudflare's
 * exports do; anything else is a 415.
 */

/** One span as received, ids in lowercase hex, attributes as plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a root span. */
  parentSpanId: string;
  name: string;
  /** OTLP's SpanKind: 1 internal, 2 server, 3 client. */
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: Record<string, unknown>;
  /** OTLP's status code: 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  /** The exporting process's resource (`service.name`, ...). */
  resource: Record<string, unknown>;
}

const PROTO_ROOT = fileURLToPath(new URL("./proto/", import.meta.url));

function loadRequestType(): protobuf.Type {
  const root = new protobuf.Root();
  root.resolvePath = (_origin, target) => `${PROTO_ROOT}${target}`;
  root.loadSync("opentelemetry/proto/collector/trace/v1/trace_service.proto", { keepCase: true });
  return root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest");
}

const REQUEST = loadRequestType();

interface AnyValue {
  string_value?: string;
  bool_value?: boolean;
  int_value?: number | string;
  double_value?: number;
  array_value?: { values?: AnyValue[] };
  bytes_value?: string;
}
interface KeyValue {
  key: string;
  value?: AnyValue;
}

function plain(value: AnyValue | undefined): unknown {
  if (!value) return undefined;
  if (value.string_value !== undefined) return value.string_value;
  if (value.bool_value !== undefined) return value.bool_value;
  if (value.int_value !== undefined) return Number(value.int_value);
  if (value.double_value !== undefined) return value.double_value;
  if (value.array_value) return (value.array_value.values ?? []).map(plain);
  return value.bytes_value;
}

const attributesOf = (list: KeyValue[] | undefined) =>
  Object.fromEntries((list ?? []).map((kv) => [kv.key, plain(kv.value)]));

/** OTLP/JSON writes ids as hex; protobuf as bytes, which toObject gives as base64 here. */
function hexId(value: unknown, json: boolean): string {
  if (typeof value !== "string" || value === "") return "";
  return json ? value.toLowerCase() : Buffer.from(value, "base64").toString("hex");
}

/**
 * OTLP/JSON writes the .proto's fields in lowerCamelCase (receivers must take the original names too) and ids as
 * hex: its keys in the .proto's snake_case, so that one reading serves both encodings.
 */
function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), snakeKeys(v)]),
  );
}

/** The spans of one export request's body (protobuf, or OTLP/JSON by its content type). */
export function decodeExport(body: Uint8Array, contentType: string): ReceivedSpan[] {
  const json = contentType.startsWith("application/json");
  const request = (
    json
      ? snakeKeys(JSON.parse(new TextDecoder().decode(body)))
      : REQUEST.toObject(REQUEST.decode(body), { longs: String, bytes: String, defaults: true, arrays: true })
  ) as {
    resource_spans: {
      resource?: { attributes?: KeyValue[] };
      scope_spans: {
        spans: {
          trace_id: string;
          span_id: string;
          parent_span_id: string;
          name: string;
          kind: number;
          start_time_unix_nano: string;
          end_time_unix_nano: string;
          attributes: KeyValue[];
          status?: { code?: number; message?: string };
        }[];
      }[];
    }[];
  };
  return (request.resource_spans ?? []).flatMap((rs) => {
    const resource = attributesOf(rs.resource?.attributes);
    return (rs.scope_spans ?? []).flatMap((ss) =>
      (ss.spans ?? []).map((s) => ({
        traceId: hexId(s.trace_id, json),
        spanId: hexId(s.span_id, json),
        parentSpanId: hexId(s.parent_span_id, json),
        name: s.name,
        kind: Number(s.kind),
        startNs: BigInt(s.start_time_unix_nano),
        endNs: BigInt(s.end_time_unix_nano),
        attributes: attributesOf(s.attributes),
        status: { code: Number(s.status?.code ?? 0), message: s.status?.message ?? "" },
        resource,
      })),
    );
  });
}

export interface OtlpReceiver {
  /** Base URL, for OTEL_EXPORTER_OTLP_ENDPOINT (spans are posted to `<url>/v1/traces`). */
  url: string;
  /** Every span received so far, in arrival order. */
  spans(): ReceivedSpan[];
  /** The spans of one trace. */
  trace(traceId: string): ReceivedSpan[];
  /** Export requests received (and decoded). */
  readonly exports: number;
  close(): Promise<void>;
}

/**
 * Listen on 127.0.0.1 (`port` 0: a free one). `onSpans` sees each export's spans as they arrive. Besides
 * `POST /v1/traces` it answers `GET /traces/<trace id>` with that trace's spans as JSON.
 */
export async function startOtlpReceiver(
  options: { port?: number; onSpans?: (spans: ReceivedSpan[]) => void } = {},
): Promise<OtlpReceiver> {
  const received: ReceivedSpan[] = [];
  let exports = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const answer = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body, (_k, v) => (typeof v === "bigint" ? v.toString() : v)));
      };
      const traceQuery = /^\/traces\/([0-9a-f]{32})$/.exec(req.url ?? "");
      if (req.method === "GET" && traceQuery) {
        answer(200, { spans: received.filter((s) => s.traceId === traceQuery[1]) });
        return;
      }
      if (req.method !== "POST" || req.url !== "/v1/traces") {
        answer(404, { error: "POST /v1/traces (OTLP/HTTP) or GET /traces/<trace id>" });
        return;
      }
      const contentType = req.headers["content-type"] ?? "";
      if (!contentType.startsWith("application/x-protobuf") && !contentType.startsWith("application/json")) {
        answer(415, { error: "OTLP/HTTP bodies are application/x-protobuf or application/json" });
        return;
      }
      let spans: ReceivedSpan[];
      try {
        spans = decodeExport(Buffer.concat(chunks), contentType);
      } catch (err) {
        answer(400, { error: `not an ExportTraceServiceRequest: ${(err as Error).message}` });
        return;
      }
      exports++;
      received.push(...spans);
      options.onSpans?.(spans);
      // An empty ExportTraceServiceResponse: every span accepted.
      if (contentType.startsWith("application/json")) answer(200, {});
      else {
        res.writeHead(200, { "content-type": "application/x-protobuf" });
        res.end();
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans: () => [...received],
    trace: (traceId) => received.filter((s) => s.traceId === traceId),
    get exports() {
      return exports;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
