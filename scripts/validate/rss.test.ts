import { describe, expect, it } from "vitest";
import { rssFromStatus } from "./rss.ts";

describe("rssFromStatus", () => {
  it("reads VmRSS in kB as bytes", () => {
    expect(rssFromStatus("Name:\tnode\nVmPeak:\t 999 kB\nVmRSS:\t   81234 kB\nThreads:\t7\n")).toBe(81234 * 1024);
  });

  it("is undefined without the line (a kernel thread, a zombie)", () => {
    expect(rssFromStatus("Name:\tkthreadd\nState:\tS\n")).toBeUndefined();
  });
});
