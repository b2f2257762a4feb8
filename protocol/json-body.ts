import { BadRequest, UnsupportedMediaType } from "./errors.ts";

/** `application/json` or any `+json` type, parameters (charset) allowed. */
export function isJsonContentType(contentType: string | null | undefined): boolean {
  if (!contentType) return false;
  const essence = contentType.split(";", 1)[0]!.trim().toLowerCase();
  return essence === "application/json" || (essence.startsWith("application/") && essence.endsWith("+json"));
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

/** The body of a JSON request: 415 for another content type, 400 (with the parser's reason) for bad JSON. */
export function parseJsonBody(text: string, contentType: string | null | undefined): unknown {
  if (!isJsonContentType(contentType)) throw new UnsupportedMediaType(contentType);
  return parseJsonText(text);
}
