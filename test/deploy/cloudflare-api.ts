import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One request wrangler sent: method, path with query, and body as text. */
export interface ApiCall {
  method: string;
  url: string;
  body: string;
}

/**
 * A stand-in for Cloudflare's API on loopback, for what cannot run here (Cloudflare's network). wrangler talks
 * to it through CLOUDFLARE_API_BASE_URL, its own switch for another API host. It knows one thing, the secrets
 * of the Workers given (`GET /accounts/:id/workers/scripts/:name/secrets`), answers every other request as
 * the real API answers for a Worker that does not exist (404, code 10007), and records every request.
 */
export async function startCloudflareApi(secrets: Record<string, string[]>): Promise<{
  baseUrl: string;
  calls: ApiCall[];
  close(): Promise<void>;
}> {
  const calls: ApiCall[] = [];
  const server: Server = createServer((req, res) => {
    let body = "";
    req.setEncoding("latin1");
    req.on("data", (chunk: string) => {
      body += chunk;
    });
    req.on("end", () => {
      calls.push({ method: req.method!, url: req.url!, body });
      const script = req.url!.match(/\/workers\/scripts\/([\w-]+)\/secrets$/)?.[1];
      const names = req.method === "GET" && script ? secrets[script] : undefined;
      res.setHeader("content-type", "application/json");
      if (names) {
        res.end(
          JSON.stringify({
            success: true,
            errors: [],
            messages: [],
            result: names.map((name) => ({ name, type: "secret_text" })),
          }),
        );
        return;
      }
      res.statusCode = 404;
      res.end(
        JSON.stringify({
          success: false,
          errors: [{ code: 10007, message: "workers.api.error.script_not_found" }],
          messages: [],
          result: null,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/client/v4`,
    calls,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** The metadata part of a Worker upload (multipart/form-data): its bindings, as wrangler sent them. */
export function uploadedBindings(call: ApiCall): { name: string; type: string; text?: string }[] {
  const metadata = call.body.match(/name="metadata"\r\n(?:[^\r\n]+\r\n)*\r\n(\{.*?\})\r\n--/s)?.[1];
  if (!metadata) throw new Error(`no metadata part in ${call.method} ${call.url}`);
  return (JSON.parse(metadata) as { bindings: { name: string; type: string; text?: string }[] }).bindings;
}
