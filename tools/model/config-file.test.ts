import {
  closeSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readIfPresent, readIfPresentSync, subdirectories, writeConfig } from "./config-file.ts";

const dirs: string[] = [];
const scratch = () => {
  const dir = mkdtempSync(join(tmpdir(), "config-file-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("reading: only a path that does not exist is absent", () => {
  it("reads a file, and nothing for a missing one or one under a file", async () => {
    const dir = scratch();
    writeFileSync(join(dir, "config.json"), "{}");
    writeFileSync(join(dir, "README"), "not a model");
    expect(await readIfPresent(join(dir, "config.json"))).toBe("{}");
    expect(readIfPresentSync(join(dir, "config.json"))).toBe("{}");
    expect(await readIfPresent(join(dir, "missing", "config.json"))).toBeUndefined();
    expect(readIfPresentSync(join(dir, "README", "config.json"))).toBeUndefined();
    expect(await subdirectories(join(dir, "missing"))).toEqual([]);
  });

  it("throws, naming the path, for one that exists but cannot be read", async () => {
    // Root reads through permissions, so the failure here is another than EACCES: a directory where the file is,
    // or a link that loops. Each is a config that is there and unreadable, never "no model".
    const dir = scratch();
    mkdirSync(join(dir, "config.json"));
    symlinkSync("loop", join(dir, "loop"));
    await expect(readIfPresent(join(dir, "config.json"))).rejects.toThrow(
      `cannot read ${join(dir, "config.json")}: EISDIR`,
    );
    expect(() => readIfPresentSync(join(dir, "loop"))).toThrow(`cannot read ${join(dir, "loop")}: ELOOP`);
    await expect(subdirectories(join(dir, "loop"))).rejects.toThrow(/ELOOP/);
  });
});

describe("writeConfig", () => {
  it("writes the JSON whole, leaving no temporary file", async () => {
    const dir = scratch();
    const path = join(dir, "config.json");
    writeFileSync(path, "old");
    await writeConfig(path, { name: "digits", versions: {} });
    expect(readFileSync(path, "utf8")).toBe('{\n  "name": "digits",\n  "versions": {}\n}\n');
    expect(readdirSync(dir)).toEqual(["config.json"]);
  });

  it("replaces the file rather than rewriting it: a reader that opened the old one reads it whole", async () => {
    const dir = scratch();
    const path = join(dir, "config.json");
    writeFileSync(path, '{"version": "1"}');
    const reader = openSync(path, "r");
    try {
      await writeConfig(path, { version: "2" });
      expect(readFileSync(reader, "utf8")).toBe('{"version": "1"}');
    } finally {
      closeSync(reader);
    }
    expect(JSON.parse(readFileSync(path, "utf8"))).toEqual({ version: "2" });
  });

  it("leaves the old file as it was when the write fails", async () => {
    const dir = scratch();
    const path = join(dir, "config.json");
    writeFileSync(path, "old");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    await expect(writeConfig(path, cyclic)).rejects.toThrow(/circular/);
    mkdirSync(join(dir, "taken"));
    await expect(writeConfig(join(dir, "taken"), {})).rejects.toThrow(/EISDIR|EEXIST|ENOTEMPTY/);
    expect(readFileSync(path, "utf8")).toBe("old");
    expect(readdirSync(dir).sort()).toEqual(["config.json", "taken"]);
  });
});
