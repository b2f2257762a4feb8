/**
 * The simple commands of a shell text, as words, for the docs' checks: quotes removed, `$(...)` and backticks
 * read as commands of their own, comments dropped, lines joined at a trailing backslash, split at `|`, `||`,
 * `&&`, `;`, `&`, newlines and the keywords that start a compound command's body. Not a shell: enough of one
 * for the commands docs write (no heredoc bodies are parsed as commands).
 */

export interface SimpleCommand {
  /** Leading `NAME=value` assignments (environment for the command, or shell variables). */
  assignments: { name: string; value: string }[];
  /** The words after them; `sudo` and `env` are dropped, so words[0] is the program. */
  words: string[];
}

const OPERATORS = new Set(["|", "||", "&&", ";", "&", "\n", ";;"]);
const KEYWORDS = new Set(["do", "then", "else", "elif", "{", "(", "!", "time", "}", ")", "done", "fi"]);

function tokens(text: string, nested: string[]): string[] {
  const out: string[] = [];
  let word = "";
  let inWord = false;
  const flush = () => {
    if (inWord) out.push(word);
    word = "";
    inWord = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === "\\" && text[i + 1] === "\n") {
      i++;
      continue;
    }
    if (c === "\\" && i + 1 < text.length) {
      word += text[++i];
      inWord = true;
      continue;
    }
    if (c === "'") {
      const end = text.indexOf("'", i + 1);
      word += text.slice(i + 1, end < 0 ? text.length : end);
      inWord = true;
      i = end < 0 ? text.length : end;
      continue;
    }
    if (c === "$" && text[i + 1] === "(") {
      let depth = 1;
      let j = i + 2;
      for (; j < text.length && depth > 0; j++) {
        if (text[j] === "(") depth++;
        else if (text[j] === ")") depth--;
      }
      nested.push(text.slice(i + 2, j - 1));
      word += "$(…)";
      inWord = true;
      i = j - 1;
      continue;
    }
    if (c === '"') {
      let j = i + 1;
      for (; j < text.length && text[j] !== '"'; j++) {
        if (text[j] === "\\") {
          word += text[++j];
          continue;
        }
        if (text[j] === "$" && text[j + 1] === "(") {
          let depth = 1;
          let k = j + 2;
          for (; k < text.length && depth > 0; k++) {
            if (text[k] === "(") depth++;
            else if (text[k] === ")") depth--;
          }
          nested.push(text.slice(j + 2, k - 1));
          word += "$(…)";
          j = k - 1;
          continue;
        }
        word += text[j];
      }
      inWord = true;
      i = j;
      continue;
    }
    if (c === "#" && !inWord) {
      const end = text.indexOf("\n", i);
      i = end < 0 ? text.length : end - 1;
      continue;
    }
    if (c === "\n" || c === ";" || c === "|" || c === "&") {
      flush();
      const two = text.slice(i, i + 2);
      if (two === "||" || two === "&&" || two === ";;") {
        out.push(two);
        i++;
      } else out.push(c);
      continue;
    }
    if (c === " " || c === "\t") {
      flush();
      continue;
    }
    const angle = c === "<" ? /^<[\w .,/:@-]*>/.exec(text.slice(i)) : null;
    if (angle) {
      // A placeholder such as <env>, not a redirection.
      word += angle[0];
      inWord = true;
      i += angle[0].length - 1;
      continue;
    }
    if ((c === ">" || c === "<") && !inWord) {
      // A redirection: its target is not a word of the command.
      flush();
      let j = i + 1;
      if (text[j] === ">" || text[j] === "&") j++;
      while (text[j] === " ") j++;
      while (j < text.length && !/[\s;|&]/.test(text[j]!)) j++;
      i = j - 1;
      continue;
    }
    word += c;
    inWord = true;
  }
  flush();
  return out;
}

/** The simple commands of `text`, those inside `$(...)` after the ones around them. */
export function simpleCommands(text: string): SimpleCommand[] {
  const nested: string[] = [];
  const words = tokens(text, nested);
  const commands: SimpleCommand[] = [];
  let current: string[] = [];
  const end = () => {
    const assignments: SimpleCommand["assignments"] = [];
    let rest = current;
    while (rest.length && KEYWORDS.has(rest[0]!)) rest = rest.slice(1);
    if (rest[0] === "export") rest = rest.slice(1);
    while (rest.length && /^[A-Za-z_]\w*=/.test(rest[0]!)) {
      const [name, ...value] = rest[0]!.split("=");
      assignments.push({ name: name!, value: value.join("=") });
      rest = rest.slice(1);
    }
    while (rest[0] === "sudo" || rest[0] === "env" || rest[0] === "exec") rest = rest.slice(1);
    if (rest[0] === "for" || rest[0] === "while" || rest[0] === "if") rest = [];
    if (assignments.length || rest.length) commands.push({ assignments, words: rest });
    current = [];
  };
  for (const w of words) {
    if (OPERATORS.has(w)) end();
    else current.push(w);
  }
  end();
  for (const inner of nested) commands.push(...simpleCommands(inner));
  return commands;
}

/** The inline code spans of a markdown text outside its fenced blocks (a span may wrap to the next line). */
export function inlineCode(markdown: string): string[] {
  const prose: string[] = [];
  let fenced = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced) prose.push(line);
  }
  const spans: string[] = [];
  for (const paragraph of prose.join("\n").split(/\n\s*\n/)) {
    for (const m of paragraph.replace(/\s*\n\s*/g, " ").matchAll(/(`+)([^`]+?)\1/g)) spans.push(m[2]!.trim());
  }
  return spans;
}
