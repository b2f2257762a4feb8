import { describe, expect, it } from "vitest";
import { KeyWindow } from "./key-window.ts";

describe("KeyWindow", () => {
  it("admits `requests` per window, then refuses until the window ends", () => {
    const window = new KeyWindow({ requests: 2, periodS: 10 });
    expect(window.take(1_000)).toEqual({ ok: true });
    expect(window.take(2_000)).toEqual({ ok: true });
    expect(window.take(3_000)).toEqual({ ok: false, retryAfterS: 8 });
    expect(window.take(10_999)).toEqual({ ok: false, retryAfterS: 1 });
    expect(window.take(11_000)).toEqual({ ok: true });
    expect(window.take(11_500)).toEqual({ ok: true });
    expect(window.take(11_600)).toMatchObject({ ok: false });
  });
});
