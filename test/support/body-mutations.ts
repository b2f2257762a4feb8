import { expect } from "vitest";

/**
 * Variations of a valid JSON body, for holding a hand-written check to the schema it stands in for: one edit
 * per variant, at every depth: a field removed, a field or an item replaced by values of every JSON type, an
 * unknown field added, an array emptied or doubled.
 */
const VALUES: unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  7,
  "",
  "1",
  "x",
  "auto",
  "edge",
  "regional",
  "FP32",
  [],
  [1],
  [-1, 64],
  [1.5],
  ["a"],
  {},
  { a: 1 },
  { cascade: "edge" },
  { cascade: "moon" },
];
const KEYS = ["extra", "__proto__", "constructor", "cascade", "name", "parameters", "data"];

/** `obj` with `key` added as JSON.parse would add it (so "__proto__" is an own field, as from a client). */
function withField(obj: object, key: string): unknown {
  const rest = JSON.stringify(obj).slice(1, -1);
  return JSON.parse(`{${JSON.stringify(key)}:1${rest ? `,${rest}` : ""}}`);
}

export function mutations(value: unknown): unknown[] {
  const out: unknown[] = [];
  if (Array.isArray(value)) {
    value.forEach((item, i) => {
      for (const v of [...VALUES, ...mutations(item)]) out.push(value.map((x, j) => (j === i ? v : x)));
    });
    out.push([], [...value, ...value]);
  } else if (typeof value === "object" && value !== null) {
    const obj = value as Record<string, unknown>;
    for (const key of Object.keys(obj)) {
      const { [key]: _, ...rest } = obj;
      out.push(rest);
      for (const v of [...VALUES, ...mutations(obj[key])]) out.push({ ...obj, [key]: v });
    }
    for (const key of KEYS) if (!Object.hasOwn(obj, key)) out.push(withField(obj, key));
  }
  return out;
}

/** The valid bodies and every object-shaped variation of them. */
export function mutatedBodies(valid: readonly object[]): object[] {
  return [...valid, ...valid.flatMap(mutations)].filter(
    (b): b is object => typeof b === "object" && b !== null && !Array.isArray(b),
  );
}

/**
 * Hold a hand-written parser (`plain`: undefined when it declines) to the schema it stands in for (`schema`:
 * throws on invalid input) over `bodies`: the same answer wherever plain answers, and a decline only where
 * the schema would refuse or where valibot's records drop keys. Returns how many plain accepted.
 */
export function plainAgreesWithSchema(
  bodies: readonly object[],
  plain: (body: Record<string, unknown>) => unknown,
  schema: (body: object) => unknown,
): number {
  let accepted = 0;
  for (const body of bodies) {
    let expected: unknown;
    try {
      expected = schema(body);
    } catch {
      expected = undefined;
    }
    const got = plain(body as Record<string, unknown>);
    if (got !== undefined || expected === undefined) {
      expect([body, got]).toEqual([body, expected]);
    } else {
      // Declined although valid: only where valibot's records drop keys; the schema then answers.
      expect(JSON.stringify(body)).toMatch(/"(__proto__|constructor|prototype)"/);
    }
    if (got !== undefined) accepted++;
  }
  return accepted;
}
