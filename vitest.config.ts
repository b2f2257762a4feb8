import { defineConfig } from "vitest/config";

// Suites by layer (docs/architecture.md): pure unit tests beside the code; integration suites under test/.
// Groups run one after another, so that the timing-sensitive server suites do not share the 2 cores with
// each other. Vitest's default is one file at a time on 2 cores (cores - 1 workers); group 0 has no timing-
// sensitive server suite, so it runs two files at a time: the image build (mostly waiting on npm and apt
// inside buildah) overlaps the other files instead of leaving a core idle.
const GROUP_0_WORKERS = 2;
// Every project runs its files without a fresh module graph each (`isolate: false`): a worker imports Vitest,
// onnxruntime, Miniflare and wrangler once rather than once per file, which cost 1-2 s per server suite and
// most of the unit run. Files still start and stop their own servers; the few that stub globals, spy on
// console or set process.env undo it in afterEach/afterAll.
const ISOLATE = false;

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["{protocol,hono-shared,edge,regional,tools,scripts,test/support}/**/*.test.ts"],
          sequence: { groupOrder: 0 },
          isolate: ISOLATE,
          maxWorkers: GROUP_0_WORKERS,
        },
      },
      {
        test: {
          name: "models",
          include: ["test/models/**/*.test.ts"],
          testTimeout: 60_000,
          sequence: { groupOrder: 0 },
          isolate: ISOLATE,
          maxWorkers: GROUP_0_WORKERS,
        },
      },
      {
        test: {
          // What runs the system beyond one machine: the image recipe, the manifests, the alerting rules.
          name: "deploy",
          include: ["test/deploy/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          sequence: { groupOrder: 0 },
          isolate: ISOLATE,
          maxWorkers: GROUP_0_WORKERS,
        },
      },
      {
        test: {
          name: "regional",
          include: ["test/regional/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          sequence: { groupOrder: 1 },
          isolate: ISOLATE,
        },
      },
      {
        test: {
          name: "validate",
          include: ["test/validate/**/*.test.ts"],
          testTimeout: 60_000,
          sequence: { groupOrder: 1 },
          isolate: ISOLATE,
        },
      },
      {
        test: {
          name: "edge",
          include: ["test/edge/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
          // One wrangler build for the whole run; files one at a time (each starts workerd and pools).
          globalSetup: ["test/edge/global-setup.ts"],
          fileParallelism: false,
          sequence: { groupOrder: 2 },
          isolate: ISOLATE,
        },
      },
      {
        test: {
          name: "e2e",
          include: ["test/e2e/**/*.test.ts"],
          testTimeout: 120_000,
          hookTimeout: 240_000,
          // Each file runs a whole `npm start` stack (three pools and workerd): one at a time on 2 cores.
          fileParallelism: false,
          sequence: { groupOrder: 3 },
          isolate: ISOLATE,
        },
      },
    ],
  },
});
