import { DEADLINE_HEADER } from "../../protocol/headers.ts";
import { seededRandom } from "../../protocol/seeded-random.ts";
import type { ValidationModel } from "./model.ts";

/**
 * Malformed and hostile requests for the edge and the pools, interleaved with valid ones (fuzz.ts sends them).
 * Each case says what it is (`kind`) and what must come back: `4xx` for requests wrong by construction (a JSON
 * `{error, code}` 4xx), `not-5xx` for random mutations that may happen to stay valid, `valid` for requests
 * whose answer is checked against the held-out fixture. Authentication is a directive the sender applies
 * (signing needs async HMAC): pools get a valid edge signature and the edge a valid API key unless the case is
 * about them. Pure: the same seed gives the same cases.
 */

export type Target = "edge" | "pool";

/** How the sender authenticates the case. */
export type Auth =
  | "valid"
  | "none"
  /** Pools: signature headers. */
  | "sig-malformed"
  | "sig-forged"
  | "sig-expired"
  | "sig-future"
  | "sig-other-body"
  /** Edge: API keys. */
  | "key-wrong"
  | "key-empty"
  | "key-huge"
  | "key-header";

export interface HostileCase {
  kind: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  expect: "4xx" | "not-5xx" | "valid";
  auth: Auth;
  /** Valid cases: the held-out row of each input row, and the route's answer shape. */
  rows?: number[];
  /**
   * Sent on a connection of its own, written raw: the server may close it after answering (a body over the
   * limit, headers over the limit). The answer must still come before the close.
   */
  ownConnection?: boolean;
}

export interface Rng {
  next(): number;
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
}

/** A seeded generator (the probe's mulberry32), so a failure reproduces from its seed. */
export function rng(seed: number): Rng {
  const next = seededRandom(seed);
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: (items) => items[int(items.length)]! };
}

const JSON_TYPE = { "content-type": "application/json" };

/** A valid request: 1-3 rows to `/v1/classify`, or one row to v2 infer. */
export function validCase(r: Rng, model: ValidationModel, target: Target): HostileCase {
  const rows = Array.from({ length: 1 + r.int(3) }, () => r.int(model.rows.length));
  if (r.next() < 0.7) {
    const inputs = rows.map((i) => model.rows[i]!.input);
    return {
      kind: "valid",
      method: "POST",
      path: "/v1/classify",
      headers: JSON_TYPE,
      body: JSON.stringify({ model: model.name, inputs: inputs.length === 1 ? inputs[0] : inputs }),
      expect: "valid",
      auth: "valid",
      rows,
    };
  }
  const row = rows[0]!;
  return {
    kind: "valid",
    method: "POST",
    path: `/v2/models/${model.name}/infer`,
    headers: JSON_TYPE,
    body: JSON.stringify({
      inputs: [{ name: inputName(target), shape: [1, model.width], datatype: "FP32", data: model.rows[row]!.input }],
    }),
    expect: "valid",
    auth: "valid",
    rows: [row],
  };
}

/** The input tensor's name; both tiers name it after the model's config (`pixels` for digits). */
const inputName = (_: Target) => "pixels";

