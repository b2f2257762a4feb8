import * as v from "valibot";
import { BadRequest } from "./errors.ts";
import { nearMissMessage } from "./field-suggestion.ts";
import type { RequestLimits } from "./limits.ts";
import type { ModelIo } from "./model-config.ts";
import { parseOrDescribe, plainObject } from "./schema-message.ts";
import { checkBatch, type InputRows, writeFloat32 } from "./tensor.ts";
import { CASCADE_MODES, type CascadeMode } from "./types.ts";

const VERSION = /^\d+$/;
const classifySchema = v.strictObject({
  model: v.pipe(v.string(), v.nonEmpty("must not be empty")),
  inputs: v.array(v.unknown()),
  version: v.optional(v.pipe(v.string(), v.regex(VERSION, 'must be a version number such as "1"'))),
  id: v.optional(v.string()),
  parameters: v.optional(plainObject(v.strictObject({ cascade: v.optional(v.picklist(CASCADE_MODES)) }))),
});

/** A structurally valid `/v1/classify` body; its inputs are checked against the model by `readClassifyInputs`. */
export interface ClassifyCall {
  model: string;
  version?: string;
  id?: string;
  cascade: CascadeMode;
  inputs: unknown[];
}

const FIELDS = new Set(["model", "inputs", "version", "id", "parameters"]);
/** What clients of other protocols call our fields: KServe v1's and TF Serving's `instances`, Triton's `model_name`. */
const ALIASES = { instances: "inputs", data: "inputs", model_name: "model" };

/**
 * The same rules as `classifySchema`, checked by hand for a body that keeps them: the call, or undefined for
 * anything else (`schemaClassifyCall` then says what is wrong). valibot's pipeline cost the pool about as much CPU per
 * request as parsing the JSON did (docs/performance.md); this never accepts what the schema refuses
 * (classify-request.test.ts holds the two to each other).
 */
export function plainClassifyCall(body: Record<string, unknown>): ClassifyCall | undefined {
  for (const key in body) if (!FIELDS.has(key)) return undefined;
  const { model, inputs, version, id, parameters } = body;
  if (typeof model !== "string" || model === "" || !Array.isArray(inputs)) return undefined;
  if (version !== undefined && (typeof version !== "string" || !VERSION.test(version))) return undefined;
  if (id !== undefined && typeof id !== "string") return undefined;
  let cascade: CascadeMode = "auto";
  if (parameters !== undefined) {
    if (typeof parameters !== "object" || parameters === null || Array.isArray(parameters)) return undefined;
    for (const key in parameters) if (key !== "cascade") return undefined;
    const mode = (parameters as { cascade?: unknown }).cascade;
    if (mode !== undefined) {
      if (!(CASCADE_MODES as readonly unknown[]).includes(mode)) return undefined;
      cascade = mode as CascadeMode;
    }
  }
  return { model, version, id, cascade, inputs };
}

/**
 * `classifySchema`'s verdict on an object body: the call, or a 400 naming the first field that is wrong; an
 * unknown field that looks like a slip for one of ours (`input`, `instances`) first, with the field it meant.
 */
export function schemaClassifyCall(body: object): ClassifyCall {
  const slip = nearMissMessage(body, FIELDS, ALIASES);
  if (slip) throw new BadRequest(slip);
  const parsed = parseOrDescribe(classifySchema, body);
  if (!parsed.ok) throw new BadRequest(parsed.message);
  const { model, version, id, parameters, inputs } = parsed.value;
  return { model, version, id, cascade: parameters?.cascade ?? "auto", inputs };
}

/** Check the fields of a `/v1/classify` body (400 naming the field), before the model is looked up. */
export function parseClassifyRequest(body: unknown): ClassifyCall {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw new BadRequest('body must be a JSON object with "model" and "inputs"');
  }
  return plainClassifyCall(body as Record<string, unknown>) ?? schemaClassifyCall(body);
}

/**
 * The rows of a classify call as float32: either one row `[w numbers]` or a batch `[[w numbers], ...]`.
 * 400 for a wrong row length or a bad value (with its position), 413 for a batch over the limits.
 * `allocate` gives the zero-filled array the rows are written to (the pool carves them from shared buffers).
 */
export function readClassifyInputs(
  inputs: unknown[],
  io: ModelIo,
  limits: RequestLimits,
  allocate: (length: number) => Float32Array = (length) => new Float32Array(length),
): InputRows {
  const width = io.width;
  if (inputs.length === 0) throw new BadRequest(`"inputs" must not be empty; send ${width} numbers or rows of them`);
  if (!Array.isArray(inputs[0])) {
    if (inputs.length !== width) {
      throw new BadRequest(
        `"inputs" has ${inputs.length} values; model "${io.name}" expects rows of ${width}` +
          (inputs.length % width === 0 ? " (send several rows as [[...], [...]])" : ""),
      );
    }
    const data = allocate(width);
    writeFloat32(inputs, data, 0, (i) => `inputs[${i}]`);
    return { data, batch: 1, width };
  }
  checkBatch(inputs.length, limits, io.maxBatchSize);
  const data = allocate(inputs.length * width);
  for (let r = 0; r < inputs.length; r++) {
    const row = inputs[r];
    if (!Array.isArray(row)) throw new BadRequest(`inputs[${r}] must be an array of ${width} numbers`);
    if (row.length !== width) {
      throw new BadRequest(`inputs[${r}] has ${row.length} values; model "${io.name}" expects ${width}`);
    }
    writeFloat32(row, data, r * width, (i) => `inputs[${r}][${i}]`);
  }
  return { data, batch: inputs.length, width };
}
