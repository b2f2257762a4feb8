/** A mistake in the command line (unknown flag, bad value, missing argument): exit code 2, with a pointer to `--help`. */
export class UsageError extends Error {}

/**
 * A refusal with a message saying what to fix (a file that does not load, shapes that do not match, bad
 * data): printed as it is, exit code 1.
 */
export class RefusedError extends Error {}
