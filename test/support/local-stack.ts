export { type LocalStack, startLocalStack } from "../../scripts/stack/npm-start.ts";
