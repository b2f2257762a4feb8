import { describe, expect, it } from "vitest";
import { chooseProvider, type ExecutionProvider, providerCandidates } from "./execution-provider.ts";

/** An attempt that succeeds only for the providers listed. */
const only =
  (...working: ExecutionProvider[]) =>
  async (provider: ExecutionProvider) => {
    if (!working.includes(provider)) throw new Error(`${provider} failed to load`);
  };

describe("providerCandidates", () => {
  it.each([
    ["auto", ["cuda", "cpu"]],
    ["cuda", ["cuda"]],
    ["cpu", ["cpu"]],
  ] as const)("%s -> %j", (choice, expected) => {
    expect(providerCandidates(choice)).toEqual(expected);
  });
});

describe("chooseProvider", () => {
  it("auto takes cuda when it loads", async () => {
    expect(await chooseProvider("auto", only("cuda", "cpu"))).toEqual({ provider: "cuda" });
  });

  it("auto falls back to cpu and says why", async () => {
    expect(await chooseProvider("auto", only("cpu"))).toEqual({
      provider: "cpu",
      fallbackReason: "cuda: cuda failed to load",
    });
  });

  it("an explicit cuda that fails is an error naming the cause, not a quiet cpu", async () => {
    await expect(chooseProvider("cuda", only("cpu"))).rejects.toThrow(
      "--ep cuda: no execution provider could create a session (cuda: cuda failed to load)",
    );
  });

  it("cpu never tries cuda", async () => {
    const tried: ExecutionProvider[] = [];
    await chooseProvider("cpu", async (p) => {
      tried.push(p);
    });
    expect(tried).toEqual(["cpu"]);
  });
});
