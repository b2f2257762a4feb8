import { describe, expect, it } from "vitest";
import { Lazy } from "./lazy.ts";

describe("Lazy", () => {
  it("creates once, on first use, and shares the creation between concurrent callers", async () => {
    let calls = 0;
    let release!: (value: string) => void;
    const lazy = new Lazy(() => {
      calls++;
      return new Promise<string>((resolve) => {
        release = resolve;
      });
    });
    expect(calls).toBe(0);
    expect(lazy.value).toBeUndefined();
    const all = Promise.all([lazy.get(), lazy.get(), lazy.get()]);
    expect(calls).toBe(1);
    expect(lazy.ready).toBe(false);
    release("session");
    expect(await all).toEqual(["session", "session", "session"]);
    expect(lazy.ready).toBe(true);
    expect(lazy.value).toBe("session");
    expect(await lazy.get()).toBe("session");
    expect(calls).toBe(1);
  });

  it("retries a failed creation instead of keeping the failure", async () => {
    let calls = 0;
    const lazy = new Lazy(async () => {
      calls++;
      if (calls === 1) throw new Error("transient");
      return calls;
    });
    const first = await Promise.allSettled([lazy.get(), lazy.get()]);
    expect(first.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(calls).toBe(1);
    expect((lazy.lastError as Error).message).toBe("transient");
    expect(lazy.ready).toBe(false);
    expect(await lazy.get()).toBe(2);
    expect(lazy.lastError).toBeUndefined();
    expect(await lazy.get()).toBe(2);
    expect(calls).toBe(2);
  });

  it("creates again after a reset, and hands back what it forgot", async () => {
    let calls = 0;
    const lazy = new Lazy(async () => ++calls);
    expect(lazy.reset()).toBeUndefined();
    expect(await lazy.get()).toBe(1);
    expect(lazy.reset()).toBe(1);
    expect(lazy.ready).toBe(false);
    expect(lazy.value).toBeUndefined();
    expect(await lazy.get()).toBe(2);
  });
});
