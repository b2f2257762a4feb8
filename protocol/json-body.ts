import { BadRequest, UnsupportedMediaType } from "./errors.ts";

/** `application/json` or any `+json` type, parameters (charset) allowed. */
export function isJsonContentType(contentType: string | null | undefined): boolean {
  if (!contentType) return false;
  if (contentType === "application/json") return true; // nearly every request: no splitting
  const essence = contentType.split(";", 1)[0]!.trim().toLowerCase();
  return essence === "application/json" || (essence.startsWith("application/") && essence.endsWith("+json"));
}

/** Strict UTF-8: invalid byte sequences are an error, not U+FFFD. */
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

/**
 * Body bytes as text, refusing invalid UTF-8 (400) rather than decoding it lossily: JSON exchanged between
 * systems must be UTF-8 (RFC 8259 §8.1), and a lossy decode would silently change, say, the `id` echoed back.
 * A byte order mark is dropped.
 */
export function utf8Text(body: string | ArrayBuffer | Uint8Array): string {
  if (typeof body === "string") return body;
  try {
    return utf8.decode(body);
  } catch {
    throw new BadRequest("request body is not valid UTF-8");
  }
}

/** JSON text: 400 when empty or invalid, with the parser's reason. */
export function parseJsonText(text: string): unknown {
  if (text.trim() === "") throw new BadRequest("request body is empty; send a JSON object");
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new BadRequest(`invalid JSON: ${(err as Error).message}`);
  }
}

/**
 * The body of a JSON request: 415 for another content type, 400 for invalid UTF-8 (given bytes) and, with the
 * parser's reason, for bad JSON.
 */
export function parseJsonBody(
  body: string | ArrayBuffer | Uint8Array,
  contentType: string | null | undefined,
): unknown {
  if (!isJsonContentType(contentType)) throw new UnsupportedMediaType(contentType);
  return parseJsonText(utf8Text(body));
}
