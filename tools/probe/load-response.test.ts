import { describe, expect, it } from "vitest";
import { headerValue, loadResponse } from "./load-response.ts";

const times = { startedAt: 1000, dueAt: 1250, sentAt: 1250.4 };

describe("loadResponse", () => {
  it("times an answer from when it was due, the send lag inside it", () => {
    const answer = { status: 200, headers: { "x-served-by": "cache" }, text: "{}", doneAt: 1252 };
    expect(loadResponse(times, { answer })).toEqual({
      dueMs: 250,
      latencyMs: 2,
      sendLagMs: expect.closeTo(0.4, 9),
      status: 200,
      headers: { "x-served-by": "cache" },
      body: "{}",
    });
  });

  it("accounts a failure as status 0 with the error's code and message, timed to when it failed", () => {
    const error = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:9"), { code: "ECONNREFUSED" });
    const r = loadResponse(times, { error, failedAt: 1260 });
    expect(r).toMatchObject({ dueMs: 250, latencyMs: 10, status: 0, headers: {}, body: "" });
    expect(r.error).toBe("ECONNREFUSED connect ECONNREFUSED 127.0.0.1:9");
    expect(loadResponse(times, { error: new Error("timeout"), failedAt: 1251 }).error).toBe("timeout");
  });

  it("counts no negative send lag (a closed loop sends when it decides to)", () => {
    const answer = { status: 200, headers: {}, text: "", doneAt: 5 };
    expect(loadResponse({ startedAt: 0, dueAt: 3, sentAt: 3 }, { answer }).sendLagMs).toBe(0);
  });
});

describe("headerValue", () => {
  it("gives a header's first value", () => {
    expect(headerValue({ a: "1", b: ["2", "3"] }, "a")).toBe("1");
    expect(headerValue({ a: "1", b: ["2", "3"] }, "b")).toBe("2");
    expect(headerValue({}, "c")).toBeUndefined();
  });
});
