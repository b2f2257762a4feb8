import { INFERENCE_HEADER_LENGTH } from "../protocol/binary-tensor.ts";
import { DEGRADED_HEADER, MODEL_VERSION_HEADER, SERVED_BY_HEADER } from "../protocol/headers.ts";
import type { CorsOptions } from "./middleware/cors.ts";
import { BUDGET_HEADER } from "./regions/budget.ts";

/** CORS of the Worker's API (the allowed origins are the isolate's `CORS_ORIGINS`): what browser code may send and read. */
export const API_CORS: CorsOptions = {
  allowMethods: ["GET", "POST", "OPTIONS"],
  allowHeaders: [
    "content-type",
    "authorization",
    "x-api-key",
    "x-edgecascade-location",
    BUDGET_HEADER,
    INFERENCE_HEADER_LENGTH,
  ],
  exposeHeaders: [
    "server-timing",
    SERVED_BY_HEADER,
    MODEL_VERSION_HEADER,
    DEGRADED_HEADER,
    "retry-after",
    INFERENCE_HEADER_LENGTH,
  ],
  maxAgeS: 600,
};
