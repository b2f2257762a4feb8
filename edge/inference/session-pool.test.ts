import { afterEach, describe, expect, it, vi } from "vitest";
import { edgeSessionBytes, type PooledModel, replacementRate, SessionPool } from "./session-pool.ts";

const MB = 2 ** 20;

/** A model counted as `mb`, whose evictions are recorded. */
function model(name: string, mb: number, evicted: string[]): PooledModel {
  return { name, bytes: mb * MB, evict: async () => void evicted.push(name) };
}

afterEach(() => vi.restoreAllMocks());

describe("edgeSessionBytes", () => {
  it("counts a session's fixed cost and four times its file", () => {
    expect(edgeSessionBytes(0)).toBe(64 * 1024);
    expect(edgeSessionBytes(3413)).toBe(64 * 1024 + 4 * 3413);
  });
});

describe("SessionPool", () => {
  it("evicts the least recently used sessions to make room, logging each with why", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const evicted: string[] = [];
    const pool = new SessionPool(10 * MB);
    const [a, b, c, d] = [
      model("a", 4, evicted),
      model("b", 4, evicted),
      model("c", 2, evicted),
      model("d", 6, evicted),
    ];
    for (const m of [a, b, c]) await pool.create(m!, async () => m!.name);
    expect(pool.snapshot()).toEqual({
      budgetBytes: 10 * MB,
      residentBytes: 10 * MB,
      resident: 3,
      created: 3,
      evictions: 0,
      deferred: 0,
      onRequestPath: 0,
    });
    pool.touch(a!); // b is now the least recently used, then c
    expect(await pool.create(d!, async () => "d")).toBe("d");
    expect(evicted).toEqual(["b", "c"]);
    expect(pool.snapshot()).toMatchObject({ residentBytes: 10 * MB, resident: 2, evictions: 2 });
    expect(JSON.parse(log.mock.calls[0]![0] as string)).toEqual({
      msg: "edge session evicted",
      model: "b",
      reason: "least recently used; room for d (6.00 MB) within EDGE_SESSION_MEMORY_MB",
    });
  });

  it("a creation that fails leaves nothing resident and evicts what it had to before it ran", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const evicted: string[] = [];
    const pool = new SessionPool(5 * MB);
    await pool.create(model("a", 4, evicted), async () => "a");
    await expect(
      pool.create(model("b", 4, evicted), async () => Promise.reject(new Error("bad file"))),
    ).rejects.toThrow("bad file");
    expect(evicted).toEqual(["a"]);
    expect(pool.snapshot()).toMatchObject({ residentBytes: 0, resident: 0, created: 1 });
  });

  it("creations run one at a time, each seeing the room the one before left", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const evicted: string[] = [];
    const pool = new SessionPool(8 * MB);
    let most = 0;
    const make = async () => {
      most = Math.max(most, pool.usedBytes());
    };
    await Promise.all(["a", "b", "c", "d"].map((n) => pool.create(model(n, 4, evicted), make)));
    expect(most).toBeLessThanOrEqual(8 * MB);
    expect(evicted).toEqual(["a", "b"]);
  });

  it("refuses a session larger than the whole budget", async () => {
    const pool = new SessionPool(1 * MB);
    await expect(pool.create(model("big", 2, []), async () => "big")).rejects.toThrow(
      "big: no room within EDGE_SESSION_MEMORY_MB: it needs 2.0 MB, more than the whole budget of 1.0 MB",
    );
  });
});

