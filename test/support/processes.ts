export { childPids, descendants, freePort, isRunning } from "../../tools/local-stack/processes.ts";
