import { describe, expect, it } from "vitest";
import { codeBlocks } from "./markdown-blocks.ts";

describe("codeBlocks", () => {
  it("reads fenced blocks with their language, info string, line and nearest heading", () => {
    const md = [
      "# Title",
      "",
      "## Quick start",
      "```sh quickstart",
      "npm start",
      "# a comment, not a heading",
      "```",
      "",
      "~~~~text output",
      "ready",
      "```",
      "~~~~",
      "### After",
      "  ```",
      "  indented",
      "  ```",
    ].join("\n");
    expect(codeBlocks(md)).toEqual([
      {
        lang: "sh",
        info: "quickstart",
        text: "npm start\n# a comment, not a heading\n",
        line: 4,
        heading: "Quick start",
      },
      { lang: "text", info: "output", text: "ready\n```\n", line: 9, heading: "Quick start" },
      { lang: "", info: "", text: "indented\n", line: 14, heading: "After" },
    ]);
  });

  it("an unclosed block runs to the end; no blocks, none", () => {
    expect(codeBlocks("# H\n```json\n{}")).toEqual([{ lang: "json", info: "", text: "{}\n", line: 2, heading: "H" }]);
    expect(codeBlocks("plain text\n")).toEqual([]);
  });
});