describe("SessionPool.admits", () => {
  it("admits a model while it fits; past the budget, one asked for more often lately than the session it would evict", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const pool = new SessionPool(8 * MB);
    const [a, b, c] = [model("a", 4, []), model("b", 4, []), model("c", 4, [])];
    expect(pool.admits(a!, 0)).toBe(true);
    await pool.create(a!, async () => "a");
    await pool.create(b!, async () => "b");
    for (let i = 0; i < 2; i++) pool.touch(a!); // a: 3 requests, b: none since, the least recently used
    pool.touch(b!);
    pool.touch(a!); // now b is the least recently used, asked for once
    // Full: c's first request is no more than b's one; its second is more.
    expect(pool.admits(c!, 0)).toBe(false);
    expect(pool.admits(c!, 0)).toBe(true);
  });

  it("past the budget, admits no more creations in place of others than EDGE_SESSION_REPLACEMENTS_PER_SECOND, logged at most every 10 s", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const pool = new SessionPool(4 * MB, replacementRate(2));
    await pool.create(model("resident", 4, []), async () => "resident");
    // Models each asked for more often than the resident one: TinyLFU admits every one; the rate, 2 a second.
    const asked = (name: string, at: number) => {
      const m = model(name, 4, []);
      pool.touch(m);
      pool.touch(m);
      return pool.admits(m, at);
    };
    expect([0, 1, 2, 3].map((i) => asked(`m${i}`, 1000))).toEqual([true, true, false, false]);
    expect(asked("m4", 1250)).toBe(false); // half a token back
    expect(asked("m5", 1500)).toBe(true); // one token back after 500 ms
    expect(pool.snapshot()).toMatchObject({ deferred: 3, created: 1 });
    const deferred = log.mock.calls
      .map(([line]) => JSON.parse(line as string))
      .filter((l) => l.msg === "edge session deferred");
    expect(deferred).toEqual([
      {
        msg: "edge session deferred",
        model: "m2",
        reason:
          "more than EDGE_SESSION_REPLACEMENTS_PER_SECOND (2/s) sessions created in place of others; answered without one",
        deferred: 1,
      },
    ]);
    // Within the budget the rate does not apply.
    const roomy = new SessionPool(100 * MB, replacementRate(0));
    expect([0, 1, 2].map((i) => roomy.admits(model(`r${i}`, 4, []), 0))).toEqual([true, true, true]);
    // At 0 a second, nothing past the budget is created after an answer.
    const none = new SessionPool(4 * MB, replacementRate(0));
    await none.create(model("resident", 4, []), async () => "resident");
    const popular = model("popular", 4, []);
    for (let i = 0; i < 5; i++) none.touch(popular);
    expect(none.admits(popular, 0)).toBe(false);
  });

  it("a session a request waits for is counted and logged, and takes from the rate what it has", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {});
    const pool = new SessionPool(4 * MB, replacementRate(1));
    await pool.create(model("resident", 4, []), async () => "resident");
    pool.createsOnRequestPath(model("tail", 4, []), 0, "no region answered (regions-failed)");
    expect(pool.snapshot()).toMatchObject({ onRequestPath: 1 });
    expect(JSON.parse(log.mock.calls.at(-1)![0] as string)).toEqual({
      msg: "edge session on the request path",
      model: "tail",
      reason: "no region answered (regions-failed)",
    });
    // The one token of this second went to it: a creation after an answer waits for the next.
    const next = model("next", 4, []);
    for (let i = 0; i < 3; i++) pool.touch(next);
    expect(pool.admits(next, 0)).toBe(false);
    expect(pool.admits(next, 1000)).toBe(true);
  });
});

describe("SessionPool.retire", () => {
  it("releases a replaced model's session, not as an eviction; its successor keeps its popularity", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const evicted: string[] = [];
    const pool = new SessionPool(8 * MB);
    const [old, other] = [model("a", 4, evicted), model("b", 4, evicted)];
    await pool.create(old!, async () => "a");
    await pool.create(other!, async () => "b");
    for (let i = 0; i < 3; i++) pool.touch(old!);
    await pool.retire(old!);
    expect(evicted).toEqual(["a"]);
    expect(pool.snapshot()).toMatchObject({ residentBytes: 4 * MB, resident: 1, evictions: 0 });
    await pool.retire(old!); // no session any more: nothing to release
    expect(evicted).toEqual(["a"]);
    // The variant that replaced it (same name) is admitted past the budget on the requests made of "a".
    await pool.create(model("c", 4, evicted), async () => "c");
    expect(pool.admits(model("a", 4, evicted), 0)).toBe(true);
  });
});
