import { createHash } from "node:crypto";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { toolchainNodeVersion, verifiedCacheEntry } from "./local-base.ts";

const dir = mkdtempSync(join(tmpdir(), "edgecascade-cache-test-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("verifiedCacheEntry", () => {
  it("takes a cached file only while it matches the sha256 written beside it", async () => {
    const file = join(dir, "bookworm-minbase-2026w49.tar");
    writeFileSync(file, "a tarball");
    expect(await verifiedCacheEntry(file)).toBeNull();
    const digest = createHash("sha256").update("a tarball").digest("hex");
    writeFileSync(`${file}.sha256`, `${digest}\n`);
    expect(await verifiedCacheEntry(file)).toBe(digest);
    appendFileSync(file, ", altered");
    expect(await verifiedCacheEntry(file)).toBeNull();
    expect(await verifiedCacheEntry(join(dir, "absent.tar"))).toBeNull();
  });
});

describe("toolchainNodeVersion", () => {
  it("is the Node 24 that scripts/node-toolchain.sh installs, so the local base runs what CI runs", async () => {
    expect(await toolchainNodeVersion()).toMatch(/^24\.\d+\.\d+$/);
  });
});
