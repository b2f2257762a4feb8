/** The docs as what the docs run reads: shell blocks and inline code spans, and the commands in them. */
import { codeBlocks } from "../../support/markdown-blocks.ts";
import { inlineCode, type SimpleCommand, simpleCommands } from "./shell-words.ts";

export interface DocFile {
  /** Relative to the repository root, e.g. docs/deploy.md. */
  path: string;
  markdown: string;
}

export const SHELL_LANGS = new Set(["sh", "bash", "shell", "console"]);

export interface Item {
  where: string;
  text: string;
  /** A fenced block (commands) or an inline span (a command, a name or a path). */
  kind: "block" | "inline";
}

export function itemsOf(docs: readonly DocFile[]): Item[] {
  const items: Item[] = [];
  for (const doc of docs) {
    for (const block of codeBlocks(doc.markdown)) {
      if (SHELL_LANGS.has(block.lang))
        items.push({ where: `${doc.path}:${block.line}`, text: block.text, kind: "block" });
    }
    for (const span of inlineCode(doc.markdown))
      items.push({ where: `${doc.path} \`${span}\``, text: span, kind: "inline" });
  }
  return items;
}

export function commandsOf(docs: readonly DocFile[]): { where: string; command: SimpleCommand; kind: Item["kind"] }[] {
  return itemsOf(docs).flatMap((item) =>
    simpleCommands(item.text).map((command) => ({ where: item.where, command, kind: item.kind })),
  );
}
