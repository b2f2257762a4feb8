import type { Command } from "../cli/command.ts";
import { checkCommand } from "./check/command.ts";
import { figuresCommand } from "./figures/command.ts";
import { importCommand } from "./import/command.ts";
import { inspectCommand } from "./onnx/inspect-command.ts";
import { publishCommand } from "./publish/command.ts";
import { quantizeCommand } from "./quantize/command.ts";
import { keygenCommand } from "./signing/keygen-command.ts";
import { signCommand } from "./signing/sign-command.ts";

/** The subcommands of `npm run model`, in the order `--help` lists them. A new one is one more entry here. */
export const COMMANDS: readonly Command[] = [
  importCommand,
  quantizeCommand,
  inspectCommand,
  checkCommand,
  keygenCommand,
  signCommand,
  publishCommand,
  figuresCommand,
];
