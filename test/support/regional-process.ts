import { checkProvider } from "../../regional/session.ts";

/** Whether this host can create CUDA sessions (then the CPU-fallback tests do not apply). */
export const cudaLoads: boolean = await checkProvider("cuda").then(
  () => true,
  () => false,
);

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Poll `check` every 20 ms until it returns true; fails after `timeoutMs` with `what`. */
export async function until(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
