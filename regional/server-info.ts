import { readFileSync } from "node:fs";

const PACKAGE = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string };

/** The server's name in v2 server metadata, over HTTP (`GET /v2`) and gRPC (`ServerMetadata`). */
export const SERVER_NAME = "edgecascade-regional";
/** The package's version, answered the same way. */
export const SERVER_VERSION: string = PACKAGE.version;
