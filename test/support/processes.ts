export { childPids, descendants, freePort, isRunning } from "../../scripts/stack/processes.ts";
