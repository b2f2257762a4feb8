/** One fenced code block of a Markdown document. */
export interface CodeBlock {
  /** The info string's first word (`sh`, `json`); "" when the fence has none. */
  lang: string;
  /** The rest of the info string after the language, trimmed (`quickstart`, `output`). */
  info: string;
  /** The block's content, without the fences, ending in a newline unless empty. */
  text: string;
  /** 1-based line of the opening fence. */
  line: number;
  /** The nearest ATX heading above the block, without its #s ("" before any). */
  heading: string;
}

/**
 * The fenced code blocks of `markdown` in order (CommonMark fences: three or more backticks or tildes, closed by a
 * fence of the same character at least as long; indented up to three spaces). Headings inside blocks are not
 * headings. A block left open runs to the end of the document, as CommonMark reads it.
 */
export function codeBlocks(markdown: string): CodeBlock[] {
  const blocks: CodeBlock[] = [];
  const lines = markdown.split(/\r?\n/);
  let heading = "";
  let open: { fence: string; lang: string; info: string; line: number; indent: number; body: string[] } | undefined;
  for (const [i, raw] of lines.entries()) {
    if (open) {
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(raw);
      if (close && close[1]![0] === open.fence[0] && close[1]!.length >= open.fence.length) {
        blocks.push(finish(open, heading));
        open = undefined;
      } else {
        // Content lines lose up to the opening fence's indentation, as CommonMark says.
        open.body.push(raw.replace(new RegExp(`^ {0,${open.indent}}`), ""));
      }
      continue;
    }
    const fence = /^( {0,3})(`{3,}|~{3,})\s*([^`]*?)\s*$/.exec(raw);
    if (fence) {
      const [lang = "", ...rest] = fence[3]!.split(/\s+/).filter(Boolean);
      open = { fence: fence[2]!, lang, info: rest.join(" "), line: i + 1, indent: fence[1]!.length, body: [] };
      continue;
    }
    const atx = /^ {0,3}#{1,6}\s+(.*?)(?:\s+#+)?\s*$/.exec(raw);
    if (atx) heading = atx[1]!;
  }
  if (open) blocks.push(finish(open, heading));
  return blocks;
}

function finish(open: { lang: string; info: string; line: number; body: string[] }, heading: string): CodeBlock {
  const text = open.body.length === 0 ? "" : `${open.body.join("\n")}\n`;
  return { lang: open.lang, info: open.info, text, line: open.line, heading };
}
