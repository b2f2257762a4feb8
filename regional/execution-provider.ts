import type { ExecutionProviderChoice } from "./options/server.ts";

/** The providers a regional pool can run sessions on. */
export type ExecutionProvider = "cuda" | "cpu";

/** What the pool runs on and, when it is not what was asked for, why. */
export interface ProviderDecision {
  provider: ExecutionProvider;
  /** Set when `auto` fell back to the CPU: the CUDA provider's error. */
  fallbackReason?: string;
}

/** Providers to try, in order: `auto` prefers CUDA and falls back to the CPU; an explicit choice has no fallback. */
export function providerCandidates(choice: ExecutionProviderChoice): ExecutionProvider[] {
  return choice === "auto" ? ["cuda", "cpu"] : [choice];
}

/**
 * Try the candidates in order with `attempt` (which throws when a provider cannot create a session) and keep
 * the first that works. An explicit `cuda` that fails is an error naming the cause: a GPU host without its
 * provider should not quietly serve from the CPU.
 */
export async function chooseProvider(
  choice: ExecutionProviderChoice,
  attempt: (provider: ExecutionProvider) => Promise<void>,
): Promise<ProviderDecision> {
  const failures: string[] = [];
  for (const provider of providerCandidates(choice)) {
    try {
      await attempt(provider);
      return failures.length ? { provider, fallbackReason: failures.join("; ") } : { provider };
    } catch (err) {
      failures.push(`${provider}: ${(err as Error).message}`);
    }
  }
  throw new Error(`--ep ${choice}: no execution provider could create a session (${failures.join("; ")})`);
}
