import { defineConfig } from "vitest/config";

// Suites by layer (docs/architecture.md): pure unit tests beside the code; integration suites under test/.
// Groups run one after another so that timing-sensitive server suites do not share the 2 cores with others.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["{protocol,edge,regional,scripts}/**/*.test.ts"],
          sequence: { groupOrder: 0 },
        },
      },
      {
        test: {
          name: "models",
          include: ["test/models/**/*.test.ts"],
          testTimeout: 60_000,
          sequence: { groupOrder: 0 },
        },
      },
    ],
  },
});
