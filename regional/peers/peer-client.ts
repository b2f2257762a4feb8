import { Pool } from "undici";
import { BINARY_CONTENT_TYPE, float32FromBytes, INFERENCE_HEADER_LENGTH } from "../../protocol/binary-tensor.ts";
import { ServingError } from "../../protocol/errors.ts";
import { DEADLINE_HEADER } from "../../protocol/headers.ts";
import type { ModelIo } from "../../protocol/model-config.ts";
import type { InputRows } from "../../protocol/tensor.ts";
import { nowUs } from "../clock.ts";

/** What the owning worker answered: the probabilities and the answer's headers (version, timing, rollout). */
export interface PeerAnswer {
  probs: Float32Array;
  version: string;
  /** The owner's `server-timing`, `x-model-version` and `x-edgecascade-rollout`, as it sent them. */
  headers: Record<string, string>;
}

/** The owning worker could not be reached (its socket gone: a worker being replaced): the caller runs the rows itself. */
export class PeerUnreachable extends Error {}

/** The headers of a peer's answer that the client's answer carries on. */
const PASSED_ON = ["server-timing", "x-model-version", "x-edgecascade-rollout"];

/**
 * Another worker of the same pod, reached over its Unix socket (peer-listener.ts): a model's rows sent to the
 * worker that owns it as a v2 infer call with binary tensor data (Triton's own format: no JSON numbers either
 * way), the request's deadline passed on as what is left of it.
 */
export class PeerClient {
  readonly slot: number;
  readonly #pool: Pool;

  constructor(slot: number, socketPath: string) {
    this.slot = slot;
    this.#pool = new Pool("http://peer.localhost", { socketPath, connections: 32, pipelining: 1 });
  }

  /** Run `rows` of `model` (`version`, if pinned) on the owner; its errors come back as its own (status, code). */
  async infer(
    model: string,
    version: string | undefined,
    io: ModelIo,
    rows: InputRows,
    deadlineUs: number,
  ): Promise<PeerAnswer> {
    const values = rows.data.subarray(0, rows.batch * rows.width);
    const head = new TextEncoder().encode(
      JSON.stringify({
        inputs: [
          {
            name: io.inputName,
            shape: [rows.batch, rows.width],
            datatype: "FP32",
            parameters: { binary_data_size: values.byteLength },
          },
        ],
        parameters: { binary_data_output: true },
      }),
    );
    const body = new Uint8Array(head.length + values.byteLength);
    body.set(head);
    body.set(new Uint8Array(values.buffer, values.byteOffset, values.byteLength), head.length);
    const headers: Record<string, string> = {
      "content-type": BINARY_CONTENT_TYPE,
      [INFERENCE_HEADER_LENGTH]: String(head.length),
    };
    if (Number.isFinite(deadlineUs)) {
      headers[DEADLINE_HEADER] = String(Math.max(0, Math.floor((deadlineUs - nowUs()) / 1000)));
    }
    const path = version === undefined ? `/v2/models/${model}/infer` : `/v2/models/${model}/versions/${version}/infer`;
    const res = await this.#request({ path, method: "POST", headers, body });
    const bytes = new Uint8Array(await res.body.arrayBuffer());
    if (res.statusCode !== 200) throw peerError(res.statusCode, res.headers, bytes);
    const split = Number(res.headers[INFERENCE_HEADER_LENGTH]);
    const passed: Record<string, string> = {};
    for (const name of PASSED_ON) {
      const value = res.headers[name];
      if (typeof value === "string") passed[name] = value;
    }
    return {
      probs: float32FromBytes(bytes.subarray(split)),
      version: passed["x-model-version"] ?? "",
      headers: passed,
    };
  }

  /** The owner's `/v2/models/{m}/ready` (which starts the model's load there, as a first request would). */
  async modelReady(model: string): Promise<{ status: number; body: unknown }> {
    const res = await this.#request({ path: `/v2/models/${model}/ready`, method: "GET" });
    return { status: res.statusCode, body: await res.body.json() };
  }

  close(): Promise<void> {
    return this.#pool.close();
  }

  async #request(options: Parameters<Pool["request"]>[0]) {
    try {
      return await this.#pool.request(options);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ECONNREFUSED" || code === "ENOENT" || code === "UND_ERR_SOCKET" || code === "ECONNRESET") {
        throw new PeerUnreachable(`worker ${this.slot} of this pool: ${(err as Error).message}`);
      }
      throw err;
    }
  }
}

/** The owner's error answer as the same error here: its status, code, message and Retry-After. */
function peerError(status: number, headers: Record<string, string | string[] | undefined>, bytes: Uint8Array) {
  let body: { error?: unknown; code?: unknown } = {};
  try {
    body = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    // Not JSON: answered below with the status alone.
  }
  const retryAfter = headers["retry-after"];
  return new ServingError(
    status,
    typeof body.code === "string" ? body.code : "internal",
    typeof body.error === "string" ? body.error : `the worker owning the model answered ${status}`,
    typeof retryAfter === "string" ? { "retry-after": retryAfter } : {},
  );
}