/** One malformed or hostile request. */
export function hostileCase(r: Rng, model: ValidationModel, target: Target): HostileCase {
  const row = model.rows[r.int(model.rows.length)]!.input;
  const width = model.width;
  const classify = (kind: string, body: unknown, headers: Record<string, string> = JSON_TYPE): HostileCase => ({
    kind,
    method: "POST",
    path: "/v1/classify",
    headers,
    body: typeof body === "string" || body instanceof Uint8Array ? body : JSON.stringify(body),
    expect: "4xx",
    auth: "valid",
  });
  const infer = (kind: string, tensor: Record<string, unknown>, extra: Record<string, unknown> = {}): HostileCase => ({
    kind,
    method: "POST",
    path: `/v2/models/${model.name}/infer`,
    headers: JSON_TYPE,
    body: JSON.stringify({
      inputs: [{ name: inputName(target), shape: [1, width], datatype: "FP32", data: row, ...tensor }],
      ...extra,
    }),
    expect: "4xx",
    auth: "valid",
  });
  const garbage = () => Array.from({ length: 1 + r.int(200) }, () => String.fromCharCode(r.int(0x2fff))).join("");
  const rowWith = (at: number, spelling: string) =>
    `{"model":"${model.name}","inputs":[${row.map((v, i) => (i === at ? spelling : String(v))).join(",")}]}`;
  const withBytes = (bytes: number[]) => {
    const text = JSON.stringify({ model: model.name, inputs: row, id: "x" });
    const at = text.indexOf('"x"') + 1;
    const head = new TextEncoder().encode(text.slice(0, at));
    const tail = new TextEncoder().encode(text.slice(at));
    return Uint8Array.from([...head, ...bytes, ...tail]);
  };

  const makers: (() => HostileCase)[] = [
    // Content types and bodies that are not JSON objects.
    () =>
      classify(
        "content-type",
        { model: model.name, inputs: row },
        {
          "content-type": r.pick(["text/plain", "application/xml", "multipart/form-data", "application/jsonx", ""]),
        },
      ),
    () => classify("content-type", { model: model.name, inputs: row }, {}),
    () => classify("not-json", r.pick(["", " ", "[]", "1", '"x"', "null", "true", "[1,2]", "{", "}", "{]"])),
    () => classify("not-json", garbage()),
    // Fields: missing, unknown, wrongly typed.
    () => classify("fields", { inputs: row }),
    () => classify("fields", { model: model.name }),
    () => classify("fields", { model: r.pick([1, [], {}, null, true, ""]), inputs: row }),
    () => classify("fields", { model: model.name, inputs: r.pick([[], {}, "row", null, 5, [[]]]) }),
    () =>
      classify("fields", {
        model: model.name,
        inputs: row,
        [r.pick(["foo", "inputz", "__proto__", "constructor"])]: 1,
      }),
    () =>
      classify("fields", {
        model: model.name,
        inputs: row,
        version: r.pick(["one", "1.0", "-1", "", 1, "9".repeat(40)]),
      }),
    () => classify("fields", { model: model.name, inputs: row, id: r.pick([1, null, [], {}, true]) }),
    () =>
      classify("fields", {
        model: model.name,
        inputs: row,
        parameters: r.pick([[], "x", { cascade: "sometimes" }, { cascade: 1 }, { foo: 1 }]),
      }),
    () => ({ ...classify("fields", { model: "../../etc/passwd", inputs: row }) }),
    // Shapes.
    () => classify("shape", { model: model.name, inputs: row.slice(0, r.int(width)) }),
    () => classify("shape", { model: model.name, inputs: [...row, ...row.slice(0, 1 + r.int(10))] }),
    () => classify("shape", { model: model.name, inputs: [row, row.slice(1)] }),
    () => classify("shape", { model: model.name, inputs: [row, 7] }),
    () => classify("batch-too-big", { model: model.name, inputs: Array.from({ length: 65 + r.int(100) }, () => row) }),
    // Values: wrong types, non-finite spellings, numbers past float32, non-JSON number syntax.
    () => {
      const at = r.int(width);
      return classify("values", {
        model: model.name,
        inputs: row.map((x, i) => (i === at ? r.pick(["1", null, [], {}, true]) : x)),
      });
    },
    () =>
      classify(
        "numbers",
        rowWith(r.int(width), r.pick(["1e999", "-1e999", `1${"0".repeat(400)}`, "3.5e38", "-3.41e38"])),
      ),
    () =>
      classify(
        "numbers",
        rowWith(
          r.int(width),
          r.pick(["NaN", "Infinity", "-Infinity", "+1", ".5", "01", "1.", "1e", "0x10", "1_0", "--1"]),
        ),
      ),
    () =>
      classify(
        "numbers",
        rowWith(r.int(width), r.pick(['"NaN"', '"Infinity"', '"-Infinity"', '"1e999"', "null", "[1]", '{"v":1}'])),
      ),
    // Deep nesting.
    () => classify("nesting", `{"model":"${model.name}","inputs":${"[".repeat(5000)}${"]".repeat(5000)}}`),
    () => classify("nesting", `{"model":"${model.name}","inputs":[],"id":${'{"a":'.repeat(3000)}1${"}".repeat(3000)}}`),
    () => infer("nesting", { data: [[[[[[[[[[row]]]]]]]]]] }),
    // Bodies over the limit (256 KiB): 413, on a connection of their own, which the server may then close.
    () => ({
      ...classify("oversized", `{"model":"${model.name}","inputs":[${"1,".repeat(140_000 + r.int(400_000))}1]}`),
      ownConnection: true,
    }),
    // Invalid UTF-8 and lone surrogates.
    () =>
      classify(
        "utf-8",
        withBytes(
          r.pick([[0xff], [0xfe, 0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80]]),
        ),
      ),
    () => ({ ...classify("utf-8", `{"model":"${model.name}\\ud800","inputs":[${row.join(",")}]}`), expect: "4xx" }),
    () => ({
      ...classify("utf-8", `{"model":"${model.name}","inputs":[${row.join(",")}],"id":"\\udfff\\ud800"}`),
      expect: "not-5xx",
    }),
    // Methods and routes.
    () => ({
      kind: "method",
      method: r.pick(["GET", "PUT", "DELETE", "PATCH"]),
      path: "/v1/classify",
      headers: {},
      expect: "4xx",
      auth: "valid",
    }),
    () => ({
      kind: "route",
      method: "GET",
      path: `/v2/models/${r.pick(["..", "%2e%2e", "nope", `${model.name}%00`, "a".repeat(300), "%ff%fe"])}/ready`,
      headers: {},
      expect: "4xx",
      auth: "valid",
    }),
    () => ({
      kind: "route",
      method: "POST",
      path: `/${garbage().replace(/[^a-z/]/gi, "") || "x"}`,
      headers: JSON_TYPE,
      body: "{}",
      expect: "4xx",
      auth: "valid",
    }),
    // Open Inference Protocol tensors.
    () => infer("v2-tensor", { name: r.pick(["x", "", "PIXELS"]) }),
    () => infer("v2-tensor", { datatype: r.pick(["FP64", "INT8", "BYTES", "float", ""]) }),
    () =>
      infer("v2-tensor", {
        shape: r.pick([[width], [1, width - 1], [2, width], [0, width], [-1, width], [1, width, 1], [1.5, width], []]),
      }),
    () => infer("v2-tensor", { data: row.slice(0, r.int(width)) }),
    () => infer("v2-tensor", { parameters: { binary_data_size: 256 } }),
    () => infer("v2-tensor", { extra: 1 }),
    () => infer("v2-tensor", {}, { outputs: [{ name: r.pick(["logits", ""]) }] }),
    () => infer("v2-tensor", {}, { inputs: r.pick([[], "x", [1], [null]]) }),
    () => infer("v2-tensor", { shape: [100_000, width] }),
    // Binary tensor data (Triton's extension): bad flags (the output named as the sample models name it; another
    // model answers the unknown name with a 400 as well), and a JSON-part length that is not one.
    () =>
      infer("v2-binary", {}, { outputs: [{ name: "probabilities", parameters: { binary_data: r.pick(["yes", 1]) } }] }),
    () => infer("v2-binary", {}, { parameters: { binary_data_output: r.pick(["true", 0, []]) } }),
    () => {
      const base = infer("v2-binary", {});
      const length = r.pick(["-1", "x", "99999", "1.5", ""]);
      return { ...base, headers: { ...base.headers, "inference-header-content-length": length } };
    },
    () => {
      // A binary input whose size does not match its shape (one row of FP32 is width x 4 bytes).
      const bytes = new Uint8Array(Float32Array.from(row).buffer);
      const json = new TextEncoder().encode(
        JSON.stringify({
          inputs: [
            {
              name: inputName(target),
              shape: [1, width],
              datatype: "FP32",
              parameters: { binary_data_size: bytes.length - 4 * (1 + r.int(3)) },
            },
          ],
        }),
      );
      const body = new Uint8Array(json.length + bytes.length);
      body.set(json);
      body.set(bytes, json.length);
      const base = infer("v2-binary", {});
      return {
        ...base,
        headers: { "content-type": "application/octet-stream", "inference-header-content-length": String(json.length) },
        body,
      };
    },
    // Header floods: hundreds of headers, or headers past Node's 16 KiB limit (the pools answer 431; workerd
    // takes more, and on Cloudflare the front line limits them), on a connection of their own.
    () => ({
      ...classify("header-flood", { model: model.name, inputs: row }),
      headers: {
        ...JSON_TYPE,
        ...Object.fromEntries(
          Array.from({ length: 100 + r.int(400) }, (_, i) => [`x-flood-${i}`, "y".repeat(r.int(60))]),
        ),
      },
      expect: "not-5xx",
    }),
    () => ({
      ...classify("header-flood", { model: model.name, inputs: row }),
      headers: { ...JSON_TYPE, "x-big": "a".repeat(70_000 + r.int(100_000)) },
      expect: target === "pool" ? "4xx" : "not-5xx",
      ownConnection: true,
    }),
    // Authentication: edge signatures at the pools, API keys at the edge.
    ...(target === "pool"
      ? [
          () => ({ ...classify("signature", { model: model.name, inputs: row }), auth: "none" as const }),
          () => ({
            ...classify("signature", { model: model.name, inputs: row }),
            auth: r.pick(["sig-malformed", "sig-forged", "sig-expired", "sig-future", "sig-other-body"] as const),
          }),
          () => ({
            ...classify("deadline", { model: model.name, inputs: row }),
            headers: { ...JSON_TYPE, [DEADLINE_HEADER]: r.pick(["-5", "soon", "1e3", "1 000", "", "99999999"]) },
          }),
        ]
      : [
          () => ({ ...classify("api-key", { model: model.name, inputs: row }), auth: "none" as const }),
          () => ({
            ...classify("api-key", { model: model.name, inputs: row }),
            auth: r.pick(["key-wrong", "key-empty", "key-huge"] as const),
          }),
        ]),
  ];
  return r.pick(makers)();
}

