export { type LocalStack, startLocalStack } from "../../tools/local-stack/npm-start.ts";
