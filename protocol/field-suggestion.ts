/**
 * "Did you mean" for a body's unknown field: a field of ours one or two typed characters away, or the name other
 * protocols give it (`instances` is KServe v1's and TF Serving's, `input` a common slip). Pure.
 */

/** Levenshtein distance, for short field names. */
function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The field `key` most likely meant: its entry in `aliases`, else the one field of `fields` within two edits
 * (case ignored) that is nearest; undefined when none is near enough to say.
 */
export function suggestedField(
  key: string,
  fields: readonly string[],
  aliases: Readonly<Record<string, string>> = {},
): string | undefined {
  const alias = Object.hasOwn(aliases, key.toLowerCase()) ? aliases[key.toLowerCase()] : undefined;
  if (alias) return alias;
  let best: { field: string; distance: number } | undefined;
  for (const field of fields) {
    const distance = editDistance(key.toLowerCase(), field.toLowerCase());
    if (distance <= 2 && distance < key.length && (!best || distance < best.distance)) best = { field, distance };
  }
  return best?.field;
}

/**
 * The 400 message for the first top-level field of `body` that is not one of `fields` and looks like a slip for
 * one of them (`unknown field "input"; did you mean "inputs"?`); undefined when there is none.
 */
export function nearMissMessage(
  body: object,
  fields: ReadonlySet<string>,
  aliases: Readonly<Record<string, string>> = {},
): string | undefined {
  for (const key of Object.keys(body)) {
    if (fields.has(key)) continue;
    const meant = suggestedField(key, [...fields], aliases);
    if (meant) return `unknown field "${key}"; did you mean "${meant}"?`;
  }
  return undefined;
}
