import type { RequestLocation } from "../regions/region.ts";
import type { EdgeTrace } from "./trace-context.ts";

/** What a request's data point and audit need of it besides its answer (edge/observe/record.ts, edge/audit/). */
export interface RequestFacts {
  trace: EdgeTrace;
  /** Unix ms when the request arrived. */
  startedAt: number;
  /** `request.cf.colo`, asked once the answer is ready (reading `request.cf` has a cost). */
  colo: () => string | undefined;
  /** Where the request comes from: an audit asks the region nearest to it. */
  locate: () => RequestLocation;
}
