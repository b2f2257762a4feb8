/** Structured logging: one JSON object per line, so log shippers need no parser. */
export type LogLevel = "info" | "warn" | "error";
export type LogFields = Record<string, unknown>;
export type Logger = (level: LogLevel, msg: string, fields?: LogFields) => void;

/** A logger writing JSON lines with `time`, `level`, `msg`, the `base` fields and the call's own. */
export function jsonLogger(
  base: LogFields,
  write: (line: string) => void = (line) => process.stdout.write(line),
): Logger {
  return (level, msg, fields) => {
    write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...base, ...fields })}\n`);
  };
}
