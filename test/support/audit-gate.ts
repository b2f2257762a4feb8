import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, request } from "node:http";
import type { AddressInfo } from "node:net";
import { AUDIT_HEADER, TRACEPARENT_HEADER } from "../../protocol/headers.ts";

/** One audit (a call carrying `x-edgecascade-audit`) as it went through the gate. */
export interface GatedAudit {
  /** The trace it names: the audited answer's (edge/audit/audit.ts sends that answer's trace context). */
  traceparent: string | undefined;
  /** The edge's labels, as sent. */
  labels: string;
  /** Held at the gate, not yet sent on. */
  held: boolean;
  /** The region's answer, once it came back and went on to the edge. */
  answer: { status: number; body: string } | undefined;
  /** The edge closed the call before its answer came (gave up on it). */
  abandoned: boolean;
}

export interface AuditGate {
  /** `http://127.0.0.1:<port>`: the region's URL as the edge should know it. */
  url: string;
  /** Hold every audit that arrives from now on until `release`; other calls always pass. */
  hold(): void;
  /** Send on what is held, and let audits pass from now on. */
  release(): void;
  /** Every audit seen, oldest first. */
  audits(): readonly GatedAudit[];
  close(): Promise<void>;
}

/** Headers of one hop only: node:http writes its own. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "content-length"]);
const endToEnd = (headers: IncomingHttpHeaders) =>
  Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));

/**
 * An HTTP proxy in front of one real pool that can hold the live audit's calls (and only them) for as long as a
 * test wants: what happens to an answer while its audit is unanswered is then seen without timing anything.
 * Requests pass byte for byte (the signature covers path, headers it names and body).
 */
export async function startAuditGate(target: string): Promise<AuditGate> {
  const to = new URL(target);
  const audits: GatedAudit[] = [];
  const waiting: (() => void)[] = [];
  let holding = false;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const labels = req.headers[AUDIT_HEADER] as string | undefined;
      const audit: GatedAudit | undefined =
        labels === undefined
          ? undefined
          : {
              traceparent: req.headers[TRACEPARENT_HEADER] as string | undefined,
              labels,
              held: holding,
              answer: undefined,
              abandoned: false,
            };
      if (audit) {
        audits.push(audit);
        res.on("close", () => {
          if (!res.writableFinished) audit.abandoned = true;
        });
      }
      const send = () => {
        if (audit) audit.held = false;
        const upstream = request(
          { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
          (answer) => {
            const parts: Buffer[] = [];
            answer.on("data", (chunk: Buffer) => parts.push(chunk));
            answer.on("end", () => {
              const body = Buffer.concat(parts);
              if (audit) audit.answer = { status: answer.statusCode!, body: body.toString() };
              res.writeHead(answer.statusCode!, endToEnd(answer.headers)).end(body);
            });
          },
        );
        upstream.on("error", (err) => res.destroy(err));
        upstream.end(Buffer.concat(chunks));
      };
      if (audit?.held) waiting.push(send);
      else send();
    });
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    hold() {
      holding = true;
    },
    release() {
      holding = false;
      for (const send of waiting.splice(0)) send();
    },
    audits: () => audits,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
