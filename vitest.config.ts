import { defineConfig } from 'vitest/config';

// Integration and e2e files each start their own nats-server; two cores cannot run many at once.
// One project per test tier (the file suffix): `vitest run --project unit` runs only the pure tests.
const tiers = ['unit', 'int', 'e2e'] as const;

export default defineConfig({
  test: {
    testTimeout: 120_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
    fileParallelism: true,
    globalSetup: ['test/support/e2eRunDir.ts'],
    projects: tiers.map((tier) => ({ extends: true, test: { name: tier, include: [`test/**/*.${tier}.test.ts`] } })),
  },
});
