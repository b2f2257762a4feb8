import type { PlatformSpanContext } from "./trace-context.ts";

/**
 * The Worker's active span as Workers tracing gives it (`ctx.tracing`, with `[observability.traces]` on): its
 * trace id, span id and flags. workerd 1.20261117 has `ctx.tracing.getActiveSpan().spanContext()` at every
 * compatibility date (checked from 2025-01-01 to 2026-11-17: no flag or date gates it); a request the platform does
 * not trace, and every request in Miniflare, which has no tracing backend, gives the all-zero context, which
 * requestTrace() does not continue. Undefined where the runtime has no such API or it throws.
 */
export function platformSpan(ctx: ExecutionContext | undefined): PlatformSpanContext | undefined {
  try {
    return ctx?.tracing?.getActiveSpan?.()?.spanContext?.();
  } catch {
    return undefined;
  }
}
