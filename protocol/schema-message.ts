import * as v from "valibot";
import { jsonType } from "./tensor.ts";

const ARTICLES: Record<string, string> = {
  string: "a string",
  number: "a number",
  boolean: "a boolean",
  Array: "an array",
  Object: "an object",
};

/**
 * One valibot issue as a sentence a client can act on: `"model" is required`, `unknown field "foo"`,
 * `"parameters.cascade" must be one of "auto", "edge", "regional", got "x"`.
 */
export function describeIssue(issue: v.BaseIssue<unknown>, prefix = ""): string {
  const path = v.getDotPath(issue);
  const field = `"${prefix}${path ?? ""}"`;
  if (issue.type === "strict_object" && issue.expected === "never") {
    return `unknown field ${field}`;
  }
  if (issue.kind === "schema" && issue.input === undefined && path) {
    return `${field} is required`;
  }
  if (issue.type === "picklist") {
    const options = (issue.expected ?? "").replace(/^\((.*)\)$/, "$1").replaceAll(" | ", ", ");
    return `${field} must be one of ${options}, got ${JSON.stringify(issue.input)}`;
  }
  if (issue.type === "custom") return `${field} ${issue.message}`;
  if (issue.kind === "schema") {
    const what = path ? field : prefix ? `"${prefix.replace(/\.$/, "")}"` : "body";
    const expected = issue.expected ?? "";
    return `${what} must be ${ARTICLES[expected] ?? expected}, got ${jsonType(issue.input)}`;
  }
  // Validations (integer, minValue, regex...) carry their own message.
  return `${field} ${issue.message}`;
}

/** valibot's object schemas take arrays too; JSON clients mean an object when they say one. */
export function plainObject<const S extends v.GenericSchema>(schema: S) {
  return v.pipe(
    v.custom<v.InferInput<S>>(
      (x) => typeof x === "object" && x !== null && !Array.isArray(x),
      (issue) => `must be an object, got ${jsonType(issue.input)}`,
    ),
    schema,
  );
}

/** Parse with `schema`, or return the first issue as a sentence. */
export function parseOrDescribe<const S extends v.GenericSchema>(
  schema: S,
  input: unknown,
  prefix = "",
): { ok: true; value: v.InferOutput<S> } | { ok: false; message: string } {
  const result = v.safeParse(schema, input, { abortEarly: true });
  if (result.success) return { ok: true, value: result.output };
  const [first] = result.issues;
  return { ok: false, message: describeIssue(first, prefix) };
}
