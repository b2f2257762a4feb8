/** Lowercase hex of bytes. */
export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = "";
  for (let i = 0; i < view.length; i++) out += view[i]!.toString(16).padStart(2, "0");
  return out;
}

/** SHA-256 of bytes, with Web Crypto (Workers and Node alike). */
export async function sha256Bytes(bytes: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", bytes));
}

/** SHA-256 of bytes as lowercase hex, with Web Crypto (Workers and Node alike). */
export async function sha256Hex(bytes: ArrayBuffer | ArrayBufferView): Promise<string> {
  const view = ArrayBuffer.isView(bytes) ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : bytes;
  return toHex(await crypto.subtle.digest("SHA-256", view));
}