/** A valid request with a few random byte-level edits: usually broken, sometimes still valid. */
export function mutatedCase(r: Rng, model: ValidationModel, target: Target): HostileCase {
  const valid = validCase(r, model, target);
  const chars = [...(valid.body as string)];
  for (let edits = 1 + r.int(3); edits > 0; edits--) {
    const at = r.int(chars.length);
    const op = r.int(4);
    if (op === 0) chars.splice(at, 1);
    else if (op === 1)
      chars.splice(at, 0, r.pick(['"', "{", "}", "[", "]", ",", ":", "-", "e", "9", ".", "\\", "\u0000", "é"]));
    else if (op === 2) chars[at] = String.fromCharCode(r.int(128));
    else chars.length = at;
  }
  return { ...valid, kind: "mutated", body: chars.join(""), expect: "not-5xx", rows: undefined };
}

/**
 * The i-th case of a run: every `validEvery`-th request is valid (its answer is checked), the others alternate
 * between hostile cases and mutations of valid requests.
 */
export function fuzzCase(r: Rng, i: number, model: ValidationModel, target: Target, validEvery = 4): HostileCase {
  if (i % validEvery === 0) return validCase(r, model, target);
  return r.next() < 0.7 ? hostileCase(r, model, target) : mutatedCase(r, model, target);
}
